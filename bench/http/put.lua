-- Every request stores a different value, so each one really writes
-- (SQLite skips a page write for identical bytes).
local n = 0
request = function()
  n = n + 1
  return wrk.format("PUT", nil, nil, tostring(n))
end
