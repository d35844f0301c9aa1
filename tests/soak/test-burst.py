#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bursts of connections: a node keeps accepting.

wrk opens CONNECTIONS keep-alive connections to one node, sends GETs on
all of them as fast as they are answered, and after SECONDS exits with a
request in flight on each (its sockets closed or reset under the node's
answers). ROUNDS times in a row. After each burst a new connection must
be answered (/healthz, 10 s at most): under libmicrohttpd's epoll loop the
node fell silent from about the fourth burst on, for tens of seconds,
/healthz included, as the connections closed mid-request still counted
against --max-connections (server/daemon.c). Every burst must also have
answered some requests, and none with a failure.

Usage: test-burst.py CONFIGFSD. The node is tests/cluster/cluster.py's
Node on its own SQLite file; wrk comes from Debian, installed if missing
(without it the test is skipped). TAP.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "cluster"))
from cluster import Node, need_wrk  # noqa: E402

ROUNDS, SECONDS, CONNECTIONS, LIMIT = 8, 2, 384, 512

LUA = """
ok, bad = 0, 0
local threads = {}
setup = function(t) table.insert(threads, t) end
response = function(status, headers, body)
  if status == 200 then ok = ok + 1 else bad = bad + 1 end
end
done = function(summary, latency, requests)
  local o, b = 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); b = b + t:get("bad") end
  io.write(string.format("RESULT ok=%d bad=%d\\n", o, b))
end
"""


def healthz(node):
    try:
        return node.req("GET", "/healthz", timeout=10)[0]
    except OSError as e:
        return "%s" % e


def main():
    if not need_wrk():
        print("1..0 # SKIP wrk is missing and could not be installed")
        return 0
    tmp = tempfile.mkdtemp(prefix="configfsd-burst-")
    node = Node(sys.argv[1], tmp, "burst", None,
                ["--max-connections", str(LIMIT)])
    lua = os.path.join(tmp, "burst.lua")
    with open(lua, "w") as f:
        f.write(LUA)
    failed = 0
    try:
        node.start()
        print("1..%d" % ROUNDS)
        for k in range(1, ROUNDS + 1):
            out = subprocess.run(
                ["wrk", "-t1", "-c%d" % CONNECTIONS, "-d%ds" % SECONDS,
                 "--timeout", "10s", "-s", lua, node.url("/api/v1")],
                capture_output=True, text=True, timeout=SECONDS + 60).stdout
            m = re.search(r"RESULT ok=(\d+) bad=(\d+)", out)
            ok, bad = (int(m.group(1)), int(m.group(2))) if m else (0, -1)
            st = healthz(node)
            if ok > 0 and bad == 0 and st == 200:
                print("ok %d - burst %d of %d connections: %d answered, "
                      "then a new connection is answered" % (
                          k, k, CONNECTIONS, ok))
            else:
                failed += 1
                print("not ok %d - burst %d of %d connections: %d answered, "
                      "%s failed; /healthz afterwards: %s" % (
                          k, k, CONNECTIONS, ok, bad, st))
    finally:
        node.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
