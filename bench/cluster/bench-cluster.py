#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cluster benchmark (docs/cluster.md), measured in one run against
baselines of the same run (read the ratios, the machines are shared and
noisy).

Writes, durable PUTs per second:
  etcd put      POST /v3/kv/put through etcd's JSON gateway (base64 key
                and values, as the gateway wants them), measured first
                and again after the other writes; the ratios use the mean
  1 node        PUT of an attribute on one configfsd node on etcd
  3 nodes       the same on three nodes at once (sum)
  3 forwarding  three nodes started with --forward-writes (one appends,
                the others send it their writes), at once (sum)
  to the writer the same three nodes, every write sent to the writer
                (clients that send writes to the writer's URL and read
                anywhere: the others only apply)
  sqlite        one configfsd on SQLite (synchronous=FULL)
Reads, GETs of an attribute per second:
  node N        each node of the 3-node cluster alone, in turn
                (linearizable, the default: each read waits for the
                node to apply what etcd holds when it comes, one quorum
                read shared by the reads queued meanwhile)
  3 nodes       the three at once (sum)
  serializable  node 1 alone, ?consistency=serializable (no etcd read)
  sqlite        the single SQLite node
Every figure counts only the answers that succeeded: 2xx from configfsd,
200 with a put's header (no "error") from etcd. A 503 EAGAIN (a request
that lost every race to the other nodes, as docs/cluster.md says it may)
is counted apart and reported; any other answer or socket error in any
figure makes the run fail, after the table is printed.
wrk with CONNECTIONS connections in all (split over the nodes); latency
percentiles are wrk's (for several nodes at once: the worst node's).
Usage: bench-cluster.py CONFIGFSD [SECONDS] [CONNECTIONS]
"""
import base64
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "cluster"))
from cluster import Cluster, Node, metric, need_wrk, wait_for  # noqa: E402

# One wrk script for every figure: REQUESTS is a Lua table of prebuilt
# requests, cycled through; response() sorts the answers into ok and bad,
# done() prints one line that run_wrk() parses.
LUA = """
local reqs, i = {}, 0
ok, bad, gaveup = 0, 0, 0
local threads = {}
setup = function(t) table.insert(threads, t) end
init = function()
  local bodies = %(bodies)s
  for k = 1, #bodies do
    reqs[k] = wrk.format(%(method)s, nil, %(headers)s, bodies[k])
  end
end
request = function() i = i %% #reqs + 1; return reqs[i] end
response = function(status, headers, body)
  if status >= %(lo)d and status <= %(hi)d and %(check)s then
    ok = ok + 1
  elseif status == 503 and string.find(body or "", '"EAGAIN"', 1, true) then
    gaveup = gaveup + 1 -- lost every race to the other nodes: documented
  else
    bad = bad + 1
    if bad <= 3 then
      io.stderr:write("unexpected answer " .. status .. ": " ..
                      string.sub(body or "", 1, 200) .. "\\n")
    end
  end
end
done = function(summary, latency, requests)
  local o, b, g = 0, 0, 0
  for _, t in ipairs(threads) do
    o = o + t:get("ok"); b = b + t:get("bad"); g = g + t:get("gaveup")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT ok=%%d bad=%%d gaveup=%%d sockerr=%%d us=%%d p50=%%d p99=%%d\\n",
    o, b, g, e.connect + e.read + e.write + e.timeout, summary.duration,
    latency:percentile(50), latency:percentile(99)))
end
"""


def lua_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def script(method, bodies, lo=200, hi=299, check="true", headers=None):
    hdr = "nil"
    if headers:
        hdr = "{" + ", ".join("[%s] = %s" % (lua_str(k), lua_str(v))
                              for k, v in headers.items()) + "}"
    return LUA % {
        "bodies": "{" + ",\n".join(lua_str(b) for b in bodies) + "}",
        "method": lua_str(method), "headers": hdr, "lo": lo, "hi": hi,
        "check": check}


N = 1000
PUT = script("PUT", [str(k) for k in range(1, N + 1)])
GET = script("GET", [""])
B64 = lambda s: base64.b64encode(s.encode()).decode()  # noqa: E731
ETCD = script(
    "POST",
    ['{"key":"%s","value":"%s"}' % (B64("/bench/etcd-put"), B64(str(k)))
     for k in range(1, N + 1)],
    lo=200, hi=200,
    check='string.find(body, \'"header"\', 1, true) ~= nil and '
          'string.find(body, \'"error"\', 1, true) == nil',
    headers={"Content-Type": "application/json"})


class Figure:
    def __init__(self, name, rate, bad, gaveup, p50, p99):
        self.name, self.rate, self.bad = name, rate, bad
        self.gaveup = gaveup
        self.p50, self.p99 = p50, p99


def run_wrk(name, urls, secs, conns, lua):
    """A Figure: successful answers per second summed over @urls, each
    loaded by its own wrk at the same time."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(lua)
    procs = []
    try:
        for u in urls:
            procs.append(subprocess.Popen(
                ["wrk", "-t1", "-c%d" % max(1, conns // len(urls)),
                 "-d%ds" % secs, "--timeout", "10s", "-s", f.name, u],
                stdout=subprocess.PIPE, text=True))
        rate, bad, gaveup, p50, p99 = 0.0, 0, 0, 0, 0
        for p in procs:
            out = p.communicate(timeout=secs + 60)[0]
            m = re.search(r"RESULT ok=(\d+) bad=(\d+) gaveup=(\d+) "
                          r"sockerr=(\d+) us=(\d+) p50=(\d+) p99=(\d+)", out)
            if p.returncode != 0 or not m:
                raise RuntimeError("wrk failed for %s:\n%s" % (name, out))
            ok, b, g, se, us, q50, q99 = (int(x) for x in m.groups())
            rate += ok / (us / 1e6)
            bad += b + se
            gaveup += g
            p50, p99 = max(p50, q50), max(p99, q99)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        os.unlink(f.name)
    fig = Figure(name, rate, bad, gaveup, p50, p99)
    print("  %-28s %9.0f /s  p50 %6.1f ms  p99 %6.1f ms%s%s"
          % (name, rate, p50 / 1e3, p99 / 1e3,
             "  (%d 503 EAGAIN, not counted)" % gaveup if gaveup else "",
             "  (%d FAILED)" % bad if bad else ""), flush=True)
    return fig


def need_tools():
    """etcd and wrk, installed from Debian if missing."""
    if not shutil.which("etcd"):
        subprocess.run([os.path.join(here, "..", "..", "scripts",
                                     "etcd-deps.sh")], check=True)
    if not need_wrk():
        raise RuntimeError("wrk is missing and could not be installed")


def main():
    binary = sys.argv[1]
    secs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    conns = int(sys.argv[3]) if len(sys.argv) > 3 else 48
    # a timeout's SIGTERM still stops etcd and the nodes (finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    need_tools()
    c = Cluster(binary)
    fw = []
    sq = None
    attr = "/api/v1/config/02-simple-children/b%d/storeme"
    figs = {}
    print("%d s per figure, %d connections" % (secs, conns), flush=True)
    try:
        c.start()
        for i, n in enumerate(c.nodes):
            st = n.req("POST", "/api/v1/config/02-simple-children",
                       {"name": "b%d" % i})[0]
            assert st == 201, st
        fwd_url = "etcd://%s/fwd" % c.etcd.endpoints()
        for i in range(3):
            n = Node(binary, c.tmp, "fwd%d" % i, fwd_url, ["--forward-writes"])
            fw.append(n)
            n.start()
            st = n.req("POST", "/api/v1/config/02-simple-children",
                       {"name": "b%d" % i})[0]
            assert st == 201, st
        # one of them holds the writer's role, and the others know it
        wait_for(lambda: sorted(metric(n, "configfsd_cluster_writer")
                                for n in fw) == [0, 0, 1], 30, "a writer")
        sq = Node(binary, c.tmp, "sqlite", None)  # its own SQLite file
        sq.start()
        st = sq.req("POST", "/api/v1/config/02-simple-children",
                    {"name": "b0"})[0]
        assert st == 201, st
        print("writes (durable PUT of an attribute)")
        etcd_put = "http://127.0.0.1:%d/v3/kv/put" % c.etcd.client[0]
        figs["etcd"] = run_wrk("etcd put (gateway)", [etcd_put], secs, conns,
                               ETCD)
        figs["one"] = run_wrk("1 node on etcd", [c.nodes[0].url(attr % 0)],
                              secs, conns, PUT)
        figs["three"] = run_wrk(
            "3 nodes on etcd (sum)",
            [n.url(attr % i) for i, n in enumerate(c.nodes)],
            secs, conns, PUT)
        figs["fwd"] = run_wrk(
            "3 forwarding nodes (sum)",
            [n.url(attr % i) for i, n in enumerate(fw)], secs, conns, PUT)
        writer = [i for i, n in enumerate(fw)
                  if metric(n, "configfsd_cluster_writer") == 1][0]
        figs["fwdw"] = run_wrk(
            "3 forwarding, to the writer", [fw[writer].url(attr % writer)],
            secs, conns, PUT)
        figs["sqlite"] = run_wrk("1 node on SQLite", [sq.url(attr % 0)],
                                 secs, conns, PUT)
        # the baseline again, on the etcd the writes above have grown
        figs["etcd2"] = run_wrk("etcd put again (gateway)", [etcd_put],
                                secs, conns, ETCD)
        print("reads (GET of an attribute)")
        # every node has applied every write before reads are measured
        head = c.nodes[0].req("PUT", attr % 0, "7")[1].get("ETag", "")
        rev = re.sub(r"\D", "", head)
        for i, n in enumerate(c.nodes):
            st = n.req("GET", (attr % 0) + "?min_revision=" + rev)[0]
            assert st == 200, (i, st)
        for i, n in enumerate(c.nodes):
            figs["get%d" % i] = run_wrk(
                "node %d of 3 alone" % (i + 1), [n.url(attr % 0)],
                secs, conns, GET)
        figs["get3"] = run_wrk("3 nodes at once (sum)",
                               [n.url(attr % 0) for n in c.nodes],
                               secs, conns, GET)
        figs["getser"] = run_wrk(
            "node 1 alone, serializable",
            [c.nodes[0].url(attr % 0) + "?consistency=serializable"],
            secs, conns, GET)
        figs["getsq"] = run_wrk("1 node on SQLite", [sq.url(attr % 0)],
                                secs, conns, GET)
    finally:
        if sq and sq.proc:
            sq.stop()
        for n in fw:
            n.stop()
        c.stop()

    e = (figs["etcd"].rate + figs["etcd2"].rate) / 2
    sqw, sqr = figs["sqlite"].rate, figs["getsq"].rate
    print("write ratios (to etcd's put of this run, the mean of %.0f/s "
          "before and %.0f/s after)" % (figs["etcd"].rate, figs["etcd2"].rate))
    print("  1 node on etcd            %.2f" % (figs["one"].rate / e))
    print("  3 nodes on etcd (sum)     %.2f  (goal >= 2)"
          % (figs["three"].rate / e))
    print("  3 forwarding nodes (sum)  %.2f  (goal >= 2)"
          % (figs["fwd"].rate / e))
    print("  3 forwarding, to writer   %.2f" % (figs["fwdw"].rate / e))
    print("  1 node on SQLite          %.2f" % (sqw / e))
    print("  3 nodes (sum) / SQLite    %.2f" % (figs["three"].rate / sqw))
    print("read ratios (to the SQLite node's GET of this run; goal 1)")
    for i in range(3):
        print("  node %d of 3 alone         %.2f"
              % (i + 1, figs["get%d" % i].rate / sqr))
    print("  3 nodes at once (sum)     %.2f" % (figs["get3"].rate / sqr))
    print("  node 1, serializable      %.2f" % (figs["getser"].rate / sqr))
    failed = [f for f in figs.values() if f.bad]
    if failed:
        print("FAILED: answers other than success (or socket errors) in: "
              + "; ".join("%s: %d" % (f.name, f.bad) for f in failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
