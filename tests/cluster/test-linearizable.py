#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Suite cluster, scenarios of docs/cluster.md "Linearizability": concurrent
clients on all three nodes do reads, blind writes of unique values and
If-Match compare-and-set on the storeme attribute of a few
02-simple-children items while a fault is injected; the recorded history
is then checked (linearize.py) with the other promises of cluster mode:

  - the CAS history of every attribute is linearizable;
  - no acknowledged write lost or applied twice, no refused write kept
    (the store's history, read at the end);
  - every node's export is byte-identical at the end;
  - every node's event stream is gap-free, in order, with an event name,
    or says `reset`.

Each scenario runs in both modes (racing nodes and --forward-writes), on
its own etcd prefix and three fresh nodes of one etcd cluster, in at most
90 s. CI runs the short variant (6 s of load beside each fault);
CFS_LINEARIZE_LONG=1 the long one (12 s). CFS_LINEARIZE_SCENARIOS=none,
kill_node limits the scenarios, CFS_LINEARIZE_MODES=racing the modes,
CFS_LINEARIZE_SECONDS sets the load.
TAP output. Usage: test-linearizable.py CONFIGFSD
"""
import base64
import json
import os
import random
import shutil
import signal
import sys
import threading
import time
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import (Cluster, Dropper, LossyProxy, Node,  # noqa: E402
                     metric, wait_for)
from linearize import (aliasing, check_history, describe, op,  # noqa: E402
                       stream_problems)

SUB = "/api/v1/config/02-simple-children"
ITEMS = ["lz0", "lz1", "lz2"]
CLIENTS = 6
TIMEOUT = 3.0  # a request not answered by then is indeterminate
SECONDS = float(os.environ.get(
    "CFS_LINEARIZE_SECONDS",
    "12" if os.environ.get("CFS_LINEARIZE_LONG") else "6"))
MAX_OPS = 3000  # per client


def key_path(item):
    return "%s/%s/storeme" % (SUB, item)


def etag(headers):
    h = {k.lower(): v for k, v in headers.items()}
    e = h.get("etag")
    try:
        return int(e.strip('"')) if e else None
    except ValueError:
        return None


def errno_of(body):
    try:
        return json.loads(body).get("errno")
    except ValueError:
        return None


class Run:
    """Three nodes of one mode on their own prefix, clients, a history."""

    def __init__(self, c, name, mode, store_url=None, extra=None):
        self.c, self.name, self.mode = c, name, mode
        self.prefix = "/lz-%s-%s" % (name, mode)
        url = store_url or "etcd://%s%s" % (c.etcd.endpoints(), self.prefix)
        fwd = ["--forward-writes"] if mode == "forward" else []
        self.nodes = [Node(c.binary, c.tmp, "%s-%s-%d" % (name, mode, i),
                           (extra or {}).get(i, url), fwd)
                      for i in range(3)]
        self.down = set()  # nodes the clients leave alone for now
        self.ops = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.events = {}  # node index -> [(id, event name)]
        self.init = {}
        self.late = []  # nodes whose events did not reach the end

    def start(self):
        for n in self.nodes:
            n.start()
        if self.mode == "forward":
            wait_for(lambda: sorted(metric(n, "configfsd_cluster_writer")
                                    for n in self.nodes) == [0, 0, 1],
                     20, "one writer, known to all")
        a = self.nodes[0]
        for it in ITEMS:
            st, _, b = a.req("POST", SUB, {"name": it})
            assert st == 201, (st, b)
            st, _, b = a.req("PUT", key_path(it), "1")
            assert st in (200, 204), (st, b)
        self.converge()
        for it in ITEMS:
            st, h, b = a.req("GET", key_path(it))
            assert st == 200, (st, b)
            self.init[it] = (b.decode().strip(), etag(h))
        self.r0 = self.revision(a)

    def writer(self):
        if self.mode == "forward":
            for n in self.nodes:
                if n.proc and metric(n, "configfsd_cluster_writer") == 1:
                    return self.nodes.index(n)
        return 0

    @staticmethod
    def revision(node):
        st, _, b = node.req("GET", "/api/v1", timeout=5)
        return json.loads(b)["revision"] if st == 200 else None

    def converge(self, timeout=30):
        def same():
            revs = [self.revision(n) for n in self.nodes]
            return revs[0] is not None and len(set(revs)) == 1 and revs[0]
        return wait_for(same, timeout, "nodes to converge")

    # ---- clients --------------------------------------------------------

    def client(self, cid):
        rnd = random.Random(cid * 7919 + zlib.crc32(self.prefix.encode()))
        known = dict((it, self.init[it][1]) for it in ITEMS)
        seq = 0
        end = time.monotonic() + SECONDS
        while not self.stop.is_set() and time.monotonic() < end \
                and seq < MAX_OPS:
            up = [i for i in range(3) if i not in self.down]
            if not up:
                self.stop.wait(0.05)
                continue
            ni = rnd.choice(up)
            node = self.nodes[ni]
            it = rnd.choice(ITEMS)
            x = rnd.random()
            seq += 1
            value = "%d" % ((cid + 1) * 1000000 + seq)
            kind = "read" if x < 0.5 else "write" if x < 0.7 else "cas"
            hdr = {"If-Match": '"%d"' % known[it]} if kind == "cas" else None
            t0 = time.monotonic()
            try:
                if kind == "read":
                    st, h, b = node.req("GET", key_path(it), timeout=TIMEOUT)
                else:
                    st, h, b = node.req("PUT", key_path(it), value, hdr,
                                        timeout=TIMEOUT)
            except OSError:
                st, h, b = None, {}, b""
            t1 = time.monotonic()
            rev = etag(h)
            if kind == "read":
                status = "ok" if st == 200 and rev is not None else "info"
                value = b.decode().strip() if status == "ok" else None
            elif st in (200, 204):
                status = "ok"
            elif st is not None and (400 <= st < 500 or (
                    st == 503 and errno_of(b) == "EAGAIN")):
                status = "fail"  # refused: nothing was kept
            else:
                status = "info"
            if status == "ok" and rev is not None:
                known[it] = rev
            expect = int(hdr["If-Match"].strip('"')) if hdr else None
            o = op(it, kind, t0, t1, status, value,
                   rev if status == "ok" else None, expect,
                   "c%d" % cid, node.name)
            with self.lock:
                self.ops.append((o, st))

    # ---- events ---------------------------------------------------------

    def follow(self, i, since):
        """Follow node @i's events from @since until stop, reconnecting
        with Last-Event-ID when the node went away."""
        out = self.events.setdefault(i, [])
        last = since
        end = time.monotonic() + SECONDS + 80
        while not self.stop.is_set() and time.monotonic() < end:
            node = self.nodes[i]
            if node.proc is None or i in self.down or node.port is None:
                self.stop.wait(0.1)
                continue
            req = urllib.request.Request(
                node.url("/api/v1/events"),
                headers={"Last-Event-ID": str(last)})
            try:
                with urllib.request.urlopen(req, timeout=2) as r:
                    ev = None
                    while not self.stop.is_set():
                        line = r.readline()
                        if not line:
                            break
                        line = line.rstrip(b"\n")
                        if line.startswith(b"id:"):
                            cur = int(line[3:])
                        elif line.startswith(b"event:"):
                            ev = line[6:].strip().decode()
                        elif line == b"" and ev is not None:
                            out.append((cur, ev))
                            last = cur
                            ev = None
            except (OSError, ValueError):
                self.stop.wait(0.1)

    # ---- the run --------------------------------------------------------

    def run(self, fault):
        subs = [threading.Thread(target=self.follow, args=(i, self.r0),
                                 daemon=True) for i in range(3)]
        for t in subs:
            t.start()
        ts = [threading.Thread(target=self.client, args=(k,))
              for k in range(CLIENTS)]
        for t in ts:
            t.start()
        try:
            fault(self)
        finally:
            for t in ts:
                t.join(SECONDS + 30)
            self.down.clear()
        for i, n in enumerate(self.nodes):
            if n.proc is None:
                n.start()
        final = self.converge(60)
        # a final read of each attribute on every node, after everything
        for n in self.nodes:
            for it in ITEMS:
                t0 = time.monotonic()
                st, h, b = n.req("GET", key_path(it))
                assert st == 200, (n.name, st, b)
                self.ops.append((op(it, "read", t0, time.monotonic(), "ok",
                                    b.decode().strip(), etag(h),
                                    client="final", node=n.name), st))
        try:
            wait_for(lambda: all(self.events.get(i) and
                                 self.events[i][-1][0] >= final
                                 for i in range(3)),
                     30, "every node's events up to %d" % final)
        except TimeoutError:
            self.late = [(self.nodes[i].name, (self.events.get(i) or
                                               [(None,)])[-1][0])
                         for i in range(3)]
        self.stop.set()
        for t in subs:
            t.join(5)
        return final

    def stop_nodes(self):
        self.stop.set()
        for n in self.nodes:
            if n.proc:
                n.proc.send_signal(signal.SIGCONT)
            n.stop()

    # ---- the checks -----------------------------------------------------

    def problems(self):
        """Every broken promise by kind, in order of gravity: a list of
        (kind, count, the first few examples as text)."""
        ops = [o for o, _ in self.ops]
        init = {it: (v, r) for it, (v, r) in self.init.items()}
        found = {}

        def add(kind, text):
            found.setdefault(kind, []).append(text)
        for key, rev, values in aliasing(ops):
            who = [describe(o) for v in values for o in
                   [o for o in ops if o.key == key and o.rev == rev and
                    o.status == "ok" and o.value == v][:2]]
            add("one revision, two values",
                "revision %d of %s names %s:\n    %s"
                % (rev, key, values, "\n    ".join(who)))
        for kind, text in self.store_problems(ops):
            add(kind, text)
        for text in self.export_problems():
            add("exports differ", text)
        for text in self.event_problems():
            add("event stream", text)
        # the CAS history: writes and If-Match, closed by the reads made
        # on every node after the load
        cas = [o for o in ops if o.kind != "read" or o.client == "final"]
        for r in check_history(cas, init, seconds=15).values():
            if r.valid is not True:
                add("CAS history not linearizable", repr(r))
        # without the refused CAS: what is left is a write that should
        # have been refused (two CAS from one revision both succeeding);
        # when only this passes, the refusals were false ones (a node
        # that has not applied the revision yet answers 412)
        unsafe = [o for o in cas if o.status != "fail"]
        for r in check_history(unsafe, init, seconds=15).values():
            if r.valid is not True:
                add("CAS successes not linearizable", repr(r))
        # every operation: a node that lags also serves older committed
        # values, which no linearizable register does
        for r in check_history(ops, init, seconds=15).values():
            if r.valid is not True:
                add("history with reads not linearizable", repr(r))
        return [(k, len(v), v[:2]) for k, v in found.items()]

    def store_problems(self, ops):
        """The store's history of each attribute against the answers."""
        out = []
        kept = {}
        before = ""
        for _ in range(100):  # pages of 10 000, newest first
            st, _, b = self.nodes[0].req(
                "GET", "/api/v1/history?path=/02-simple-children&limit=10000"
                + before)
            if st != 200:
                return [("history", "%s %s" % (st, b[:200]))]
            page = json.loads(b)
            if page["floor"] > self.r0:
                return [("history", "pruned up to %d, past the start %d"
                         % (page["floor"], self.r0))]
            for e in page["entries"]:
                if e.get("op") == "store":
                    kept.setdefault((e["path"], str(e.get("value")).strip()),
                                    []).append(e["revision"])
            if page["next_before"] is None or page["next_before"] <= self.r0:
                break
            before = "&before=%d" % page["next_before"]
        initial = set(v for v, _ in self.init.values())
        for o in ops:
            path = "/02-simple-children/%s/storeme" % o.key
            if o.kind == "read":
                if o.status == "ok" and o.value not in initial and \
                        not kept.get((path, o.value)):
                    out.append(("dirty read (a value never committed)",
                                describe(o)))
                continue
            revs = kept.get((path, o.value), [])
            if o.status == "ok" and not revs:
                out.append(("acknowledged write lost", describe(o)))
            if len(revs) > 1:
                out.append(("write applied twice", "at %s: %s"
                                                  % (revs, describe(o))))
            if o.status == "fail" and revs:
                out.append(("refused write kept", "at %s: %s"
                                                 % (revs, describe(o))))
        return out

    def export_problems(self):
        ex = []
        for n in self.nodes:
            st, _, b = n.req("GET", "/api/v1/export")
            if st != 200:
                return ["export of %s: %s" % (n.name, st)]
            ex.append(b)
        return ["export of %s differs from %s" % (n.name, self.nodes[0].name)
                for n, e in zip(self.nodes[1:], ex[1:]) if e != ex[0]]

    def event_problems(self):
        out = ["%s: events stopped at %s" % x for x in self.late]
        for i, evs in sorted(self.events.items()):
            out += ["%s: %s" % (self.nodes[i].name, p)
                    for p in stream_problems(evs, self.r0)]
        return out[:10]


# ---- the faults: each runs while the clients load, then restores -------


def pause(run, seconds):
    run.stop.wait(seconds)


def f_none(run):
    pause(run, SECONDS)


def kill_and_restart(run, i):
    pause(run, 3)
    run.down.add(i)
    run.nodes[i].kill()
    pause(run, 2)
    run.nodes[i].start()
    run.down.discard(i)


def f_kill_node(run):
    """SIGKILL of a node that is not the writer, restarted 2 s later."""
    kill_and_restart(run, 2 if run.writer() != 2 else 1)


def f_kill_writer(run):
    """SIGKILL of the writer (node 0 when racing), restarted 2 s later."""
    kill_and_restart(run, run.writer())


def f_pause_writer(run):
    """SIGSTOP past the writer's lease (5 s), then SIGCONT: a zombie
    writer must not append."""
    pause(run, 2)
    i = run.writer()
    run.nodes[i].proc.send_signal(signal.SIGSTOP)
    pause(run, 7)
    run.nodes[i].proc.send_signal(signal.SIGCONT)


def f_etcd_members(run):
    """One etcd member down, then two (no quorum), then both back."""
    e = run.c.etcd
    pause(run, 2)
    e.kill(2)
    pause(run, 2)
    e.kill(1)
    pause(run, 4)  # longer than a client waits (TIMEOUT)
    e.restart(1)
    e.restart(2)
    for i in (1, 2):
        wait_for(lambda i=i: e.healthy(i), 30, "etcd member %d back" % i)


def lossy_run(c, name, mode):
    """A run whose nodes reach etcd through proxies that lose the answers
    of some appends (the head CAS) after etcd applied them."""
    prefix = "/lz-%s-%s" % (name, mode)
    drop = Dropper(b'"%s"' % base64.b64encode((prefix + "/head").encode()))
    proxies = [LossyProxy(c.etcd.client[i], drop) for i in (0, 1)]
    url = "etcd://%s%s" % (",".join("127.0.0.1:%d" % p.port
                                    for p in proxies), prefix)
    run = Run(c, name, mode, url)
    run.proxies, run.drop = proxies, drop
    return run


def f_lossy(run):
    for _ in range(int(SECONDS)):
        run.drop.arm(2)
        pause(run, 1)


def slow_run(c, name, mode):
    """Node 2 reaches etcd through a proxy that holds every answer 150 ms."""
    prefix = "/lz-%s-%s" % (name, mode)
    proxies = [LossyProxy(c.etcd.client[i], delay=0.15) for i in (0, 1)]
    url = "etcd://%s%s" % (",".join("127.0.0.1:%d" % p.port
                                    for p in proxies), prefix)
    run = Run(c, name, mode, extra={2: url})
    run.proxies = proxies
    return run


SCENARIOS = [
    ("none", f_none, None),
    ("kill_node", f_kill_node, None),
    ("kill_writer", f_kill_writer, None),
    ("pause_writer", f_pause_writer, None),
    ("etcd_members", f_etcd_members, None),
    ("lossy", f_lossy, lossy_run),
    ("slow_link", f_none, slow_run),
]


def scenario(c, name, fault, make, mode):
    run = make(c, name, mode) if make else Run(c, name, mode)
    t0 = time.monotonic()
    try:
        run.start()
        run.run(fault)
        found = run.problems()
    finally:
        run.stop_nodes()
        for p in getattr(run, "proxies", []):
            p.close()
    took = time.monotonic() - t0
    counts = {}
    for o, _ in run.ops:
        k = (o.kind, o.status)
        counts[k] = counts.get(k, 0) + 1
    info = "%d ops in %.0f s%s (%s)" % (
        len(run.ops), took, ", %d etcd answers lost" % run.drop.dropped
        if hasattr(run, "drop") else "", ", ".join("%s %s %d" % (k[0], k[1], v)
                                      for k, v in sorted(counts.items())))
    if took > 90:
        found.append(("too long", 1, ["took %.0f s, more than 90 s" % took]))
    return found, info


def main():
    binary = sys.argv[1]
    if not shutil.which("etcd"):
        print("1..0 # SKIP etcd is not installed (scripts/etcd-deps.sh)")
        return 0
    only = os.environ.get("CFS_LINEARIZE_SCENARIOS")
    modes = os.environ.get("CFS_LINEARIZE_MODES", "racing,forward")
    todo = [(s, m) for s in SCENARIOS for m in modes.split(",")
            if not only or s[0] in only.split(",")]
    print("1..%d" % len(todo))
    c = Cluster(binary, nodes=0)
    failed = 0
    try:
        c.start()
        for k, ((name, fault, make), mode) in enumerate(todo, 1):
            try:
                found, info = scenario(c, name, fault, make, mode)
            except Exception as e:  # report and go on
                found, info = [("error", 1, [repr(e)])], ""
            print("%s %d - %s, %s: %s" % ("not ok" if found else "ok", k,
                                          name, mode, info))
            for kind, count, examples in found:
                print("# %s: %d" % (kind, count))
                for line in "\n".join(examples).splitlines():
                    print("#   " + line)
            failed += bool(found)
            sys.stdout.flush()
    finally:
        c.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
