#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Import benchmark (docs/API.md, "Export and import"): for trees of each
size given, in one run, each on a fresh configfsd (SQLite store):
  export    GET /api/v1/export of the tree's group
  dry run   POST /api/v1/import?mode=replace&dry_run=1 of that unchanged
            export (must plan nothing)
  ratio     dry run / export, median over rounds; the goal <= 2
  wait      the longest a PUT from another client waited while an export
            ran (a read that takes no lock: the baseline), while a dry run
            of the unchanged file ran, then while a real import of it ran
            after 1% of the items changed (every PUT must be answered)
and the growth from the smallest to the largest size (linear: the same as
the growth of the tree). The tree: SIZE items in one group, each with one
written attribute, made in batches; the writer writes /01-childless/storeme,
outside the exported subtree. Fails if an unchanged tree plans a step, if
the real import does not plan exactly the changed items or does not reach
the file, or if a PUT is refused.
Usage: bench-import.py CONFIGFSD [SIZE...]   (default 1000 10000 100000)
"""
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "cluster"))
from cluster import Node  # noqa: E402

SUB = "/02-simple-children"
HDR = {"Content-Type": "application/json"}


def fill(node, items):
    for lo in range(0, items, 500):
        ops = []
        for i in range(lo, min(items, lo + 500)):
            ops.append({"op": "mkdir", "path": "%s/i%06d" % (SUB, i)})
            ops.append({"op": "store", "path": "%s/i%06d/storeme" % (SUB, i),
                        "value": str(i)})
        st, _, b = node.req("POST", "/api/v1/batch",
                            json.dumps({"ops": ops}).encode(), HDR, 120)
        assert st == 200, (st, b)


class Writer:
    """PUTs of one attribute, one after the other, from another client,
    while it runs; keeps the longest wait."""

    def __init__(self, node):
        self.node, self.stop, self.longest, self.count = node, False, 0.0, 0
        self.error = None
        self.t = threading.Thread(target=self.run)

    def run(self):
        k = 0
        while not self.stop:
            k += 1
            t0 = time.monotonic()
            try:
                st, _, b = self.node.req(
                    "PUT", "/api/v1/config/01-childless/storeme",
                    str(k).encode(), None, 600)
            except OSError as e:
                self.error = repr(e)
                return
            if st not in (200, 204):
                self.error = "%d %s" % (st, b)
                return
            self.longest = max(self.longest, time.monotonic() - t0)
            self.count += 1

    def __enter__(self):
        self.t.start()
        while self.count == 0 and self.error is None and self.t.is_alive():
            time.sleep(0.001)  # under way before the import starts
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.t.join()
        assert self.error is None, self.error
        assert self.count > 0


def measure(binary, items):
    tmp = tempfile.mkdtemp(prefix="configfsd-bench-import-")
    node = Node(binary, tmp, "n", None,
                ["--body-limit", str(1 << 30), "--threads", "4"])
    try:
        node.start()
        fill(node, items)
        rounds = 3

        def export():
            st, _, b = node.req("GET", "/api/v1/export?path=" + SUB, None,
                                None, 600)
            assert st == 200, st
            return b

        def dry():
            st, _, b = node.req("POST",
                                "/api/v1/import?mode=replace&dry_run=1",
                                doc, HDR, 600)
            assert st == 200, (st, b[:300])
            return json.loads(b)

        # rounds of export then dry run back to back, so that load from
        # elsewhere hits both sides of a round's ratio alike
        exports, drys, ratios = [], [], []
        for _ in range(rounds):
            t0 = time.monotonic()
            doc = export()
            t1 = time.monotonic()
            plan = dry()
            t2 = time.monotonic()
            assert plan["ops"] == [] and plan["changed"] is False, \
                plan["ops"][:3]
            exports.append(t1 - t0)
            drys.append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
        export_s, dry_s = min(exports), min(drys)
        ratio = statistics.median(ratios)
        # the writer's longest wait during an export (a read that takes no
        # lock: the baseline), then during a dry run
        with Writer(node) as w:
            export()
        export_wait = w.longest
        with Writer(node) as w:
            dry()
        dry_wait = w.longest
        # change 1% of the items, then import for real while another
        # client writes (outside the exported subtree)
        changed = list(range(0, items, 100))
        for lo in range(0, len(changed), 500):
            ops = [{"op": "store", "path": "%s/i%06d/storeme" % (SUB, i),
                    "value": "7"} for i in changed[lo:lo + 500]]
            st, _, b = node.req("POST", "/api/v1/batch",
                                json.dumps({"ops": ops}).encode(), HDR, 120)
            assert st == 200, (st, b)
        with Writer(node) as w:
            st, _, b = node.req("POST", "/api/v1/import?mode=replace",
                                doc, HDR, 600)
            assert st == 200, (st, b[:300])
        res = json.loads(b)
        assert len(res["ops"]) == len(changed) and res["changed"] is True, \
            res["ops"][:3]
        st, _, after = node.req("GET", "/api/v1/export?path=" + SUB, None,
                                None, 600)
        assert json.loads(after)["root"] == json.loads(doc)["root"]
        return export_s, dry_s, ratio, export_wait, dry_wait, w.longest, len(doc)
    finally:
        node.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    binary = sys.argv[1]
    sizes = [int(a) for a in sys.argv[2:]] or [1000, 10000, 100000]
    rows = []
    for n in sizes:
        rows.append((n,) + measure(binary, n))
    print("%8s %6s %9s %10s %6s %12s %12s %12s" % (
        "items", "MB", "export s", "dry run s", "ratio",
        "wait exp. s", "wait dry s", "wait imp. s"))
    for n, e, d, ratio, we, wd, wi, size in rows:
        print("%8d %6.1f %9.3f %10.3f %6.2f %12.3f %12.3f %12.3f"
              % (n, size / 1e6, e, d, ratio, we, wd, wi))
    print("(export and dry run: best of 3; ratio: median of the rounds' "
          "dry run / export; a PUT's longest wait during an export, the "
          "baseline, a dry run, and a real import of 1% changed items)")
    for a, b in zip(rows, rows[1:]):
        (n0, e0, d0, *_), (n1, e1, d1, *_) = a, b
        print("growth %d -> %d items: export x%.1f, dry run x%.1f "
              "(tree x%.0f)" % (n0, n1, e1 / e0, d1 / d0, n1 / n0))
    if len(rows) > 2:
        (n0, e0, d0, *_), (n1, e1, d1, *_) = rows[0], rows[-1]
        print("growth %d -> %d items: export x%.1f, dry run x%.1f "
              "(tree x%.0f)" % (n0, n1, e1 / e0, d1 / d0, n1 / n0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
