#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Failover benchmark (docs/cluster.md, "Failover"): what clients see when
the writer dies or hangs, measured on a real 3-member etcd cluster and 3
configfsd nodes on loopback ports, in both modes (racing nodes, and
--forward-writes, where one node is the writer; when racing, node 0 plays
its part).

Clients write continuously to every node (PUT of an attribute, each client
its own, a new value each time, closed loop, --clients per node) while one
fault is injected per run, each run on its own etcd prefix with three
fresh nodes:

  kill   SIGKILL of the writer. Measured: the time from the signal to the
         first successful write on each other node (of a request sent
         after the signal), and (--forward-writes) to a new writer being
         named by every surviving node's GET /api/v1 (cluster.writer).
  pause  SIGSTOP of the writer, held --pause seconds (past its 5 s lease),
         then SIGCONT. Measured: the time from SIGSTOP to the first
         successful write on each other node; a new writer named by both
         others (--forward-writes); from SIGCONT to the first successful
         write on the resumed node.

In both, every request answered after the fault that did not succeed is
counted by status and errno (its problem+json), and by what the client
library saw when there was no answer (timeout after --timeout seconds,
connection refused, connection reset); apart for the node hit by the
fault and for the others, with any Retry-After header seen. Every wait
is bounded (--settle seconds after the fault for the figures to come in,
after which a figure missing counts as not reached).

Prints a table (median and max over the runs, and over the nodes for the
per-node figures) and, last, one JSON line with the same figures and each
run's raw ones. With --check (a test) it also fails unless every figure
was reached and every failed request was of a kind docs/cluster.md
names; without etcd it then exits 77 (skip) instead of installing it.
Usage: failover.py CONFIGFSD [--runs N] [--modes racing,forward]
                   [--faults kill,pause] [--pause S] [--clients K]
                   [--timeout S] [--settle S] [--check]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "cluster"))
from cluster import Cluster, Node, wait_for  # noqa: E402

SUB = "/api/v1/config/02-simple-children"


def attr(item):
    return "%s/%s/storeme" % (SUB, item)


def outcome(node, method, path, body, timeout):
    """(kind, retry_after): kind is "ok" for a 2xx, "STATUS ERRNO" for
    another answer, or what the client saw without one: "timeout",
    "refused", "reset" (the connection broke), "down" (no process)."""
    if node.proc is None or node.port is None:
        return "down", None
    req = urllib.request.Request(node.url(path), data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            r.read()
            return "ok", None
    except urllib.error.HTTPError as e:
        b = e.read()
        try:
            errno = json.loads(b).get("errno")
        except ValueError:
            errno = None
        kind = "%d %s" % (e.code, errno or "-") if e.code >= 300 else "ok"
        return kind, e.headers.get("Retry-After")
    except urllib.error.URLError as e:
        r = e.reason
        if isinstance(r, ConnectionRefusedError):
            return "refused", None
        if isinstance(r, (socket.timeout, TimeoutError)):
            return "timeout", None
        return "reset", None
    except (socket.timeout, TimeoutError):
        return "timeout", None
    except OSError:  # RemoteDisconnected, ConnectionResetError, ...
        return "reset", None


class Run:
    """Three fresh nodes of one mode on their own prefix, their clients,
    and what every request got."""

    def __init__(self, c, args, mode, fault, k):
        self.c, self.args, self.mode, self.fault = c, args, mode, fault
        prefix = "/fo-%s-%s-%d" % (mode, fault, k)
        url = "etcd://%s%s" % (c.etcd.endpoints(), prefix)
        fwd = ["--forward-writes"] if mode == "forward" else []
        self.nodes = [Node(c.binary, c.tmp, "fo-%s-%s-%d-n%d"
                           % (mode, fault, k, i), url, fwd)
                      for i in range(3)]
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.reqs = []  # (node index, t0, t1, kind, retry_after)
        self.named = {}  # node index -> first time it named a new writer
        self.old_writer = None
        self.victim = 0

    # ---- set-up ---------------------------------------------------------

    def api(self, i):
        st, _, b = self.nodes[i].req("GET", "/api/v1", timeout=1)
        return json.loads(b).get("cluster") or {} if st == 200 else {}

    def start(self):
        for n in self.nodes:
            n.start()
        if self.mode == "forward":
            def one_writer():
                cl = [self.api(i) for i in range(3)]
                w = [i for i in range(3) if cl[i].get("is_writer")]
                urls = set(x.get("writer") for x in cl)
                return len(w) == 1 and len(urls) == 1 and None not in urls \
                    and w
            self.victim = wait_for(one_writer, 30,
                                   "one writer, named by all")[0]
            self.old_writer = self.api(self.victim).get("writer")
        for i in range(3):
            for k in range(self.args.clients):
                st, _, b = self.nodes[0].req(
                    "POST", SUB, {"name": "fo%d-%d" % (i, k)})
                assert st == 201, (st, b)

    # ---- load and watchers ---------------------------------------------

    def client(self, i, k):
        node = self.nodes[i]
        path = attr("fo%d-%d" % (i, k))
        seq = 0
        while not self.stop.is_set():
            seq += 1
            t0 = time.monotonic()
            kind, ra = outcome(node, "PUT", path, b"%d" % seq,
                               self.args.timeout)
            t1 = time.monotonic()
            with self.lock:
                self.reqs.append((i, t0, t1, kind, ra))
            if kind in ("refused", "down"):
                self.stop.wait(0.05)  # nothing listens: do not spin

    def watch_writer(self, i, since):
        """Until stop: note when node @i first names a writer other than
        the old one (after @since)."""
        while not self.stop.is_set() and i not in self.named:
            try:
                w = self.api(i).get("writer")
            except OSError:
                w = None
            if w and w != self.old_writer:
                self.named[i] = time.monotonic() - since
                return
            self.stop.wait(0.05)

    def first_ok(self, i, since):
        """Seconds from @since to the first success on node @i of a
        request sent at or after @since, or None."""
        with self.lock:
            t = [t1 for n, t0, t1, kind, _ in self.reqs
                 if n == i and t0 >= since and kind == "ok"]
        return min(t) - since if t else None

    def longest_gap(self, i, since, until):
        """The longest time in [@since, @until] in which node @i answered
        no write with success."""
        with self.lock:
            t = sorted(t1 for n, _, t1, kind, _ in self.reqs
                       if n == i and kind == "ok" and since < t1 < until)
        edges = [since] + t + [until]
        return max(b - a for a, b in zip(edges, edges[1:]))

    # ---- the run --------------------------------------------------------

    def run(self):
        a = self.args
        threads = [threading.Thread(target=self.client, args=(i, k),
                                    daemon=True)
                   for i in range(3) for k in range(a.clients)]
        for t in threads:
            t.start()
        v = self.victim
        others = [i for i in range(3) if i != v]
        out = {"victim": v}
        try:
            # every node writes before the fault
            t = time.monotonic()
            wait_for(lambda: all(self.first_ok(i, t) is not None
                                 for i in range(3)), 20, "writes everywhere")
            self.stop.wait(1)
            watchers = []
            t_fault = time.monotonic()
            if self.fault == "kill":
                self.nodes[v].proc.send_signal(signal.SIGKILL)
            else:
                self.nodes[v].proc.send_signal(signal.SIGSTOP)
            if self.mode == "forward":
                watchers = [threading.Thread(target=self.watch_writer,
                                             args=(i, t_fault), daemon=True)
                            for i in others]
                for w in watchers:
                    w.start()
            if self.fault == "kill":
                self.nodes[v].proc.wait(10)
                self.nodes[v].proc = None
                t_cont = None
            else:
                self.stop.wait(a.pause)
                t_cont = time.monotonic()
                self.nodes[v].proc.send_signal(signal.SIGCONT)

            def settled():
                done = all(self.first_ok(i, t_fault) is not None
                           for i in others)
                if t_cont is not None:
                    done = done and self.first_ok(v, t_cont) is not None
                if self.mode == "forward":
                    done = done and all(i in self.named for i in others)
                return done
            try:
                wait_for(settled, a.settle, "the figures")
            except TimeoutError:
                pass  # a figure not reached is reported as such
            self.stop.wait(0.5)  # answers still coming in are counted
            t_end = time.monotonic()
        finally:
            self.stop.set()
            for t in threads:
                t.join(a.timeout + 5)
        def r3(x):
            return None if x is None else round(x, 3)
        out["first_write"] = {str(i): r3(self.first_ok(i, t_fault))
                              for i in others}
        out["blocked"] = {str(i): r3(self.longest_gap(i, t_fault - 1, t_end))
                          for i in others}
        if t_cont is not None:
            out["resumed_first_write"] = r3(self.first_ok(v, t_cont))
        if self.mode == "forward":
            out["writer_named"] = {str(i): r3(self.named.get(i))
                                   for i in others}
        failed = {"hit": {}, "others": {}}
        retry_after = set()
        before = 0
        with self.lock:
            for n, t0, t1, kind, ra in self.reqs:
                if kind == "ok" or (kind == "down" and n == v):
                    continue  # "down": this tool's client, not a request
                if t1 < t_fault:
                    before += 1
                    continue
                where = failed["hit" if n == v else "others"]
                where[kind] = where.get(kind, 0) + 1
                if ra:
                    retry_after.add(ra)
            ok = sum(1 for r in self.reqs if r[3] == "ok" and
                     t_fault <= r[2] <= t_end)
        out["failed"] = failed
        out["failed_before_fault"] = before
        out["succeeded_after_fault"] = ok
        out["retry_after"] = sorted(retry_after)
        out["seconds"] = round(t_end - t_fault, 3)
        return out

    def stop_nodes(self):
        self.stop.set()
        for n in self.nodes:
            n.stop()  # a stopped one too (Node.stop() continues it)


def spread(xs):
    """(median, max, missing) of the figures @xs (None: not reached)."""
    got = [x for x in xs if x is not None]
    if not got:
        return None, None, len(xs)
    return (round(statistics.median(got), 3), round(max(got), 3),
            len(xs) - len(got))


# What docs/cluster.md ("Failover") says a client may get while the writer
# dies or hangs; --check fails on anything else.
DOCUMENTED = {"503 EAGAIN", "503 EIO", "503 ETIMEDOUT", "refused", "reset",
              "timeout"}


def check(raw):
    """What the runs in @raw show against docs/cluster.md: every figure
    reached, every failure of a documented kind. A list of problems."""
    out = []
    for mode, faults in raw.items():
        for fault, runs in faults.items():
            for k, r in enumerate(runs, 1):
                where = "%s %s run %d" % (mode, fault, k)
                figs = dict(r["first_write"])
                figs.update(("writer named by %s" % i, x)
                            for i, x in r.get("writer_named", {}).items())
                if "resumed_first_write" in r:
                    figs["resumed"] = r["resumed_first_write"]
                out += ["%s: %s not reached" % (where, f)
                        for f, x in sorted(figs.items()) if x is None]
                for side in ("hit", "others"):
                    out += ["%s: %d answered %s on %s (not in docs/"
                            "cluster.md)" % (where, n, kind, side)
                            for kind, n in sorted(r["failed"][side].items())
                            if kind not in DOCUMENTED]
    return out


def need_etcd(skip):
    """etcd installed if missing; with @skip, exit 77 (a skip) instead."""
    if not shutil.which("etcd"):
        if skip:
            print("etcd is not installed (scripts/etcd-deps.sh): skipped")
            sys.exit(77)
        subprocess.run([os.path.join(here, "..", "..", "scripts",
                                     "etcd-deps.sh")], check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("configfsd")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--modes", default="racing,forward")
    p.add_argument("--faults", default="kill,pause")
    p.add_argument("--pause", type=float, default=7.0,
                   help="seconds the writer stays stopped (lease: 5)")
    p.add_argument("--clients", type=int, default=2,
                   help="writing clients per node")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds a client waits for an answer")
    p.add_argument("--settle", type=float, default=20.0,
                   help="seconds after the fault (after SIGCONT) for the "
                        "figures to come in")
    p.add_argument("--check", action="store_true",
                   help="fail unless every figure was reached and every "
                        "failed request was of a kind docs/cluster.md "
                        "names (a test: skipped without etcd)")
    a = p.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    faults = [f for f in a.faults.split(",") if f]
    assert set(modes) <= {"racing", "forward"}, modes
    assert set(faults) <= {"kill", "pause"}, faults
    # a timeout's SIGTERM still stops etcd and the nodes (finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    need_etcd(a.check)
    c = Cluster(a.configfsd, nodes=0)
    raw = {}
    try:
        c.start()
        for mode in modes:
            for fault in faults:
                for k in range(a.runs):
                    r = Run(c, a, mode, fault, k)
                    try:
                        r.start()
                        res = r.run()
                    finally:
                        r.stop_nodes()
                    raw.setdefault(mode, {}).setdefault(fault, []).append(res)
                    print("%-7s %-5s run %d: %s" % (mode, fault, k + 1,
                                                    json.dumps(res)),
                          flush=True)
    finally:
        c.stop()
    summary = report(raw, a)
    print(json.dumps({"failover": summary, "runs": raw,
                      "settings": vars(a)}, sort_keys=True))
    if a.check:
        problems = check(raw)
        for x in problems:
            print("CHECK FAILED: " + x)
        if problems:
            return 1
        print("check: every figure reached, every failure documented")
    return 0


def report(raw, a):
    """Print the table; return its figures."""
    def fmt(m, x, miss):
        if m is None:
            return "%8s %8s  never (%d)" % ("-", "-", miss)
        return "%7.2fs %7.2fs%s" % (m, x, "  %d not reached in %gs"
                                    % (miss, a.settle) if miss else "")
    summary = {}
    print()
    print("failover, %d run(s) each; median and max over runs (and over "
          "the other nodes)" % a.runs)
    print("%-7s %-5s %-46s %8s %8s" % ("mode", "fault", "figure", "median",
                                       "max"))
    for mode, faults in raw.items():
        for fault, runs in faults.items():
            s = summary.setdefault(mode, {}).setdefault(fault, {})
            rows = [("first_write", "first write, each other node, "
                     "from SIG%s" % ("KILL" if fault == "kill" else "STOP"),
                     [x for r in runs for x in r["first_write"].values()]),
                    ("blocked", "longest gap between writes, each other "
                     "node",
                     [x for r in runs for x in r["blocked"].values()])]
            if mode == "forward":
                rows.append(("writer_named", "new writer named by all "
                             "the others",
                             [None if None in r["writer_named"].values()
                              else max(r["writer_named"].values())
                              for r in runs]))
            if fault == "pause":
                rows.append(("resumed_first_write", "first write on the "
                             "resumed node, from SIGCONT",
                             [r["resumed_first_write"] for r in runs]))
            for key, label, xs in rows:
                m, x, miss = spread(xs)
                s[key] = {"median": m, "max": x, "missing": miss}
                print("%-7s %-5s %-46s %s" % (mode, fault, label,
                                              fmt(m, x, miss)))
            for where, label in (("others", "the other nodes"),
                                 ("hit", "the %s node" % ("killed" if fault
                                                          == "kill" else
                                                          "paused"))):
                tot = {}
                for r in runs:
                    for kind, n in r["failed"][where].items():
                        tot[kind] = tot.get(kind, 0) + n
                s["failed_" + where] = tot
                print("%-7s %-5s   failed on %s (all runs): %s"
                      % (mode, fault, label, ", ".join(
                          "%s %d" % kv for kv in sorted(tot.items()))
                         or "none"))
            ra = sorted(set(x for r in runs for x in r["retry_after"]))
            s["retry_after"] = ra
            if ra:
                print("%-7s %-5s   Retry-After seen: %s"
                      % (mode, fault, ", ".join(ra)))
    return summary


if __name__ == "__main__":
    sys.exit(main())
