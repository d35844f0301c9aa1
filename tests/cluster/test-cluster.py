#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Suite cluster: 3 etcd members and 3 configfsd nodes on loopback ports
(docs/cluster.md). TAP output. Usage: test-cluster.py CONFIGFSD
Every wait is bounded and polls a condition; every load loop is bounded.
"""
import json
import os
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import Cluster, http, metric, wait_for  # noqa: E402

API = "/api/v1/config"
SUB = API + "/02-simple-children"
COMMIT = API + "/04-committable-children"
PICKY_MODULE = None  # argv[2]: tests/cluster/picky_module.c, built


def revision_of(node):
    st, _, b = node.req("GET", "/api/v1", timeout=5)
    return json.loads(b)["revision"] if st == 200 else None


def converge(nodes, timeout=20):
    """All nodes at the same revision, the highest any of them reports."""
    def same():
        revs = [revision_of(n) for n in nodes]
        return revs[0] is not None and len(set(revs)) == 1 and revs[0]
    return wait_for(same, timeout, "nodes to converge")


def exports(nodes):
    out = []
    for n in nodes:
        st, _, b = n.req("GET", "/api/v1/export")
        assert st == 200, (n.name, st, b)
        out.append(b)
    return out


def histories(nodes):
    """Per node, {revision: [its history entries]} of the newest 1000."""
    out = []
    for n in nodes:
        st, _, b = n.req("GET", "/api/v1/history?limit=1000")
        assert st == 200, (n.name, st, b)
        h = {}
        for e in json.loads(b)["entries"]:
            h.setdefault(e["revision"], []).append(e)
        out.append(h)
    return out


def assert_identical(nodes):
    """Every node's export is byte-identical, and so is the history of
    every revision they all still keep (principal and time included: the
    time the change set was committed, not when each node applied it)."""
    converge(nodes)
    ex = exports(nodes)
    for n, e in zip(nodes[1:], ex[1:]):
        assert e == ex[0], "export of %s differs from %s:\n%s\n---\n%s" % (
            n.name, nodes[0].name, e[:2000], ex[0][:2000])
    hs = histories(nodes)
    common = set(hs[0]).intersection(*hs[1:])
    assert common, "no revision in every node's history"
    for n, h in zip(nodes[1:], hs[1:]):
        for rev in sorted(common):
            assert h[rev] == hs[0][rev], "history of %d on %s: %s, on %s: %s" \
                % (rev, n.name, h[rev], nodes[0].name, hs[0][rev])


def mkdir(node, parent, name):
    return node.req("POST", parent, {"name": name})


def show(node, path):
    st, _, b = node.req("GET", path)
    return b.decode() if st == 200 else None


# ---- the tests ----------------------------------------------------------


def t_write_anywhere_seen_everywhere(c):
    """A write on any node appears on the other two."""
    for i, n in enumerate(c.nodes):
        st, _, b = mkdir(n, SUB, "w%d" % i)
        assert st == 201, (st, b)
        st, _, b = n.req("PUT", "%s/w%d/storeme" % (SUB, i), "%d" % (100 + i))
        assert st in (200, 204), (st, b)
    for i in range(3):
        for m in c.nodes:
            wait_for(lambda m=m, i=i: (show(m, "%s/w%d/storeme" % (SUB, i))
                                       or "").strip() == "%d" % (100 + i),
                     10, "%s to see w%d" % (m.name, i))
    # committable items: made on one node, committed on another
    assert mkdir(c.nodes[0], COMMIT + "/pending", "c1")[0] == 201
    c.nodes[1].req("GET", COMMIT + "/pending/c1?min_revision=%d"
                   % revision_of(c.nodes[0]))
    st, _, b = c.nodes[1].req("POST", "/api/v1/rename", {
        "from": "/04-committable-children/pending/c1",
        "to": "/04-committable-children/live/c1"})
    assert st in (200, 201, 204), (st, b)
    wait_for(lambda: c.nodes[2].req("GET", COMMIT + "/live/c1")[0] == 200,
             10, "node2 to see the commit")
    assert_identical(c.nodes)


def t_read_your_writes(c):
    """?min_revision=N on another node waits until N is applied there."""
    a, b = c.nodes[0], c.nodes[2]
    st, h, body = a.req("PUT", SUB + "/w0/storeme", "4242")
    assert st in (200, 204), (st, body)
    rev = int({k.lower(): v for k, v in h.items()}["etag"].strip('"'))
    st, _, body = b.req("GET", SUB + "/w0/storeme?min_revision=%d" % rev)
    assert st == 200 and body.decode().strip() == "4242", (st, body)
    # GET /api/v1 says how far b follows the log; no writer without
    # --forward-writes
    st, _, body = b.req("GET", "/api/v1")
    cl = json.loads(body)["cluster"]
    assert cl["applied"] >= rev and cl["head"] >= rev and cl["watching"] \
        and cl["writer"] is None and cl["is_writer"] is False, cl
    st, _, body = b.req("GET", SUB + "/w0/storeme?min_revision=%d"
                        % (rev + 10 ** 9), timeout=30)
    assert st == 504, (st, body)
    assert json.loads(body)["errno"] in ("ETIMEDOUT", 110), body
    assert json.loads(body)["title"] == "Gateway Timeout", body


def t_waits_hold_no_worker(c):
    """Requests waiting for the node to catch up hold no server worker: 8
    reads with ?min_revision= far ahead (more than the node's workers)
    wait their 5 s and end in 504, and meanwhile the node answers other
    reads and writes at once (a 2 s bound, in place of their 5 s)."""
    b = c.nodes[1]
    far = revision_of(b) + 10 ** 9
    got = []

    def wait_far():
        got.append(b.req("GET", SUB + "/w0/storeme?min_revision=%d" % far,
                         timeout=30)[0])
    ts = [threading.Thread(target=wait_far) for _ in range(8)]
    for t in ts:
        t.start()
    try:
        wait_for(lambda: metric(b, "configfsd_cluster_catch_up_waiting") == 8,
                 10, "8 requests waiting")
        st, _, body = b.req("GET", SUB + "/w0/storeme", timeout=2)
        assert st == 200, (st, body)
        st, _, body = b.req("PUT", SUB + "/w0/storeme", "7", timeout=2)
        assert st in (200, 204), (st, body)
        assert got == [], got  # still waiting
    finally:
        for t in ts:
            t.join()
    assert got == [504] * 8, got
    assert metric(b, "configfsd_cluster_catch_up_waiting") == 0
    assert_identical(c.nodes)


def t_apply_from_watch(c):
    """Another node's writes are applied from the watch, not read again."""
    a, b = c.nodes[0], c.nodes[1]
    assert mkdir(a, SUB, "aw")[0] == 201
    converge(c.nodes)
    before = metric(b, "configfsd_etcd_requests_total")
    t0 = time.monotonic()
    n = 100
    for k in range(n):
        st, _, body = a.req("PUT", SUB + "/aw/storeme", str(k))
        assert st in (200, 204), (st, body)
    converge([a, b])
    took = time.monotonic() - t0
    used = metric(b, "configfsd_etcd_requests_total") - before
    # b applied 100 entries; what it asked etcd meanwhile is its keeper's
    # and idle applier's business (a few a second), not one read each
    assert used < n / 2, "b made %d requests to etcd in %.1f s" % (used, took)
    assert show(b, SUB + "/aw/storeme").strip() == str(n - 1)
    assert_identical(c.nodes)


def t_race_mkdir(c):
    """Two nodes make the same directory at once: one wins, the other gets
    EEXIST as one node would; no node diverges."""
    for k in range(5):
        name = "race%d" % k
        res = [None, None]

        def go(i):
            res[i] = mkdir(c.nodes[i], SUB, name)
        ts = [threading.Thread(target=go, args=(i,)) for i in (0, 1)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        codes = sorted(r[0] for r in res)
        assert codes == [201, 409], (name, res)
        loser = res[0] if res[0][0] == 409 else res[1]
        assert json.loads(loser[2])["errno"] in ("EEXIST", 17), loser
    assert_identical(c.nodes)


def t_race_if_match(c):
    """Two nodes write one attribute with the same If-Match: one wins, the
    other gets 412 as one node would."""
    path = SUB + "/w1/storeme"
    for k in range(5):
        converge(c.nodes)
        st, h, _ = c.nodes[0].req("GET", path)
        etag = {k.lower(): v for k, v in h.items()}["etag"]
        res = [None, None]

        def go(i):
            res[i] = c.nodes[i + 1].req("PUT", path, "%d%d" % (k + 1, i),
                                        {"If-Match": etag})
        ts = [threading.Thread(target=go, args=(i,)) for i in (0, 1)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        codes = sorted(r[0] for r in res)
        assert codes in ([200, 412], [204, 412]), (k, res)
        winner = 0 if res[0][0] != 412 else 1
        converge(c.nodes)
        for n in c.nodes:
            assert show(n, path).strip() == "%d%d" % (k + 1, winner), n.name
    assert_identical(c.nodes)


def lost_race(st, b):
    """503 EAGAIN: the request lost the race to other nodes more times than
    the bound (docs/cluster.md); nothing was acknowledged, nothing kept."""
    return st == 503 and json.loads(b).get("errno") == "EAGAIN"


def write_load(c, nodes, tag, stop, acked, errors, limit=400):
    """Bounded mixed load: mkdir + store on every node in @nodes."""
    def worker(n, wid):
        for j in range(limit):
            if stop.is_set():
                return
            name = "%s-%d-%d" % (tag, wid, j)
            try:
                st, _, b = mkdir(n, SUB, name)
                if lost_race(st, b):
                    continue
                if st == 201:
                    acked.append(("dir", name))
                    st, _, b = n.req("PUT", "%s/%s/storeme" % (SUB, name),
                                     "%d" % j)
                    if st in (200, 204):
                        acked.append(("val", name, "%d" % j))
                    elif not lost_race(st, b):
                        errors.append((n.name, st, b))
                else:
                    errors.append((n.name, st, b))
            except OSError:
                pass  # the node was killed under us: not acknowledged
    ts = [threading.Thread(target=worker, args=(n, i))
          for i, n in enumerate(nodes)]
    for t in ts:
        t.start()
    return ts


def check_acked(nodes, acked):
    for n in nodes:
        st, _, b = n.req("GET", SUB + "?depth=2")
        assert st == 200, (n.name, st)
        for a in acked:
            if a[0] == "dir":
                assert n.req("GET", "%s/%s" % (SUB, a[1]))[0] == 200, (
                    n.name, "lost acknowledged mkdir", a)
            else:
                v = show(n, "%s/%s/storeme" % (SUB, a[1]))
                assert v is not None and v.strip() == a[2], (
                    n.name, "lost acknowledged store", a, v)


def t_kill_node_under_load(c):
    """SIGKILL of a configfsd node during writes on all nodes (3 rounds):
    every acknowledged write is on the survivors and the restarted node."""
    for rnd in range(3):
        stop = threading.Event()
        acked, errors = [], []
        ts = write_load(c, c.nodes, "k%d" % rnd, stop, acked, errors)
        victim = c.nodes[rnd % 3]
        wait_for(lambda: len(acked) >= 20, 60, "some acknowledged writes")
        victim.kill()
        n0 = len(acked)
        wait_for(lambda: len(acked) >= n0 + 10, 60, "writes on survivors")
        stop.set()
        for t in ts:
            t.join(60)
        assert not errors, errors[:5]
        victim.start()
        converge(c.nodes)
        check_acked(c.nodes, acked)
        assert_identical(c.nodes)


def t_etcd_member_loss(c):
    """One etcd member down: writes go on. Two down: writes 503 with a
    clear problem; a read 503 too (it cannot be linearizable), served
    with ?consistency=serializable and saying it may be stale; back:
    writes resume."""
    a = c.nodes[0]
    c.etcd.kill(2)
    for k in range(5):
        st, _, b = a.req("PUT", SUB + "/w0/storeme", "7%d" % k)
        assert st in (200, 204), (st, b)
    c.etcd.kill(1)
    st, _, b = a.req("PUT", SUB + "/w0/storeme", "8", timeout=60)
    assert st == 503, (st, b)
    p = json.loads(b)
    assert "etcd" in p["detail"] and "undone" in p["detail"], p
    st, _, b = a.req("GET", SUB + "/w0/storeme", timeout=60)
    assert st == 503, (st, b)
    p = json.loads(b)
    assert "etcd" in p["detail"] and "serializable" in p["detail"], p
    ser = SUB + "/w0/storeme?consistency=serializable"
    st, _, b = a.req("GET", ser)
    assert st == 200 and b.decode().strip() == "74", (st, b)
    for n in c.nodes:  # served, and saying they may be stale
        def stale(n=n):
            st, h, b = n.req("GET", ser)
            assert st == 200, (n.name, st, b)
            return "x-configfsd-stale" in {k.lower() for k in h}
        wait_for(stale, 30, n.name + " to say it may be stale")
    st, _, b = a.req("GET", "/readyz")
    assert st == 503 and b"etcd" in b, (st, b)
    c.etcd.restart(1)
    c.etcd.restart(2)
    for i in (1, 2):
        wait_for(lambda i=i: c.etcd.healthy(i), 30, "etcd member back")

    def write_ok():
        return a.req("PUT", SUB + "/w0/storeme", "9")[0] in (200, 204)
    wait_for(write_ok, 60, "writes to resume")
    for n in c.nodes:
        wait_for(n.ready, 30, n.name + " ready again")
    assert_identical(c.nodes)
    for n in c.nodes:
        assert show(n, SUB + "/w0/storeme").strip() == "9"


def sse_ids(node, last_id, until, out, timeout=30):
    """Follow the event stream of @node from @last_id, appending each event
    id to @out, until @until is seen; returns quietly if the node dies."""
    import urllib.request
    req = urllib.request.Request(node.url("/api/v1/events"),
                                 headers={"Last-Event-ID": str(last_id)})
    end = time.monotonic() + timeout
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            while time.monotonic() < end:
                line = r.readline()
                if not line:
                    return
                if line.startswith(b"id: "):
                    out.append(int(line[4:]))
                    if out[-1] >= until:
                        return
    except OSError:
        return


def t_sse_resume_across_nodes(c):
    """An event stream moved from a killed node to another with
    Last-Event-ID sees every revision once, in order."""
    r0 = converge(c.nodes)
    ids = []
    t = threading.Thread(target=sse_ids,
                         args=(c.nodes[0], r0, 10 ** 12, ids, 60))
    t.start()
    for k in range(10):
        n = c.nodes[1 + k % 2]
        st, _, b = n.req("PUT", SUB + "/w1/storeme", "%d" % (500 + k))
        assert st in (200, 204), (st, b)
    wait_for(lambda: len(ids) >= 5, 30, "events on node0")
    c.nodes[0].kill()
    t.join(30)
    seen = list(ids)
    last = seen[-1]
    for k in range(10):
        n = c.nodes[1 + k % 2]
        st, _, b = n.req("PUT", SUB + "/w2/storeme", "%d" % (600 + k))
        assert st in (200, 204), (st, b)
    final = revision_of(c.nodes[2])
    more = []
    sse_ids(c.nodes[1], last, final, more, 30)
    got = seen + more
    assert got == list(range(r0 + 1, final + 1)), (r0, final, seen, more)
    c.nodes[0].start()
    assert_identical(c.nodes)


BIG = 6000  # items in big_import_doc()


def big_name(i):
    """The name of item @i of big_import_doc(): 240 characters that deflate
    no better than base64, so the log entry of the import stays too big
    for one etcd request even deflated (about 1.2 MB)."""
    import random
    import string
    r = random.Random(i)
    alphabet = string.ascii_letters + string.digits + "-_"
    return "big-%04d-%s" % (i, "".join(r.choice(alphabet) for _ in range(240)))


def big_import_doc(node, model_name, count):
    """An export of @node with @count more items, copies of @model_name
    named big_name(): more than one etcd request holds, even deflated."""
    import copy
    st, _, b = node.req("GET", "/api/v1/export")
    assert st == 200, (st, b)
    doc = json.loads(b)
    sub = [n for n in doc["root"]["children"]
           if n["name"] == "02-simple-children"][0]
    model = [n for n in sub["children"] if n["name"] == model_name][0]
    for i in range(count):
        ch = copy.deepcopy(model)
        ch["name"] = big_name(i)
        ch["path"] = "/02-simple-children/" + ch["name"]
        for v in ch.get("values", []):
            if v["name"] == "storeme":
                v["value"] = str(i)
        sub["children"].append(ch)
    return doc


def shut(nodes, proxies=()):
    """Stop @nodes (those never started too), then close @proxies."""
    for n in nodes:
        n.stop()
    for p in proxies:
        p.close()


def lossy_store(c, prefix, marker):
    """(dropper, proxies, etcd:// URL): members 0 and 1 of @c's etcd
    behind LossyProxy instances sharing a Dropper for @marker; close the
    proxies when done."""
    from cluster import Dropper, LossyProxy
    drop = Dropper(marker)
    proxies = [LossyProxy(c.etcd.client[i], drop) for i in (0, 1)]
    url = "etcd://%s%s" % (",".join("127.0.0.1:%d" % p.port
                                    for p in proxies), prefix)
    return drop, proxies, url


def t_answer_lost(c):
    """An append etcd made whose answer was lost (the connection broke
    after the commit): the node asks the next member, loses the CAS to
    its own entry, knows it by its nonce and answers as made (a mkdir
    201, not 409); an import in chunks keeps its chunks, and the other
    node applies it."""
    import base64
    from cluster import Node
    prefix = "/lost"
    drop, proxies, lossy = lossy_store(
        c, prefix, b'"%s"' % base64.b64encode((prefix + "/head").encode()))
    direct = "etcd://%s%s" % (c.etcd.endpoints(), prefix)
    a = Node(c.binary, c.tmp, "lost-a", lossy, ["--body-limit", "16777216"])
    b = Node(c.binary, c.tmp, "lost-b", direct)
    try:
        a.start()
        b.start()
        drop.arm()
        st, _, body = mkdir(a, SUB, "lost-1")
        assert drop.dropped == 1, "no answer was lost"
        assert st == 201, (st, body)
        assert metric(a, "configfsd_cluster_cas_conflicts_total") == 0
        st, _, body = a.req("PUT", SUB + "/lost-1/storeme", "1")
        assert st in (200, 204), (st, body)
        assert_identical([a, b])
        doc = big_import_doc(a, "lost-1", BIG)
        drop.arm()
        st, _, body = a.req("POST", "/api/v1/import", doc, timeout=120)
        assert drop.dropped == 2, "no answer was lost"
        assert st == 200, (st, body[:300])
        rev = json.loads(body)["revision"]

        def applied():
            r = b.req("GET", "%s/%s/storeme?min_revision=%d"
                      % (SUB, big_name(BIG - 1), rev), timeout=60)
            return None if r[0] == 504 else r
        st, _, body = wait_for(applied, 120, "b to apply the import")
        assert st == 200 and body.decode().strip() == str(BIG - 1), (st, body)
        assert_identical([a, b])
    finally:
        shut([a, b], proxies)


def t_big_import(c):
    """An import larger than one etcd request (chunks, then one CAS) is
    applied on every node at once and entirely."""
    import base64
    doc = big_import_doc(c.nodes[0], "w0", BIG)
    st, _, b = c.nodes[1].req("POST", "/api/v1/import", doc, timeout=120)
    assert st == 200, (st, b[:500])
    rev = json.loads(b).get("revision")
    for n in c.nodes:
        # A follower fetches the chunks and replays BIG mkdirs through the
        # callbacks: on a slow (sanitizer) build that may take longer than
        # one ?min_revision= wait (5 s), so a 504 is asked again, bounded.
        def applied(n=n):
            r = n.req("GET", "%s/%s/storeme?min_revision=%d"
                      % (SUB, big_name(BIG - 1), rev or 0), timeout=60)
            return None if r[0] == 504 else r
        st, _, b = wait_for(applied, 120, n.name + " to apply the import")
        assert st == 200 and b.decode().strip() == str(BIG - 1), \
            (n.name, st, b)
    # it did go through chunks: they are in etcd, named by the log entry
    ep = "http://127.0.0.1:%d/v3/kv/range" % c.etcd.client[0]
    k = (c.prefix + "/chunk/").encode()
    st, _, b = http("POST", ep, {
        "key": base64.b64encode(k).decode(),
        "range_end": base64.b64encode(k[:-1] + b"0").decode(),
        "keys_only": True})
    assert st == 200 and int(json.loads(b).get("count", 0)) >= 2, b[:300]
    assert_identical(c.nodes)


def keeper_done(c, prefix, node):
    """Wait until @node's keeper (once a second: the registry, then the
    snapshot) has finished a round that knew its last revision: it has
    registered that revision, and then the next one, made here."""
    def registered(rev):
        return any(int(v or 0) >= rev for _, v in
                   etcd_kvs(c, prefix + "/nodes/", prefix=True))
    rev = revision_of(node)
    wait_for(lambda: registered(rev), 30, "the registry at %d" % rev)
    st, _, b = node.req("PUT", SUB + "/g-0/storeme", str(rev))
    assert st in (200, 204), (st, b)
    wait_for(lambda: registered(rev + 1), 30, "the registry at %d" % (rev + 1))


def t_snapshot_growth(c):
    """Past the first snapshot, the next one waits until the log since it
    holds the snapshot's size (--snapshot-growth 100, the default), not
    only --snapshot-every revisions: a snapshot carries the journal, so by
    revisions alone each would cost more than the log it replaces."""
    from cluster import Node
    prefix = "/growth"
    n = Node(c.binary, c.tmp, "growth", "etcd://%s%s"
             % (c.etcd.endpoints(), prefix), ["--snapshot-every", "10"])
    try:
        n.start()
        # a snapshot of tens of KiB even deflated: 150 items with names
        # that do not compress
        assert mkdir(n, SUB, "g-model")[0] == 201
        st, _, b = n.req("POST", "/api/v1/import",
                         big_import_doc(n, "g-model", 150), timeout=60)
        assert st == 200, (st, b[:300])
        writes([n], "g", 12)
        first = wait_for(lambda: snapshot_of(c, prefix), 30,
                         "the first snapshot")
        assert first["length"] > 20000, first
        # 20 small changes: twice --snapshot-every, a few KiB of log
        writes([n], "h", 20)
        keeper_done(c, prefix, n)
        assert snapshot_of(c, prefix) == first, "a snapshot for a few KiB"
        # changes of at most 1000 bytes each in the log, one at a time
        second, made = None, 0
        while second is None and made < 3000:
            st, _, b = n.req("PUT", SUB + "/g-0/storeme", str(made))
            assert st in (200, 204), (st, b)
            made += 1
            s = snapshot_of(c, prefix)
            second = s if s["revision"] > first["revision"] else None
        assert second, "no second snapshot after %d changes" % made
        gap = second["revision"] - first["revision"]
        assert gap * 1000 >= first["length"], (gap, first)
    finally:
        n.stop()


def t_log_deflated(c):
    """Log entries are deflated (format 3): etcd holds a zlib stream of the
    entry's JSON, a fraction of its size, and every node reads it back."""
    import zlib
    name = "deflated-" + "d" * 200
    st, _, b = mkdir(c.nodes[0], SUB, name)
    assert st == 201, (st, b)
    rev = revision_of(c.nodes[0])
    kv = etcd_kvs(c, c.prefix + "/log/%020d" % rev)
    assert kv, "no log entry at %d" % rev
    raw = kv[0][1]
    text = zlib.decompress(raw)
    entry = json.loads(text)
    assert entry["v"] == 3 and entry["first"] == rev, entry
    assert entry["sets"][0]["c"][0]["p"] == "/02-simple-children/" + name
    assert len(raw) * 2 < len(text), (len(raw), len(text))
    for n in c.nodes[1:]:
        assert n.req("GET", "%s/%s?min_revision=%d" % (SUB, name, rev))[0] \
            == 200, n.name
    assert_identical(c.nodes)


def t_log_formats_1_2(c):
    """Log entries written in the earlier formats are read as ever: format
    1 (revision, principal and time with each change set) and format 2
    (time and principal once, plain JSON). A node starting on such a log
    applies them, with their principal and time in its history."""
    from cluster import Node
    prefix = "/format1"
    sets = [{"r": 1, "u": "alice", "t": 1700000000123456,
             "c": [{"o": 1, "p": "/02-simple-children/old"}]},
            {"r": 2, "u": "bob", "t": 1700000000123456,
             "c": [{"o": 3, "p": "/02-simple-children/old/storeme",
                    "a": "NDI=", "h": "MAo="}]}]
    entry = {"v": 1, "first": 1, "last": 2, "nonce": "0123456789abcdef",
             "sets": sets}
    etcd_put(c, prefix + "/log/%020d" % 1, json.dumps(entry).encode())
    entry = {"v": 2, "first": 3, "last": 4, "nonce": "0123456789abcdee",
             "t": 1700000001000000, "u": "carol",
             "sets": [{"c": [{"o": 1, "p": "/02-simple-children/two"}]},
                      {"c": [{"o": 3, "p": "/02-simple-children/two/storeme",
                              "a": "Nw==", "h": "MAo="}]}]}
    etcd_put(c, prefix + "/log/%020d" % 3, json.dumps(entry).encode())
    etcd_put(c, prefix + "/head", b"4")
    n = Node(c.binary, c.tmp, "format1", "etcd://%s%s"
             % (c.etcd.endpoints(), prefix))
    try:
        n.start()
        assert (show(n, SUB + "/old/storeme") or "").strip() == "42"
        assert (show(n, SUB + "/two/storeme") or "").strip() == "7"
        st, _, b = n.req("GET", "/api/v1/history")
        assert st == 200, (st, b)
        got = sorted((e["revision"], e["principal"], e["time"])
                     for e in json.loads(b)["entries"])
        t = "2023-11-14T22:13:20.123456Z"
        t2 = "2023-11-14T22:13:21.000000Z"
        assert got == [(1, "alice", t), (2, "bob", t),
                       (3, "carol", t2), (4, "carol", t2)], got
    finally:
        n.stop()


def t_unreadable_entry(c):
    """A log entry this node cannot read (a newer configfsd's format, or
    damaged: a deflated entry cut short) is a problem of the node, step
    "log", errno EIO: /readyz 503, counted in /metrics; nothing after it
    is applied, and serializable reads go on (a linearizable one cannot:
    504, the node cannot reach the head). Never skipped."""
    import zlib
    from cluster import Node

    def newer(rev):
        return json.dumps({"v": 4, "first": rev + 1, "last": rev + 1,
                           "x": []}).encode()

    def cut_short(rev):
        return zlib.compress(json.dumps(
            {"v": 3, "first": rev + 1, "last": rev + 1, "nonce": "0" * 16,
             "sets": [{"c": [{"o": 1, "p": "/02-simple-children/u2"}]}]})
            .encode())[:-6]

    for k, make in enumerate((newer, cut_short)):
        prefix = "/unreadable%d" % k
        n = Node(c.binary, c.tmp, "unreadable%d" % k, "etcd://%s%s"
                 % (c.etcd.endpoints(), prefix))
        try:
            n.start()
            assert mkdir(n, SUB, "u1")[0] == 201
            rev = revision_of(n)
            etcd_put(c, prefix + "/log/%020d" % (rev + 1), make(rev))
            etcd_put(c, prefix + "/head", str(rev + 1).encode())

            def refused():
                st, _, b = n.req("GET", "/readyz")
                return st == 503 and [p for p in json.loads(b).get(
                    "problems", []) if p.get("step") == "log"]
            got = wait_for(refused, 30, "the problem in /readyz")
            assert got[0]["errno"] == "EIO", (make.__name__, got)
            assert metric(n, "configfsd_cluster_replay_errors_total") >= 1
            # more entries come; each wakes the stuck node, and must not
            # cost it another read of the log (it reads again after 200 ms,
            # then twice as long each time)
            before = metric(n, "configfsd_etcd_requests_total")
            for i in range(2, 62):
                etcd_put(c, prefix + "/log/%020d" % (rev + i),
                         newer(rev + i - 1))
                etcd_put(c, prefix + "/head", str(rev + i).encode())
            wait_for(lambda: metric(n, "configfsd_cluster_watch_lag") >= 61,
                     30, "the watch to bring the 60 entries")
            sent = metric(n, "configfsd_etcd_requests_total") - before
            assert sent < 20, "%d etcd requests for 60 entries" % sent
            assert revision_of(n) == rev
            ser = "/storeme?consistency=serializable"
            assert show(n, SUB + "/u1" + ser) is not None
            assert show(n, SUB + "/u2" + ser) is None
            st, _, b = n.req("GET", SUB + "/u1/storeme")
            assert st == 504 and b"serializable" in b, (st, b)
        finally:
            n.stop()


def t_snapshot_lock_answer_lost(c):
    """The answer to a node's take of the snapshot lock is lost (etcd gave
    it the lock): the node finds the lock is its own, writes the snapshot
    and lets the lock go. Before, it held the lock under its lease without
    knowing, and no node wrote a snapshot (nor trimmed the log) again for
    as long as it lived."""
    import base64
    from cluster import Node
    prefix = "/snaplost"
    drop, proxies, url = lossy_store(c, prefix, b'"%s"' % base64.b64encode(
        (prefix + "/snapshot-lock").encode()))
    n = Node(c.binary, c.tmp, "snaplost", url,
             ["--snapshot-every", "10", "--snapshot-growth", "0"])
    try:
        n.start()
        drop.arm()
        writes([n], "sl", 12)
        wait_for(lambda: drop.dropped == 1, 30, "the lock's answer lost")
        wait_for(lambda: (snapshot_of(c, prefix) or {}).get("revision", 0)
                 >= 10, 30, "a snapshot")
        wait_for(lambda: not etcd_kvs(c, prefix + "/snapshot-lock"), 30,
                 "the lock let go")
        assert metric(n, "configfsd_cluster_snapshots_written_total") == 1
    finally:
        shut([n], proxies)


def t_snapshot_publish_answer_lost(c):
    """Every answer to a node's publishing of a snapshot is lost, though
    etcd made it (each member it asks): the node does not know it is
    published, and keeps its parts. Before, it deleted them, leaving the
    pointer naming nothing: no node could start from the cluster."""
    import base64
    from cluster import Node
    prefix = "/publost"
    drop, proxies, lossy = lossy_store(
        c, prefix, b'"request_put":{"key":"%s"' % base64.b64encode(
            (prefix + "/snapshot").encode()))
    extra = ["--snapshot-every", "10", "--snapshot-growth", "0"]
    a = Node(c.binary, c.tmp, "publost-a", lossy, extra)
    fresh = Node(c.binary, c.tmp, "publost-fresh",
                 "etcd://%s%s" % (c.etcd.endpoints(), prefix), extra)
    try:
        a.start()
        # every try (each member, and libcurl's own retry of a request on
        # a kept connection that closed without an answer), until the
        # node gives up and lets the lock go
        drop.arm(times=10 ** 6)
        writes([a], "pl", 12)
        wait_for(lambda: drop.dropped >= len(proxies) and
                 not etcd_kvs(c, prefix + "/snapshot-lock"), 30,
                 "the node to give up publishing")
        drop.arm(times=0)
        snap = snapshot_of(c, prefix)
        assert snap and snap["revision"] >= 10, snap
        snapshot_bytes(c, prefix, snap)  # every part the pointer names
        # a node that joins now starts from that snapshot
        fresh.start()
        assert metric(fresh, "configfsd_cluster_snapshots_loaded_total") \
            == 1
        assert_identical([a, fresh])
    finally:
        shut([fresh, a], proxies)


def t_subsystem_set(c):
    """A node whose subsystems differ from the cluster's refuses to join,
    naming the difference."""
    from cluster import Node
    n = Node(c.binary, c.tmp, "odd", c.store_url(), ["--no-samples"])
    try:
        n.start()
        raise AssertionError("a node without the samples joined")
    except RuntimeError:
        pass
    log = n.read_log()
    assert "differ from the cluster" in log, log
    assert "only in the cluster: " in log and "subsystem 02-simple-children" \
        in log, log


def t_tls(c):
    """etcds:// with a CA and a client certificate: a node on a TLS etcd
    that demands client certificates works; one without them refuses to
    start, saying why."""
    from cluster import Etcd, Node, make_tls
    d = os.path.join(c.tmp, "tls")
    os.mkdir(d)
    tls = make_tls(d)
    e = Etcd(d, n=1, tls=tls)
    try:
        e.start()
        url = "etcds://127.0.0.1:%d/tls" % e.client[0]
        good = Node(c.binary, d, "tls-node", url,
                    ["--etcd-cacert", tls["ca.pem"],
                     "--etcd-cert", tls["client.pem"],
                     "--etcd-key", tls["client.key"]])
        good.start()
        try:
            assert mkdir(good, SUB, "t1")[0] == 201
            good.req("PUT", SUB + "/t1/storeme", "31")
            good.stop()
            good.start()  # rebuilt from etcd over TLS
            assert show(good, SUB + "/t1/storeme").strip() == "31"
        finally:
            good.stop()
        bad = Node(c.binary, d, "tls-bad", url,
                   ["--etcd-cacert", tls["ca.pem"]])
        try:
            bad.start()
            raise AssertionError("joined without a client certificate")
        except RuntimeError:
            pass
        assert "Failed to open the etcd cluster" in bad.read_log() and \
            "Permission denied" in bad.read_log(), bad.read_log()
    finally:
        e.stop()


def t_auth(c):
    """etcd with authentication: a node with --etcd-user and the right
    password file works; a wrong password refuses to start."""
    from cluster import Etcd, Node
    d = os.path.join(c.tmp, "auth")
    os.mkdir(d)
    e = Etcd(d, n=1)
    try:
        e.start()
        api = "http://127.0.0.1:%d/v3/auth/" % e.client[0]
        for call, body in (("user/add", {"name": "root", "password": "pw0"}),
                           ("role/add", {"name": "root"}),
                           ("user/grant", {"user": "root", "role": "root"}),
                           ("enable", {})):
            st, _, b = http("POST", api + call, body)
            assert st == 200 or call == "role/add", (call, st, b)
        for name, pw in (("good", "pw0"), ("bad", "nope")):
            with open(os.path.join(d, name + ".pw"), "w") as f:
                f.write(pw + "\n")
        url = "etcd://127.0.0.1:%d/auth" % e.client[0]
        good = Node(c.binary, d, "auth-node", url,
                    ["--etcd-user", "root", "--etcd-password-file",
                     os.path.join(d, "good.pw")])
        good.start()
        try:
            assert mkdir(good, SUB, "a1")[0] == 201
            good.stop()
            good.start()  # rebuilt from etcd, authenticated
            assert good.req("GET", SUB + "/a1")[0] == 200
        finally:
            good.stop()
        bad = Node(c.binary, d, "auth-bad", url,
                   ["--etcd-user", "root", "--etcd-password-file",
                    os.path.join(d, "bad.pw")])
        try:
            bad.start()
            raise AssertionError("joined with a wrong password")
        except RuntimeError:
            pass
        assert "Permission denied" in bad.read_log(), bad.read_log()
    finally:
        e.stop()


PICKY = API + "/picky"


def t_replay_problem(c):
    """A change another node accepted and a callback refuses here is a
    replay problem on this node: in /readyz, GET /api/v1, /metrics and the
    log; the node goes on applying later change sets and stays not ready
    until the item is made again or it is rebuilt from the log with a
    module that accepts the change."""
    from cluster import Node
    if not PICKY_MODULE:
        raise AssertionError("usage: test-cluster.py CONFIGFSD PICKY_MODULE")
    url = "etcd://%s/picky" % c.etcd.endpoints()
    extra = ["--module", PICKY_MODULE]
    a, b, cc = (Node(c.binary, c.tmp, "picky-" + x, url, extra,
                     env={"CFS_PICKY_REFUSE": "refused-on-b"} if x == "b"
                     else None) for x in "abc")
    nodes = [a, b, cc]
    try:
        for n in nodes:
            n.start()
        assert mkdir(a, PICKY, "x")[0] == 201
        st, _, body = a.req("PUT", PICKY + "/x/value", "kept")
        assert st in (200, 204), (st, body)
        assert_identical(nodes)
        errors0 = metric(b, "configfsd_cluster_replay_errors_total")
        # the module refuses it on b only, when b writes it itself ...
        st, _, body = b.req("PUT", PICKY + "/x/value", "refused-on-b")
        assert st == 422 and json.loads(body)["errno"] == "EINVAL", (st, body)
        # ... and when b applies it from a's change set
        st, _, body = a.req("PUT", PICKY + "/x/value", "refused-on-b")
        assert st in (200, 204), (st, body)
        rev = revision_of(a)
        for n in (a, cc):
            wait_for(lambda n=n: show(n, PICKY + "/x/value")
                     == "refused-on-b", 10, n.name + " to hold the change")
        wait_for(lambda: revision_of(b) == rev, 10, "b to apply the change")

        # /readyz: 503, naming the path, the step and the errno
        st, _, body = b.req("GET", "/readyz")
        assert st == 503, (st, body)
        doc = json.loads(body)
        want = {"path": "/picky/x/value", "step": "store",
                "errno": "EINVAL"}
        assert any(all(p.get(k) == v for k, v in want.items())
                   for p in doc["problems"]), doc
        # GET /api/v1 lists it; /metrics counts it; the log says it
        doc = json.loads(b.req("GET", "/api/v1")[2])
        assert any(p["path"] == "/picky/x/value" for p in doc["problems"]), doc
        assert metric(b, "configfsd_cluster_replay_errors_total") \
            == errors0 + 1
        assert metric(b, "configfsd_replay_problems") >= 1
        log = b.read_log()
        assert "refused here" in log and "/picky/x/value" in log \
            and "revision %d" % rev in log, log
        # b kept its value: it now differs from the cluster, and says so
        assert show(b, PICKY + "/x/value") == "kept"
        for n in (a, cc):
            assert n.req("GET", "/readyz")[0] == 200, n.name

        # Later change sets: b goes on applying them (nothing is skipped
        # silently, and nothing after the refused one is held back) ...
        assert mkdir(a, PICKY, "y")[0] == 201
        assert a.req("PUT", PICKY + "/y/value", "later")[0] in (200, 204)
        rev = revision_of(a)
        wait_for(lambda: revision_of(b) == rev, 10, "b to follow")
        assert show(b, PICKY + "/y/value") == "later"
        # ... a later store at the refused path that b accepts makes the
        # trees equal again, but the problem stays: b stays not ready
        assert a.req("PUT", PICKY + "/x/value", "again")[0] in (200, 204)
        rev = revision_of(a)
        wait_for(lambda: revision_of(b) == rev, 10, "b to follow")
        assert show(b, PICKY + "/x/value") == "again"
        assert b.req("GET", "/readyz")[0] == 503
        assert metric(b, "configfsd_cluster_replay_errors_total") \
            == errors0 + 1

        # Settled like on a single node: the item made again (here on
        # another node) clears the problems under it
        assert a.req("DELETE", PICKY + "/x")[0] in (200, 204)
        assert mkdir(a, PICKY, "x")[0] == 201
        wait_for(b.ready, 10, "b ready once x is made again")
        assert_identical(nodes)

        # Restarted, b rebuilds its tree from the log: a value its module
        # refuses is a replay problem again (not ready, logged); with the
        # module accepting it, b holds exactly what the others hold.
        assert a.req("PUT", PICKY + "/x/value", "refused-on-b")[0] \
            in (200, 204)
        rev = revision_of(a)
        wait_for(lambda: revision_of(b) == rev, 10, "b to follow")
        assert b.req("GET", "/readyz")[0] == 503
        b.stop()
        b.start(wait_ready=False)
        wait_for(lambda: revision_of(b) == rev, 10, "b to rebuild")
        st, _, body = b.req("GET", "/readyz")
        assert st == 503 and b"/picky/x/value" in body, (st, body)
        assert "could not be replayed" in b.read_log()
        b.stop()
        b.env = {}
        b.start()
        assert_identical(nodes)
    finally:
        for n in nodes:
            n.stop()


# ---- snapshots, trimming, etcd compaction --------------------------------


def etcd_api(c, api):
    """The URL of @api on the first etcd member that runs."""
    up = [p for p, proc in zip(c.etcd.client, c.etcd.procs) if proc]
    return "http://127.0.0.1:%d%s" % (up[0], api)


def etcd_kvs(c, key, prefix=False, keys_only=False):
    """[(key, value bytes)] of @key (or every key under it) in etcd."""
    import base64
    k = key.encode()
    body = {"key": base64.b64encode(k).decode()}
    if prefix:
        body["range_end"] = base64.b64encode(k[:-1] + bytes([k[-1] + 1])) \
            .decode()
    if keys_only:
        body["keys_only"] = True
    st, _, b = http("POST", etcd_api(c, "/v3/kv/range"), body)
    assert st == 200, (st, b)
    return [(base64.b64decode(kv["key"]).decode(),
             base64.b64decode(kv.get("value", "")))
            for kv in json.loads(b).get("kvs", [])]


def etcd_put(c, key, value):
    import base64
    st, _, b = http("POST", etcd_api(c, "/v3/kv/put"), {
        "key": base64.b64encode(key.encode()).decode(),
        "value": base64.b64encode(value).decode()})
    assert st == 200, (st, b)


def snapshot_of(c, prefix):
    kv = etcd_kvs(c, prefix + "/snapshot")
    return json.loads(kv[0][1]) if kv else None


def first_log_revision(c, prefix):
    keys = etcd_kvs(c, prefix + "/log/", prefix=True, keys_only=True)
    return int(keys[0][0].rsplit("/", 1)[1]) if keys else None


def trimmed_past(c, prefix, rev):
    """The log holds no entry at or below @rev: its first entry is later,
    or it is empty (a snapshot taken at its head trims all of it)."""
    first = first_log_revision(c, prefix)
    return first is None or first > rev


def metric_sum(nodes, name):
    return sum(metric(n, name) for n in nodes)


def writes(nodes, tag, count):
    """@count acknowledged changes, round robin over @nodes (an item is
    made and written on the same node: another may not hold it yet)."""
    for k in range(count):
        n = nodes[(k // 2) % len(nodes)]
        if k % 2 == 0:
            st, _, b = mkdir(n, SUB, "%s-%d" % (tag, k))
            assert st == 201, (n.name, st, b)
        else:
            st, _, b = n.req("PUT", "%s/%s-%d/storeme" % (SUB, tag, k - 1),
                             "%d" % k)
            assert st in (200, 204), (n.name, st, b)


def snapshot_bytes(c, prefix, snap):
    """The parts of the published snapshot @snap, joined, checked against
    its pointer's length and SHA-256."""
    import hashlib
    parts = etcd_kvs(c, prefix + "/snap/%s/" % snap["id"], prefix=True)
    assert len(parts) == snap["parts"], (len(parts), snap)
    stored = b"".join(v for _, v in sorted(parts))
    assert len(stored) == snap["length"], (len(stored), snap)
    assert hashlib.sha256(stored).hexdigest() == snap["sha256"], snap
    return stored


def load_snapshot_format_1(c, cache, revision):
    """A snapshot of version 1 (parts not deflated, no "size") still
    loads: @cache at @revision, published as version 1 under a prefix of
    its own, is where a new node starts, history included."""
    import hashlib
    from cluster import Node
    prefix = "/snaps-v1"
    part = 640 * 1024
    chunks = [cache[k:k + part] for k in range(0, len(cache), part)]
    for k, v in enumerate(chunks):
        etcd_put(c, prefix + "/snap/v1v1v1v1v1v1v1v1/%06d" % k, v)
    etcd_put(c, prefix + "/snapshot", json.dumps({
        "v": 1, "revision": revision, "id": "v1v1v1v1v1v1v1v1",
        "parts": len(chunks), "length": len(cache),
        "sha256": hashlib.sha256(cache).hexdigest()}).encode())
    etcd_put(c, prefix + "/head", str(revision).encode())
    n = Node(c.binary, c.tmp, "snap-v1", "etcd://%s%s"
             % (c.etcd.endpoints(), prefix))
    try:
        n.start()
        assert metric(n, "configfsd_cluster_snapshots_loaded_total") == 1
        assert revision_of(n) == revision, (revision_of(n), revision)
        st, _, body = n.req("GET", "/api/v1/history?limit=10000")
        assert st == 200, (st, body)
        revs = {e["revision"] for e in json.loads(body)["entries"]}
        assert 1 in revs and revision in revs, sorted(revs)[:5]
        assert show(n, SUB + "/s0-0/storeme") is not None
    finally:
        n.stop()


def t_snapshot_trim_and_load(c):
    """Every N revisions one node publishes a snapshot and trims the log
    below it, and the parts of big batches of the revisions it trims,
    named or not; a new node starts from the snapshot, byte-identical.
    The snapshot is the cache deflated; one of version 1 still loads."""
    import zlib
    from cluster import Node
    prefix = "/snaps"
    url = "etcd://%s%s" % (c.etcd.endpoints(), prefix)
    # a snapshot each 20 revisions, however little the log grew
    extra = ["--snapshot-every", "20", "--snapshot-growth", "0"]
    a, b = (Node(c.binary, c.tmp, "snap-" + x, url, extra) for x in "ab")
    fresh = Node(c.binary, c.tmp, "snap-fresh", url, extra)
    nodes = [a, b]
    # parts no entry names: a node killed between the parts of a big
    # batch at revision 5 and its append (someone else appended 5), and
    # an upload still in flight for a revision far ahead
    orphan = prefix + "/chunk/%020d-%s/000000" % (5, "0badc0de0badc0de")
    ahead = prefix + "/chunk/%020d-%s/000000" % (10 ** 9, "feedfacefeedface")
    etcd_put(c, orphan, b"{")
    etcd_put(c, ahead, b"{")
    try:
        for n in nodes:
            n.start()
        for phase in range(3):  # each past the next snapshot
            writes(nodes, "s%d" % phase, 24)
            rev = converge(nodes)
            # the snapshot due: no node is 20 revisions past it any more
            wait_for(lambda: (snapshot_of(c, prefix) or {})
                     .get("revision", 0) > rev - 20, 30,
                     "a snapshot after revision %d" % (rev - 20))
        snap = snapshot_of(c, prefix)
        assert snap["revision"] <= rev and snap["parts"] >= 1, snap
        assert metric_sum(
            nodes, "configfsd_cluster_snapshots_written_total") >= 3

        # older snapshots' parts go once it is published
        def only_its_parts():
            parts = etcd_kvs(c, prefix + "/snap/", prefix=True,
                             keys_only=True)
            return parts and all("/snap/%s/" % snap["id"] in k
                                 for k, _ in parts)
        wait_for(only_its_parts, 30, "only the snapshot's own parts")
        # the log below it is trimmed (below what every node applied),
        # and holds everything after it
        wait_for(lambda: trimmed_past(c, prefix, 1), 30,
                 "the log to be trimmed")
        first = first_log_revision(c, prefix)
        snap = snapshot_of(c, prefix)
        if first is None:  # all of it, as the snapshot holds all of it
            assert snap["revision"] >= rev, (snap, rev)
        else:
            assert first <= snap["revision"] + 1, (first, snap)
        assert metric_sum(nodes, "configfsd_cluster_log_trimmed_total") > 0
        parts = [k for k, _ in etcd_kvs(c, prefix + "/chunk/", prefix=True,
                                        keys_only=True)]
        assert parts == [ahead], parts
        # the snapshot's parts: the cache's SQLite file, deflated
        stored = snapshot_bytes(c, prefix, snap)
        cache = zlib.decompress(stored)
        assert snap["v"] == 2 and len(cache) == snap["size"], snap
        assert cache.startswith(b"SQLite format 3\0"), cache[:16]
        assert len(stored) * 2 < len(cache), (len(stored), len(cache))
        load_snapshot_format_1(c, cache, snap["revision"])
        # a new node: the snapshot, then the log after it
        fresh.start()
        nodes.append(fresh)
        assert metric(fresh, "configfsd_cluster_snapshots_loaded_total") == 1
        assert metric(fresh, "configfsd_cluster_snapshot_revision") \
            >= snap["revision"]
        assert_identical(nodes)
        # history from before the snapshot came with it
        st, _, body = fresh.req("GET", "/api/v1/history?limit=10000")
        assert st == 200, (st, body)
        revs = {e["revision"] for e in json.loads(body)["entries"]}
        assert 1 in revs and rev in revs, sorted(revs)[:5]
        # and it goes on like any node
        writes([fresh, a], "t", 6)
        assert_identical(nodes)
    finally:
        for n in nodes:
            n.stop()


class StoppedNode:
    """Three nodes on @prefix (a snapshot every 10 revisions, however
    little the log grew) that made 12 changes; then the third, v, is
    stopped (SIGSTOP) until its lease ran out (5 s) and it no longer holds
    the log back. As a context manager:
    every node is continued and stopped at the end."""

    def __init__(self, c, prefix, name):
        from cluster import Node
        url = "etcd://%s%s" % (c.etcd.endpoints(), prefix)
        self.c, self.prefix = c, prefix
        self.nodes = [Node(c.binary, c.tmp, "%s-%s" % (name, x), url,
                           ["--snapshot-every", "10", "--snapshot-growth",
                            "0"]) for x in "abv"]
        self.a, self.b, self.v = self.nodes

    def __enter__(self):
        import signal
        try:
            for n in self.nodes:
                n.start()
            writes(self.nodes, "f", 12)
            self.stopped_at = converge(self.nodes)
            self.v.proc.send_signal(signal.SIGSTOP)
            wait_for(lambda: len(etcd_kvs(self.c, self.prefix + "/nodes/",
                                          prefix=True, keys_only=True)) == 2,
                     30, "the stopped node to leave the registry")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def cont(self):
        import signal
        self.v.proc.send_signal(signal.SIGCONT)

    def __exit__(self, *exc):
        import signal
        for n in self.nodes:
            if n.proc:
                n.proc.send_signal(signal.SIGCONT)
            n.stop()


def t_snapshot_fell_behind(c):
    """A node stopped (SIGSTOP) past its lease, its watch cut (the etcd
    member it watched restarted), while the others write through several
    snapshots and trims: on SIGCONT it finds the log it needs gone, says
    so, restarts itself from the snapshot and ends byte-identical. (With
    its watch still open it would catch up from the events the watch
    kept for it, as t_stopped_node_catches_up shows.) Every node's event
    stream, followed across the restart with Last-Event-ID, has every
    revision once, in order, named, or a reset from the journal's prune."""
    with StoppedNode(c, "/behind", "behind") as s, \
            EventFollowers(s.nodes, s.stopped_at) as ev:
        try:
            # the member its watch is on (the first endpoint) goes away:
            # the watch ends, and what follows never reaches it
            c.etcd.kill(0)
            try:
                writes([s.a, s.b], "g", 60)
                wait_for(lambda: trimmed_past(c, s.prefix, s.stopped_at + 1)
                         and snapshot_of(c, s.prefix)["revision"] >=
                         s.stopped_at + 30,
                         30, "snapshots and a trim past the stopped node")
            finally:
                c.etcd.restart(0)
                wait_for(lambda: c.etcd.healthy(0), 30, "etcd member 0")
            offset = s.v.log_size()
        finally:
            s.cont()
        s.v.wait_restarted(offset)
        log = s.v.read_log()
        assert "fell behind" in log and "level=error" in log \
            and "restarting" in log, log
        assert metric(s.v, "configfsd_cluster_snapshots_loaded_total") == 1
        assert_identical(s.nodes)
        writes(s.nodes, "h", 3)
        assert_identical(s.nodes)
        ev.check(converge(s.nodes), resets=("pruned",))


def t_stopped_node_catches_up(c):
    """A node stopped (SIGSTOP) past its lease while the others write
    through several snapshots and trims, its watch left open: on SIGCONT
    it applies what the watch kept for it, without a restart, and ends
    byte-identical."""
    with StoppedNode(c, "/stopped", "stopped") as s:
        t0 = time.monotonic()
        try:
            writes([s.a, s.b], "g", 24)
            wait_for(lambda: trimmed_past(c, s.prefix, s.stopped_at + 1), 30,
                     "a trim past the stopped node")
        finally:
            s.cont()
        stopped = time.monotonic() - t0
        assert_identical(s.nodes)
        log = s.v.read_log()
        assert "fell behind" not in log, "stopped %.1f s (after its lease):" \
            " %s" % (stopped, log)
        assert metric(s.v, "configfsd_cluster_snapshots_loaded_total") == 0
        writes(s.nodes, "h", 3)
        assert_identical(s.nodes)


def t_etcd_compaction(c):
    """etcd compacted to its current revision during writes on every node:
    the nodes carry on (no acknowledged write lost, none diverges) and a
    new node starts."""
    from cluster import Node
    stop = threading.Event()
    acked, errors = [], []
    ts = write_load(c, c.nodes, "cp", stop, acked, errors, limit=60)
    try:
        for k in range(3):
            n0 = len(acked)
            wait_for(lambda: len(acked) >= n0 + 10, 60, "writes going on")
            st, _, b = http("POST", "http://127.0.0.1:%d/v3/kv/range"
                            % c.etcd.client[0], {"key": "AA=="})
            rev = json.loads(b)["header"]["revision"]
            st, _, b = http("POST", "http://127.0.0.1:%d/v3/kv/compaction"
                            % c.etcd.client[k % 3],
                            {"revision": rev, "physical": True})
            assert st == 200, (st, b)
    finally:
        stop.set()
        for t in ts:
            t.join(120)
    assert not errors, errors[:5]
    converge(c.nodes)
    check_acked(c.nodes, acked)
    fresh = Node(c.binary, c.tmp, "after-compaction", c.store_url(),
                 ["--body-limit", str(16 << 20)])
    try:
        fresh.start()
        check_acked([fresh], acked)
        assert_identical(c.nodes + [fresh])
    finally:
        fresh.stop()


def ambiguous(st, b):
    """503 EIO: the writer node died (or lost its role) with the request
    sent and unanswered; whether it was made is not known (docs/cluster.md),
    so it is not acknowledged."""
    if st != 503:
        return False
    p = json.loads(b)
    return p.get("errno") == "EIO" and "may or may not" in p["detail"]


def t_writer_unreachable(c):
    """--forward-writes with a writer that cannot be reached (its address
    drops every connection attempt: the connect times out and nothing is
    sent): the write runs on the node that took it, with the CAS, and is
    answered as made; not 503 "may or may not have been made"."""
    import socket
    from cluster import Node
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(0)
    fill = []  # the accept queue full: further SYNs are dropped
    for _ in range(4):
        f = socket.socket()
        f.setblocking(False)
        try:
            f.connect(hole.getsockname())
        except BlockingIOError:
            pass
        fill.append(f)
    url = "etcd://%s/hole" % c.etcd.endpoints()
    a = Node(c.binary, c.tmp, "hole-a", url, [
        "--forward-writes", "--advertise-url",
        "http://127.0.0.1:%d" % hole.getsockname()[1]])
    b = Node(c.binary, c.tmp, "hole-b", url, ["--forward-writes"])
    try:
        a.start()
        wait_for(lambda: metric(a, "configfsd_cluster_writer") == 1, 20,
                 "a to be the writer")
        b.start()
        for k in range(20):
            st, _, body = mkdir(b, SUB, "hole-%d" % k)
            assert st == 201, (k, st, body)
            if metric(b, "configfsd_cluster_forward_failures_total"):
                break
        assert metric(b, "configfsd_cluster_forward_failures_total") >= 1
        assert metric(a, "configfsd_cluster_writer") == 1
        assert_identical([a, b])
    finally:
        a.stop()
        b.stop()
        for f in fill + [hole]:
            f.close()


def t_forward_writes(c):
    """--forward-writes: one node (the writer) appends for the others, who
    send it their writes: no race between nodes, each write read back at
    once on the node that took it, one winner of two equal mkdirs; the
    writer killed, another takes the role and no acknowledged write is
    lost."""
    import signal
    from cluster import Node
    url = "etcd://%s/fwd" % c.etcd.endpoints()
    nodes = [Node(c.binary, c.tmp, "fwd-%d" % i, url, ["--forward-writes"])
             for i in range(3)]
    try:
        for n in nodes:
            n.start()

        def roles(ns):
            r = [metric(n, "configfsd_cluster_writer") for n in ns]
            return sorted(r) == [0] * (len(ns) - 1) + [1] and r
        r = wait_for(lambda: roles(nodes), 20, "one writer, known to all")
        writer = nodes[r.index(1)]
        others = [n for n in nodes if n is not writer]
        # a client finds the writer in GET /api/v1, on every node
        for n in nodes:
            st, _, b = n.req("GET", "/api/v1")
            cl = json.loads(b).get("cluster") if st == 200 else None
            assert cl and cl["writer"] == "http://127.0.0.1:%d" % writer.port \
                and cl["is_writer"] == (n is writer) and cl["watching"], \
                (n.name, st, b)
        for k, n in enumerate(nodes * 3):
            name = "f%d" % k
            st, _, b = mkdir(n, SUB, name)
            assert st == 201, (n.name, st, b)
            st, _, b = n.req("PUT", "%s/%s/storeme" % (SUB, name), "%d" % k)
            assert st in (200, 204), (n.name, st, b)
            # read on the node that took it, with no ?min_revision=
            assert show(n, "%s/%s/storeme" % (SUB, name)).strip() == \
                "%d" % k, n.name
        for n in others:
            assert metric(n, "configfsd_cluster_forwarded_total") >= 6
        assert metric(writer, "configfsd_cluster_forwarded_total") == 0
        assert metric_sum(nodes, "configfsd_cluster_cas_conflicts_total") == 0
        # the same directory from both other nodes at once: one winner,
        # the errno one node gives the loser
        sent = metric_sum(others, "configfsd_cluster_forwarded_total")
        res = []
        ts = [threading.Thread(target=lambda n=n: res.append(
            mkdir(n, SUB, "same")[0])) for n in others]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        assert sorted(res) == [201, 409], res
        # a refusal comes back as the writer gave it
        st, _, b = others[0].req("PUT", SUB + "/nonexistent/storeme", "1")
        assert st == 404 and json.loads(b)["errno"] == "ENOENT", (st, b)
        # ... and all three went to the writer, none ran where it came in
        assert metric_sum(others, "configfsd_cluster_forwarded_total") \
            == sent + 3
        assert_identical(nodes)

        # the writer dies under load on the others
        stop = threading.Event()
        acked, errors = [], []

        def worker(n, wid):
            for j in range(300):
                if stop.is_set():
                    return
                name = "k%d-%d" % (wid, j)
                st, _, b = mkdir(n, SUB, name)
                if st == 201:
                    acked.append(("dir", name))
                elif not (ambiguous(st, b) or lost_race(st, b)):
                    errors.append((n.name, st, b))
        ts = [threading.Thread(target=worker, args=(n, i))
              for i, n in enumerate(others)]
        for t in ts:
            t.start()
        try:
            wait_for(lambda: len(acked) >= 20, 60, "forwarded writes")
            writer.proc.send_signal(signal.SIGKILL)
            writer.proc.wait()
            n0 = len(acked)
            # the role lapses with the dead writer's lease (5 s)
            wait_for(lambda: roles(others), 30, "a new writer")
            wait_for(lambda: len(acked) >= n0 + 20, 60, "writes go on")
        finally:
            stop.set()
            for t in ts:
                t.join(60)
        assert not errors, errors[:5]
        check_acked(others, acked)
        writer.start()
        assert_identical(nodes)
        check_acked(nodes, acked)
        assert metric(writer, "configfsd_cluster_writer") == 0
    finally:
        for n in nodes:
            n.stop()


def requests_on(node, route):
    """The requests @node answered on @route (any method and status)."""
    st, _, b = node.req("GET", "/metrics")
    assert st == 200, (st, b)
    key = 'configfsd_http_requests_total{route="%s",' % route
    return sum(float(line.split()[-1]) for line in b.decode().splitlines()
               if line.startswith(key))


def forwarding_nodes(c, tag, extra=lambda i: [], cafile=None):
    """Three started --forward-writes nodes on their own prefix, and which
    one is the writer once all three know it: (nodes, writer, others)."""
    from cluster import Node
    url = "etcd://%s/%s" % (c.etcd.endpoints(), tag)
    nodes = [Node(c.binary, c.tmp, "%s-%d" % (tag, i), url,
                  ["--forward-writes"] + extra(i), cafile=cafile)
             for i in range(3)]
    for n in nodes:
        n.start()

    def roles():
        r = [metric(n, "configfsd_cluster_writer") for n in nodes]
        return sorted(r) == [0, 0, 1] and r
    r = wait_for(roles, 20, "one writer, known to all")
    writer = nodes[r.index(1)]
    return nodes, writer, [n for n in nodes if n is not writer]


def many_writes(nodes, clients, tag):
    """@clients clients on each of @nodes at once, each making four writes
    and checking each answer as one node would give it alone: a mkdir
    (201, its ETag), a store read back at once where it was sent, the same
    mkdir again (409 EEXIST), a store with a stale If-Match (412 ESTALE).
    @return the errors, and the writes sent."""
    errors = []

    def client(n, cid):
        name = "%s-%s-%d" % (tag, n.name, cid)
        path = "%s/%s/storeme" % (SUB, name)
        st, h, b = mkdir(n, SUB, name)
        if st != 201 or not {k.lower() for k in h} & {"etag"}:
            errors.append(("mkdir", n.name, st, b))
            return
        st, _, b = n.req("PUT", path, "%d" % cid)
        if st not in (200, 204) or show(n, path).strip() != "%d" % cid:
            errors.append(("store", n.name, st, b))
        st, _, b = mkdir(n, SUB, name)
        if st != 409 or json.loads(b).get("errno") != "EEXIST":
            errors.append(("mkdir again", n.name, st, b))
        st, _, b = n.req("PUT", path, "1",
                         headers={"If-Match": '"999999999"'})
        if st != 412 or json.loads(b).get("errno") != "ESTALE":
            errors.append(("stale If-Match", n.name, st, b))
    ts = [threading.Thread(target=client, args=(n, i))
          for n in nodes for i in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    return errors, 4 * clients * len(nodes)


def t_forward_batches(c):
    """--forward-writes under many writes at once: the nodes send the
    writer their writes in batches (fewer exchanges than writes, POST
    /api/v1/forward), and each write is answered as one node alone would
    answer it; nothing runs on the node that took it. Writes whose body
    is most of --body-limit (5000 bytes of 8192: such a body goes alone,
    uncopied) are forwarded and answered among them."""
    nodes, writer, others = forwarding_nodes(
        c, "fwdb", lambda i: ["--body-limit", "8192"])
    big_errors = []

    def big(n, k):
        # a mkdir whose JSON body is padded to 5000 bytes (limit 8192)
        name = "big-%s-%d" % (n.name, k)
        body = '{"name":"%s"%s}' % (name, " " * (4990 - len(name)))
        st, _, b = n.req("POST", SUB, body,
                         {"Content-Type": "application/json"})
        if st != 201 or show(n, "%s/%s/storeme" % (SUB, name)) is None:
            big_errors.append((n.name, st, b))
    try:
        batches = requests_on(writer, "forward")
        sent = metric_sum(others, "configfsd_cluster_forwarded_total")
        bigs = [threading.Thread(target=big, args=(n, k))
                for n in others for k in range(4)]
        for t in bigs:
            t.start()
        errors, n = many_writes(others, 64, "b")
        for t in bigs:
            t.join(60)
        assert not errors, errors[:5]
        assert not big_errors, big_errors
        assert metric_sum(others, "configfsd_cluster_forwarded_total") \
            == sent + n + len(bigs)
        batches = requests_on(writer, "forward") - batches
        assert 0 < batches < n / 2, (batches, n)
        assert metric_sum(nodes, "configfsd_cluster_cas_conflicts_total") == 0
        assert_identical(nodes)
    finally:
        shut(nodes)


def t_forward_batch_refused(c):
    """A writer that does not know POST /api/v1/forward (an older node,
    during an upgrade) answers it 404: the writes that batch held are
    sent one by one instead, each answered as made, and that writer gets
    no batch for a minute."""
    from cluster import LossyProxy
    proxies = [LossyProxy(0, refuse=b"/api/v1/forward") for _ in range(3)]
    nodes, writer, others = forwarding_nodes(
        c, "fwdr", lambda i: ["--advertise-url",
                              "http://127.0.0.1:%d" % proxies[i].port])
    try:
        for p, n in zip(proxies, nodes):
            p.upstream = ("127.0.0.1", n.port)
        errors, _ = many_writes(others, 32, "r1")
        assert not errors, errors[:5]
        refused = sum(p.refused for p in proxies)
        assert refused >= 1, "no batch was sent"
        errors, _ = many_writes(others, 32, "r2")
        assert not errors, errors[:5]
        assert sum(p.refused for p in proxies) == refused
        assert requests_on(writer, "forward") == 0
        assert_identical(nodes)
    finally:
        shut(nodes, proxies)


def t_forward_over_tls(c):
    """--forward-writes between nodes that serve https: with --peer-cacert
    the writes reach the writer in batches over TLS; a node that cannot
    verify the writer's certificate (no --peer-cacert) sends it nothing
    and runs its writes itself, each answered as made."""
    from cluster import Node, make_tls
    d = os.path.join(c.tmp, "ptls")
    os.mkdir(d)
    tls = make_tls(d)
    serve = ["--tls-cert", tls["server.pem"], "--tls-key", tls["server.key"]]
    nodes, writer, others = forwarding_nodes(
        c, "ptls", lambda i: serve + ["--peer-cacert", tls["ca.pem"]],
        cafile=tls["ca.pem"])
    lone = Node(c.binary, c.tmp, "ptls-lone",
                "etcd://%s/ptls" % c.etcd.endpoints(),
                ["--forward-writes"] + serve, cafile=tls["ca.pem"])
    try:
        assert writer.url("/").startswith("https://")
        batches = requests_on(writer, "forward")
        sent = metric_sum(others, "configfsd_cluster_forwarded_total")
        errors, n = many_writes(others, 32, "t")
        assert not errors, errors[:5]
        assert metric_sum(others, "configfsd_cluster_forwarded_total") \
            == sent + n
        assert requests_on(writer, "forward") > batches
        assert metric_sum(others,
                          "configfsd_cluster_forward_failures_total") == 0
        lone.start()
        wait_for(lambda: metric(lone, "configfsd_cluster_writer") == 0, 20,
                 "the lone node to know the writer")
        for k in range(3):
            st, _, b = mkdir(lone, SUB, "ptls-lone-%d" % k)
            assert st == 201, (k, st, b)
        assert metric(lone, "configfsd_cluster_forward_failures_total") >= 1
        assert_identical(nodes + [lone])
    finally:
        shut(nodes + [lone])


EVENT_NAMES = {"mkdir", "rmdir", "store", "symlink", "unlink", "rename",
               "reset"}


def follow_events(node, since, out, stop):
    """Follow @node's event stream from @since until @stop, reconnecting
    with Last-Event-ID as soon as the node listens again (it may be
    killed and restarted meanwhile); append (id, event name, reset reason)
    per revision to @out. The records of a revision share its id (only
    the last one carries it), so one entry per id line."""
    import urllib.request
    last = since
    while not stop.is_set():
        port = node.port
        if node.proc is None or port is None:
            stop.wait(0.005)
            continue
        req = urllib.request.Request(
            "http://127.0.0.1:%d/api/v1/events" % port,
            headers={"Last-Event-ID": str(last)})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                rid, name, data = None, None, b""
                while not stop.is_set():
                    line = r.readline()
                    if not line.endswith(b"\n"):
                        break  # the node went away mid-line
                    line = line.rstrip(b"\n")
                    if line.startswith(b"id:"):
                        rid = int(line[3:])
                    elif line.startswith(b"event:"):
                        name = line[6:].strip().decode()
                    elif line.startswith(b"data:"):
                        data = line[5:]
                    elif line == b"":
                        if name is not None and rid is not None:
                            reason = json.loads(data).get("reason") \
                                if name == "reset" else None
                            out.append((rid, name, reason))
                            last = rid
                        elif name is not None and not name:
                            out.append((None, "", None))
                        rid, name, data = None, None, b""
        except Exception:  # a node killed under the stream: go on
            stop.wait(0.005)


class EventFollowers:
    """follow_events() on each of @nodes from @since, as a context
    manager; check() waits until every stream reached a revision and
    checks them."""

    def __init__(self, nodes, since):
        from linearize import stream_problems
        self.problems_of = stream_problems
        self.nodes, self.since = nodes, since
        self.streams = [[] for _ in nodes]
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=follow_events,
                                         args=(n, since, out, self.stop))
                        for n, out in zip(nodes, self.streams)]

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(30)

    def check(self, final, resets=()):
        """Every stream up to @final (bounded wait): every revision once,
        in order, named by a known event; a reset only for a reason in
        @resets."""
        wait_for(lambda: all(s and s[-1][0] is not None and s[-1][0] >= final
                             for s in self.streams), 30,
                 "every stream up to revision %d" % final)
        for n, s in zip(self.nodes, self.streams):
            evs = [(rid, name) for rid, name, _ in s]
            problems = self.problems_of(evs, self.since)
            assert not problems, (n.name, problems[:5])
            names = {name for _, name in evs} - EVENT_NAMES
            assert not names, (n.name, "event names", names)
            bad = [x for x in s if x[1] == "reset" and x[2] not in resets]
            assert not bad, (n.name, "resets", bad[:5])


def t_events_across_faults(c):
    """Every node's event stream, followed across restarts with
    Last-Event-ID, delivers every committed revision once, in order, each
    named by its operation, and needs no reset: through a SIGKILL of the
    writer (--forward-writes: the restarted node runs writes itself until
    the dead writer's role lapses), again and again, each restarted at
    once under writes on every node (from a snapshot: one every 40
    revisions), and through an etcd compaction."""
    ROUNDS = 6
    import signal
    from cluster import Node
    url = "etcd://%s/evs" % c.etcd.endpoints()
    nodes = [Node(c.binary, c.tmp, "evs-%d" % i, url,
                  ["--forward-writes", "--snapshot-every", "40",
                   "--snapshot-growth", "0"]) for i in range(3)]
    done = threading.Event()
    threads, followers = [], None
    try:
        for n in nodes:
            n.start()
        for i, n in enumerate(nodes):
            st, _, b = mkdir(n, SUB, "evs%d" % i)
            assert st == 201, (n.name, st, b)
        r0 = converge(nodes)
        acked = [0]

        def writer(k):
            for j in range(100000):
                if done.is_set():
                    return
                n = nodes[k % 3]
                if n.proc is None or n.port is None:
                    done.wait(0.005)
                    continue
                try:
                    st, _, _ = n.req("PUT", "%s/evs%d/storeme" % (SUB, k % 3),
                                     "%d" % j, timeout=5)
                    acked[0] += st in (200, 204)
                except OSError:
                    pass  # killed under it: not acknowledged
        followers = EventFollowers(nodes, r0).__enter__()
        threads = [threading.Thread(target=writer, args=(k,))
                   for k in range(6)]
        for t in threads:
            t.start()

        def writes_go_on(count):
            a0 = acked[0]
            wait_for(lambda: acked[0] >= a0 + count, 60, "writes going on")

        def kill_and_restart(n):
            writes_go_on(80)
            n.port = None
            n.proc.send_signal(signal.SIGKILL)
            n.proc.wait(10)
            n.proc = None
            n.start(wait_ready=False)  # written to as soon as it listens
            writes_go_on(80)
        for rnd in range(ROUNDS):
            # the writer, as the nodes up name it (none while the role of
            # one killed before lapses: then the next one round)
            roles = [metric(n, "configfsd_cluster_writer") if n.port else 0
                     for n in nodes]
            kill_and_restart(nodes[roles.index(1) if 1 in roles else rnd % 3])
        st, _, b = http("POST", "http://127.0.0.1:%d/v3/kv/range"
                        % c.etcd.client[0], {"key": "AA=="})
        rev = json.loads(b)["header"]["revision"]
        st, _, b = http("POST", "http://127.0.0.1:%d/v3/kv/compaction"
                        % c.etcd.client[1], {"revision": rev,
                                             "physical": True})
        assert st == 200, (st, b)
        writes_go_on(100)
        done.set()
        for t in threads:
            t.join(30)
        assert metric_sum(nodes, "configfsd_cluster_snapshots_loaded_total") \
            >= 1, "no node restarted from a snapshot"
        # nothing here is lost or left behind: a reset would mean a node
        # lost a revision it applied, not that a reader was slow
        followers.check(converge(nodes))
    finally:
        done.set()
        for t in threads:
            t.join(30)
        if followers:
            followers.__exit__()
        for n in nodes:
            n.stop()


TESTS = [
    t_write_anywhere_seen_everywhere,
    t_read_your_writes,
    t_waits_hold_no_worker,
    t_apply_from_watch,
    t_race_mkdir,
    t_big_import,
    t_answer_lost,
    t_race_if_match,
    t_kill_node_under_load,
    t_sse_resume_across_nodes,
    t_events_across_faults,
    t_subsystem_set,
    t_tls,
    t_auth,
    t_etcd_member_loss,
    t_replay_problem,
    t_snapshot_trim_and_load,
    t_snapshot_growth,
    t_log_deflated,
    t_log_formats_1_2,
    t_unreadable_entry,
    t_snapshot_lock_answer_lost,
    t_snapshot_publish_answer_lost,
    t_snapshot_fell_behind,
    t_stopped_node_catches_up,
    t_etcd_compaction,
    t_forward_writes,
    t_forward_batches,
    t_forward_batch_refused,
    t_forward_over_tls,
    t_writer_unreachable,
]


def main():
    global PICKY_MODULE
    binary = sys.argv[1]
    PICKY_MODULE = sys.argv[2] if len(sys.argv) > 2 else None
    if not shutil.which("etcd"):
        print("1..0 # SKIP etcd is not installed (scripts/etcd-deps.sh)")
        return 0
    only = os.environ.get("CFS_CLUSTER_TESTS")  # e.g. t_tls,t_auth
    tests = [t for t in TESTS if not only or t.__name__ in only.split(",")]
    print("1..%d" % (len(tests) + 1))
    c = Cluster(binary)
    failed = 0
    try:
        c.start()
        for i, t in enumerate(tests, 1):
            try:
                t(c)
                print("ok %d - %s" % (i, t.__doc__.split("\n")[0]))
            except Exception as e:  # report and go on
                failed += 1
                print("not ok %d - %s" % (i, t.__name__))
                for line in repr(e).splitlines():
                    print("# " + line)
                for n in c.nodes:
                    if n.proc:
                        for line in n.read_log().splitlines()[-5:]:
                            print("#   %s: %s" % (n.name, line))
            sys.stdout.flush()
    finally:
        logs = c.stop_and_read_logs()
    # Sanitizer builds: every node, killed or stopped, left a clean log.
    bad = [(name, text[text.find(mark):][:1500])
           for name, text in logs.items()
           for mark in ("runtime error:", "AddressSanitizer:",
                        "LeakSanitizer:", "ThreadSanitizer:")
           if mark in text]
    if bad:
        failed += 1
        print("not ok %d - no sanitizer report in any node's log"
              % (len(tests) + 1))
        for name, excerpt in bad:
            for line in excerpt.splitlines():
                print("# %s: %s" % (name, line))
    else:
        print("ok %d - no sanitizer report in any node's log"
              % (len(tests) + 1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
