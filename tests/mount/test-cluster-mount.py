#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The mount on a cluster node (docs/mount.md, docs/cluster.md): one etcd
member and two configfsd nodes on loopback ports, node a with --mount.
What is written through a's mount is on b; what b writes over HTTP shows
through a's mount; mount writers on a and HTTP writers on b on one
attribute at once (a's writes lose races to b's and run again) all
succeed, every write is in the log once, and both nodes end on the same
value. One TAP line per check; skipped without etcd or /dev/fuse.

    test-cluster-mount.py CONFIGFSD
"""
import json
import os
import shutil
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "cluster"))
from cluster import Etcd, Node, metric, wait_for  # noqa: E402

configfsd = sys.argv[1]
if not shutil.which("etcd"):
    print("1..0 # SKIP etcd is not installed (scripts/etcd-deps.sh)")
    sys.exit(77)
if not os.path.exists("/dev/fuse"):
    print("1..0 # SKIP no /dev/fuse on this machine")
    sys.exit(77)

n = 0
failed = 0


def ok(cond, desc, detail=""):
    global n, failed
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, desc))
    if not cond:
        failed += 1
        for line in str(detail).splitlines()[:10]:
            print("# " + line)
    sys.stdout.flush()


def waited(cond, timeout, what):
    try:
        return wait_for(cond, timeout, what)
    except TimeoutError:
        return False


def value(node, path):
    st, _, body = node.req("GET", "/api/v1/config" + path)
    return body.decode() if st == 200 else None


tmp = subprocess.check_output(["mktemp", "-d"]).decode().strip()
M = os.path.join(tmp, "mnt")
os.mkdir(M)
etcd = Etcd(tmp, n=1)
nodes = []
try:
    etcd.start()
    url = "etcd://%s/m" % etcd.endpoints()
    a = Node(configfsd, tmp, "a", url, ["--mount", M])
    b = Node(configfsd, tmp, "b", url)
    nodes = [a, b]
    a.start()
    b.start()
    wait_for(lambda: os.path.ismount(M), 10, "the mount")

    os.mkdir(os.path.join(M, "02-simple-children", "x"))
    A = os.path.join(M, "02-simple-children", "x", "storeme")
    with open(A, "w") as f:
        f.write("5\n")
    got = waited(lambda: value(b, "/02-simple-children/x/storeme") == "5\n",
                 10, "b to apply")
    ok(got, "a write through node a's mount is on node b")
    st, _, _ = b.req("PUT", "/api/v1/config/02-simple-children/x/storeme",
                     b"6")
    ok(st == 200 and waited(lambda: open(A).read() == "6\n", 10,
                            "a to apply"),
       "node b's HTTP write shows through node a's mount")

    errors = []

    def mount_writer(w):
        for k in range(30):
            try:
                with open(A, "w") as f:
                    f.write("%d\n" % (w * 1000 + k))
            except OSError as e:
                errors.append("mount: %r" % e)

    def http_writer(w):
        for k in range(30):
            st, _, body = b.req(
                "PUT", "/api/v1/config/02-simple-children/x/storeme",
                b"%d" % (w * 1000 + 500 + k))
            if st != 200:
                errors.append("http %d: %r" % (st, body[:200]))

    ts = [threading.Thread(target=mount_writer, args=(w,)) for w in (1, 2)]
    ts += [threading.Thread(target=http_writer, args=(w,)) for w in (1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ok(not errors, "mount writers on a and HTTP writers on b at once: every "
       "write succeeds", "\n".join(errors))
    print("# node a ran %s changes again after losing a race" %
          metric(a, "configfsd_cluster_cas_retries_total"))
    st, _, body = b.req("GET", "/api/v1/history?path=/02-simple-children/x"
                        "&limit=1000")
    entries = [e for e in json.loads(body)["entries"] if e["op"] == "store"]
    ok(len(entries) == 2 + 120, "every write is in the log once",
       "%d stores" % len(entries))
    # the log keeps the bytes each write stored ("1529" over HTTP, "1029\n"
    # through the mount); show() prints the number with a newline
    last = int(max(entries, key=lambda e: e["revision"])["value"])
    ok(waited(lambda: value(b, "/02-simple-children/x/storeme") ==
              "%d\n" % last and open(A).read() == "%d\n" % last, 10,
              "both nodes to agree"),
       "both nodes end on the last value of the log", last)
    principals = {e.get("principal") for e in entries}
    ok("uid:%d" % os.getuid() in principals,
       "the mount's writes name their user in the log", principals)
finally:
    for node in nodes:
        node.stop()
    etcd.stop()
    if os.path.ismount(M):
        subprocess.call(["umount", "-l", M])
    shutil.rmtree(tmp, ignore_errors=True)

print("1..%d" % n)
sys.exit(1 if failed else 0)
