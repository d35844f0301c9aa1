#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cluster start-up benchmark (docs/cluster.md): how long a new node takes
from its start until /readyz answers 200, on the same tree, in one run:
  log       the whole log read and applied (no snapshot was written)
  snapshot  the published snapshot loaded, then the (empty) log after it
The tree: ITEMS items, each made and written (2 x ITEMS revisions), by
WRITERS concurrent clients on one node (so that log entries hold a few
changes each, as under real load). Reported as a ratio of the two.
Usage: bench-startup.py CONFIGFSD [ITEMS] [WRITERS] [ROUNDS]
"""
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "cluster"))
from cluster import Cluster, Node, metric, wait_for  # noqa: E402

SUB = "/api/v1/config/02-simple-children"


def fill(node, items, writers):
    def worker(w):
        for i in range(w, items, writers):
            st, _, b = node.req("POST", SUB, {"name": "i%06d" % i})
            assert st == 201, (st, b)
            st, _, b = node.req("PUT", "%s/i%06d/storeme" % (SUB, i), str(i))
            assert st in (200, 204), (st, b)
    ts = [threading.Thread(target=worker, args=(w,)) for w in range(writers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def start_time(c, name, extra=()):
    """Seconds from the start of a new node until it is ready."""
    n = Node(c.binary, c.tmp, name, c.store_url(),
             ["--snapshot-every", "0"] + list(extra))
    t0 = time.monotonic()
    n.start(wait_ready=False)
    wait_for(n.ready, 600, name + " to be ready")
    secs = time.monotonic() - t0
    loaded = metric(n, "configfsd_cluster_snapshots_loaded_total")
    n.stop()
    return secs, loaded


def main():
    binary = sys.argv[1]
    items = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    writers = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    c = Cluster(binary, nodes=0, prefix="/bench-startup")
    w = None
    try:
        c.start()
        w = Node(binary, c.tmp, "writer", c.store_url(),
                 ["--snapshot-every", "0"])
        w.start()
        t0 = time.monotonic()
        fill(w, items, writers)
        fill_secs = time.monotonic() - t0
        rev = int(metric(w, "configfsd_cluster_applied_revision"))
        log = []
        for k in range(rounds):
            secs, loaded = start_time(c, "from-log-%d" % k)
            assert loaded == 0, loaded
            log.append(secs)
        # the writer again, now writing a snapshot at once (and trimming)
        w.stop()
        w.extra = ["--snapshot-every", "1"]
        w.start()
        wait_for(lambda: (metric(w, "configfsd_cluster_snapshots_written_total")
                          or 0) >= 1, 120, "the snapshot")
        snap = []
        for k in range(rounds):
            secs, loaded = start_time(c, "from-snapshot-%d" % k)
            assert loaded == 1, loaded
            snap.append(secs)
        trimmed = metric(w, "configfsd_cluster_log_trimmed_total")
    finally:
        if w:
            w.stop()
        c.stop()
    lm, sm = statistics.median(log), statistics.median(snap)
    print("tree: %d items, %d revisions (written in %.1f s)"
          % (items, rev, fill_secs))
    print("log entries trimmed after the snapshot: %d" % trimmed)
    print("start from the whole log   %7.3f s  (median of %s)"
          % (lm, " ".join("%.3f" % x for x in log)))
    print("start from the snapshot    %7.3f s  (median of %s)"
          % (sm, " ".join("%.3f" % x for x in snap)))
    print("ratio log / snapshot       %7.2f" % (lm / sm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
