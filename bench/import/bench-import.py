#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Import benchmark (docs/API.md, "Export and import"): for trees of each
size given, in one run, each on its own fresh configfsd (SQLite store), all
running at once and measured in interleaved rounds:
  export    GET /api/v1/export of the tree's group
  dry run   POST /api/v1/import?mode=replace&dry_run=1 of that unchanged
            export (must plan nothing)
  ratio     dry run / export, median over rounds; the goal <= 2
  wait      the longest a PUT from another client waited while an export
            ran (a read that takes no lock: the baseline), while a dry run
            of the unchanged file ran, then while a real import of it ran
            after 1% of the items changed (every PUT must be answered)
and the growth from size to size (linear: the same as the growth of the
tree), each ratio a median over rounds. The tree: SIZE items in one group, each with one
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


class Tree:
    """A fresh configfsd holding @items items."""

    def __init__(self, binary, items):
        self.items = items
        self.tmp = tempfile.mkdtemp(prefix="configfsd-bench-import-")
        self.node = Node(binary, self.tmp, "n%d" % items, None,
                         ["--body-limit", str(1 << 30), "--threads", "4"])
        self.node.start()
        fill(self.node, items)
        self.doc = self.export()

    def export(self):
        st, _, b = self.node.req("GET", "/api/v1/export?path=" + SUB, None,
                                 None, 600)
        assert st == 200, st
        return b

    def dry(self):
        st, _, b = self.node.req("POST",
                                 "/api/v1/import?mode=replace&dry_run=1",
                                 self.doc, HDR, 600)
        assert st == 200, (st, b[:300])
        plan = json.loads(b)
        assert plan["ops"] == [] and plan["changed"] is False, plan["ops"][:3]
        return plan

    def waits(self):
        """The writer's longest wait during an export (a read that takes no
        lock: the baseline), a dry run, and a real import of the file after
        1% of the items changed."""
        node = self.node
        with Writer(node) as w:
            self.export()
        export_wait = w.longest
        with Writer(node) as w:
            self.dry()
        dry_wait = w.longest
        changed = list(range(0, self.items, 100))
        for lo in range(0, len(changed), 500):
            ops = [{"op": "store", "path": "%s/i%06d/storeme" % (SUB, i),
                    "value": "7"} for i in changed[lo:lo + 500]]
            st, _, b = node.req("POST", "/api/v1/batch",
                                json.dumps({"ops": ops}).encode(), HDR, 120)
            assert st == 200, (st, b)
        with Writer(node) as w:
            st, _, b = node.req("POST", "/api/v1/import?mode=replace",
                                self.doc, HDR, 600)
            assert st == 200, (st, b[:300])
        res = json.loads(b)
        assert len(res["ops"]) == len(changed) and res["changed"] is True, \
            res["ops"][:3]
        after = self.export()
        assert json.loads(after)["root"] == json.loads(self.doc)["root"]
        return export_wait, dry_wait, w.longest

    def stop(self):
        self.node.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    binary = sys.argv[1]
    sizes = [int(a) for a in sys.argv[2:]] or [1000, 10000, 100000]
    rounds = 3
    trees = []
    try:
        for n in sizes:
            trees.append(Tree(binary, n))
        # Rounds, each timing every size's export then dry run back to
        # back, so that load from elsewhere (the machine is shared) hits
        # both sides of a ratio alike; ratios are medians over the rounds.
        t = {n: {"export": [], "dry": []} for n in sizes}
        for _ in range(rounds):
            for tr in trees:
                t0 = time.monotonic()
                tr.export()
                t1 = time.monotonic()
                tr.dry()
                t2 = time.monotonic()
                t[tr.items]["export"].append(t1 - t0)
                t[tr.items]["dry"].append(t2 - t1)
        waits = {tr.items: tr.waits() for tr in trees}
        sizes_mb = {tr.items: len(tr.doc) / 1e6 for tr in trees}
    finally:
        for tr in trees:
            tr.stop()

    def med_ratio(a, b):
        return statistics.median(x / y for x, y in zip(a, b))

    print("%8s %6s %9s %10s %6s %12s %12s %12s" % (
        "items", "MB", "export s", "dry run s", "ratio",
        "wait exp. s", "wait dry s", "wait imp. s"))
    for n in sizes:
        e, d = t[n]["export"], t[n]["dry"]
        print("%8d %6.1f %9.3f %10.3f %6.2f %12.3f %12.3f %12.3f"
              % ((n, sizes_mb[n], min(e), min(d), med_ratio(d, e))
                 + waits[n]))
    print("(export and dry run: best of %d rounds; ratio: median over the "
          "rounds of dry run / export; a PUT's longest wait during an "
          "export, the baseline, a dry run, and a real import of 1%% "
          "changed items)" % rounds)
    pairs = list(zip(sizes, sizes[1:]))
    if len(sizes) > 2:
        pairs.append((sizes[0], sizes[-1]))
    for n0, n1 in pairs:
        print("growth %d -> %d items: export x%.1f, dry run x%.1f "
              "(tree x%.0f; medians over the rounds)"
              % (n0, n1, med_ratio(t[n1]["export"], t[n0]["export"]),
                 med_ratio(t[n1]["dry"], t[n0]["dry"]), n1 / n0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
