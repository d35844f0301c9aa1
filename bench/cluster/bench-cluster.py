#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cluster benchmark (docs/cluster.md): durable PUTs per second, measured
in one run against baselines of the same run (read the ratios, the
machines are shared and noisy):
  etcd put      POST /v3/kv/put of one key through etcd's JSON gateway
  1 node        PUT of an attribute on one configfsd node on etcd
  3 nodes       the same on three nodes at once (sum)
  sqlite        one configfsd on SQLite (synchronous=FULL)
wrk with CONNECTIONS connections in all (split over the nodes).
Usage: bench-cluster.py CONFIGFSD [SECONDS] [CONNECTIONS]
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "cluster"))
from cluster import Cluster, Node, wait_for  # noqa: E402

PUT_LUA = """
local reqs, n, i = {}, 1000, 0
init = function()
  for k = 1, n do reqs[k] = wrk.format("PUT", nil, nil, tostring(k)) end
end
request = function() i = i % n + 1; return reqs[i] end
"""
ETCD_LUA = """
local reqs, n, i = {}, 1000, 0
init = function()
  for k = 1, n do
    reqs[k] = wrk.format("POST", nil, nil,
      '{"key":"YmVuY2g=","value":"' .. tostring(k) .. '"}')
  end
end
request = function() i = i % n + 1; return reqs[i] end
"""


def wrk(urls, secs, conns, lua):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(lua)
    procs = [subprocess.Popen(
        ["wrk", "-t1", "-c%d" % max(1, conns // len(urls)), "-d%ds" % secs,
         "-s", f.name, u], stdout=subprocess.PIPE, text=True) for u in urls]
    total, errs = 0.0, 0
    for p in procs:
        out = p.communicate()[0]
        total += float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        errs += int(m.group(1)) if m else 0
    os.unlink(f.name)
    return total, errs


def main():
    binary = sys.argv[1]
    secs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    conns = int(sys.argv[3]) if len(sys.argv) > 3 else 48
    c = Cluster(binary)
    sq = None
    try:
        c.start()
        for i, n in enumerate(c.nodes):
            st = n.req("POST", "/api/v1/config/02-simple-children",
                       {"name": "b%d" % i})[0]
            assert st == 201, st
        attr = "/api/v1/config/02-simple-children/b%d/storeme"
        etcd, e_err = wrk(["http://127.0.0.1:%d/v3/kv/put"
                           % c.etcd.client[0]], secs, conns, ETCD_LUA)
        one, o_err = wrk([c.nodes[0].url(attr % 0)], secs, conns, PUT_LUA)
        three, t_err = wrk([n.url(attr % i) for i, n in enumerate(c.nodes)],
                           secs, conns, PUT_LUA)
        sq = Node(binary, c.tmp, "sqlite", None)
        sq.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--db",
             os.path.join(c.tmp, "bench.db"), "--log-level", "warning"],
            stderr=open(sq.log, "wb"), stdout=subprocess.DEVNULL)

        def port():
            with open(sq.log) as f:
                m = re.search(r"\(port (\d+)\)", f.read())
                return int(m.group(1)) if m else None
        sq.port = wait_for(port, 30, "the SQLite node")
        sq.req("POST", "/api/v1/config/02-simple-children", {"name": "b0"})
        sqlite, s_err = wrk([sq.url(attr % 0)], secs, conns, PUT_LUA)
    finally:
        if sq and sq.proc:
            sq.stop()
        c.stop()
    print("etcd put (gateway)      %9.0f /s" % etcd)
    print("1 node on etcd          %9.0f /s  (%d non-2xx)" % (one, o_err))
    print("3 nodes on etcd (sum)   %9.0f /s  (%d non-2xx)" % (three, t_err))
    print("1 node on SQLite        %9.0f /s" % sqlite)
    print("ratio 1 node / etcd put   %.2f" % (one / etcd))
    print("ratio 3 nodes / etcd put  %.2f  (goal >= 2)" % (three / etcd))
    print("ratio 3 nodes / SQLite    %.2f" % (three / sqlite))
    return 0


if __name__ == "__main__":
    sys.exit(main())
