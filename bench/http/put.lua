-- Every request stores a value different from the one before it, so each
-- one really writes (SQLite skips a page write for identical bytes). The
-- requests are built once per thread, so that the load generator, which
-- shares the CPUs with the server, spends as little as it can per request.
local reqs, n, i = {}, 1000, 0
init = function()
  for k = 1, n do
    reqs[k] = wrk.format("PUT", nil, nil, tostring(k))
  end
end
request = function()
  i = i % n + 1
  return reqs[i]
end
