#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""configfsctl against a hostile server (configfsctl(1), "Terminal safety").

A fake server on 127.0.0.1 answers each request with what the test put
there: answers whose strings carry terminal escapes (OSC retitle, CSI clear,
BEL, C1 CSI, bidi overrides, the bidi isolates U+2066-U+2069) in every
member a command prints, answers that lack a member or hold one of the
wrong type, and answers larger than
--max-answer. Checks, one TAP line each:
  - no control byte of an answer reaches the output (the escapes show as
    \\x1b, \\u{009B} ...), for ls -l, tree, history, watch, import, health
    and the problem of a failure; cat and --json on a terminal (a pty)
    escaped, through a pipe exact;
  - a malformed answer is "malformed answer from SERVER: ..." and exit 1,
    never a signal;
  - --max-answer refuses a larger answer, with or without Content-Length;
  - one bound over the whole of a command's answers (issue 37 (3), (4)):
    a server whose every page carries next_after (each cursor further on)
    is refused once the pages' bytes pass --max-answer; one that repeats a
    cursor is refused at once; a 1.9 MB answer of "children":[{},{},...]
    (some 80 times its bytes once parsed) is refused under --max-answer
    2M; each with a clear error, exit 1, and the client's peak RSS (of a
    process of its own: RUSAGE_CHILDREN) under 4 x --max-answer + 20 MB;
  - failover (--server A,B): a write that reached A (A took the request and
    closed, or never answered) is sent neither to B nor to A again (not
    even by libcurl on a reused connection), and the error says its
    outcome is unknown; a write whose connection was refused, and any
    read, goes on to B;
  - a fuzzer: valid answers mutated at random (members dropped, types
    changed, escapes injected), each command must end with one of its exit
    codes (configfsctl(1), EXIT STATUS), never a signal, and print no
    control byte (CFS_CLI_FUZZ_RUNS, default 300;
    CFS_CLI_FUZZ_SEED).
usage: test-cli-hostile.py CONFIGFSCTL
"""
import http.server
import json
import os
import pty
import random
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

CTL = sys.argv[1]
# the bidi isolates U+2066-U+2069 reorder text as the overrides do
ISOLATES = "\u2066\u2067\u2068\u2069"
ESC = "\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202e" + ISOLATES
# bytes a terminal acts on; none may be printed
BAD = [b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae"] + [
    c.encode() for c in ISOLATES]

answers = {}  # path (no query) -> (status, content type, body bytes, chunked)
pagers = {}  # path (no query) -> function(query dict) -> body bytes


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        path = self.path.split("?")[0]
        if path in pagers:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            answers[path] = (200, "application/json", pagers[path](query),
                             False)
        status, ctype, body, chunked = answers.get(
            path, (404, "application/problem+json",
                   b'{"status":404,"title":"Not Found","errno":"ENOENT"}',
                   False))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            step = 65536
            try:
                for i in range(0, len(body), step):
                    part = body[i:i + step]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass

    do_GET = do_POST = do_PUT = do_DELETE = answer


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
URL = "http://127.0.0.1:%d" % srv.server_address[1]

n = 0
failed = 0


def check(what, ok, info=""):
    global n, failed
    n += 1
    if ok:
        print("ok %d - %s" % (n, what))
    else:
        failed += 1
        print("not ok %d - %s" % (n, what))
        for line in str(info).splitlines()[:20]:
            print("# " + line)


def put(path, doc, status=200, ctype="application/json", chunked=False):
    body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    answers[path] = (status, ctype, body, chunked)


def run(*args, timeout=20):
    p = subprocess.run([CTL, "--server", URL, "--timeout", "10"] + list(args),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_tty(*args):
    """configfsctl with its stdout a terminal (a pty); what it printed."""
    master, slave = pty.openpty()
    p = subprocess.Popen([CTL, "--server", URL] + list(args),
                         stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=subprocess.PIPE)
    os.close(slave)
    out = b""
    end = time.monotonic() + 20
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    p.wait(timeout=20)
    os.close(master)
    return p.returncode, out, p.stderr.read()


def clean(data):
    return not any(b in data for b in BAD)


def shown(data):
    return b"\\x1b" in data or b"\\u{009B}" in data or b"\\u{202E}" in data


# ---- hostile strings in every member a command prints ---------------------

node = {
    "kind": "group", "name": "g" + ESC, "path": "/s/g", "revision": 3,
    "attributes": [{"name": "a" + ESC, "mode": "0644", "value": "v" + ESC,
                    "revision": 1},
                   {"name": "b", "mode": "0644", "error": "EIO" + ESC},
                   {"name": "c", "mode": "0644", "value": "x" + ESC,
                    "encoding": "base64" + ESC}],
    "children": [{"name": "k" + ESC, "kind": "item" + ESC,
                  "path": "/s/g/k" + ESC,
                  "attributes": [], "children": [], "links": []}],
    "links": [{"name": "l" + ESC, "target": "/t" + ESC}],
}
put("/api/v1/config/s/g", node)
for args in (["ls", "-l", "/s/g"], ["tree", "/s/g"], ["ls", "/s/g"]):
    rc, out, err = run(*args)
    check("%s: no control byte of the answer printed" % " ".join(args),
          rc == 0 and clean(out + err) and shown(out), (rc, out, err))

# each isolate on its own, where a name is printed: escaped as \u{HHHH}
iso = dict(node, children=[], links=[], attributes=[
    {"name": "i" + c, "mode": "0644", "value": "v" + c} for c in ISOLATES])
put("/api/v1/config/s/g", iso)
rc, out, err = run("tree", "/s/g")
check("the bidi isolates U+2066-U+2069 are shown as \\u{2066}..\\u{2069}, "
      "never raw",
      rc == 0 and clean(out + err) and
      all(b"\\u{%04X}" % ord(c) in out for c in ISOLATES),
      (rc, out, err))
put("/api/v1/config/s/g", node)

# completion's lister (__complete, one name a line): a name that holds a
# newline or another control would break the line or the terminal, and is
# not offered; shell code in a name is offered as text (the scripts quote
# it: cli.complete)
odd = dict(node, attributes=[], links=[], children=[
    {"name": n, "kind": "item", "path": "/s/g/" + n}
    for n in ("nl\nx", "esc" + ESC, "code$(touch x)", "plain")])
put("/api/v1/config/s/g", odd)
rc, out, err = run("__complete", "/s/g/")
check("__complete: names with a newline or a control are not offered",
      rc == 0 and out.splitlines() == [b"/s/g/code$(touch x)/",
                                       b"/s/g/plain/"], (rc, out, err))
put("/api/v1/config/s/g", node)

put("/api/v1/history", {"entries": [
    {"revision": 5, "time": "2026" + ESC, "principal": "p" + ESC,
     "op": "store" + ESC, "path": "/s/g/a" + ESC, "value": "v" + ESC,
     "old": "o" + ESC},
    {"revision": 4, "time": "t", "principal": None, "op": "rename",
     "from": "/a" + ESC, "to": "/b" + ESC},
    {"revision": 3, "op": "symlink", "path": "/l", "target": "/t" + ESC}]})
rc, out, err = run("history")
check("history: time, principal, op, paths, values escaped",
      rc == 0 and clean(out + err) and shown(out), (rc, out, err))

put("/api/v1/import", {"changed": True, "revision": 9, "ops": [
    {"op": "mkdir" + ESC, "path": "/s/x" + ESC},
    {"op": "store", "path": "/s/x/a", "value": "v" + ESC},
    {"op": "symlink", "path": "/s/x/l", "target": "/t" + ESC},
    {"op": "rename", "from": "/p" + ESC, "to": "/q" + ESC}]})
docf = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                    "cfs-cli-hostile-%d.json" % os.getpid())
with open(docf, "w") as f:
    f.write("{}")
rc, out, err = run("import", docf)
check("import: op names, paths, targets, values escaped",
      rc == 0 and clean(out + err) and shown(out), (rc, out, err))

put("/api/v1", {"revision": 6})  # watch starts from the revision of now
events = ("event: store\nid: 7\ndata: " + json.dumps(
    {"revision": 7, "op": "store" + ESC, "path": "/s/a" + ESC,
     "value": "v" + ESC}) + "\n\n" + "event: reset\ndata: " +
    json.dumps({"revision": 8, "reason": "overrun" + ESC}) + "\n\n")
put("/api/v1/events", events.encode(), ctype="text/event-stream")
rc, out, err = run("watch", "--count", "2")
check("watch: event and reset reason escaped",
      rc == 0 and clean(out + err) and shown(out), (rc, out, err))

problem = {"type": "about:blank", "title": "Conflict" + ESC, "status": 409,
           "detail": "mkdir /x: exists" + ESC, "errno": "EEXIST" + ESC,
           "op_index": 0}
put("/api/v1/config/s/fail", problem, status=409,
    ctype="application/problem+json")
rc, out, err = run("ls", "/s/fail")
check("a problem's title, detail and errno escaped",
      rc != 0 and clean(out + err) and shown(err), (rc, out, err))
put("/api/v1/config/s/html", b"<html>" + ESC.encode() + b"</html>",
    status=500, ctype="text/html")
rc, out, err = run("ls", "/s/html")
check("a failure that is not a problem: its body escaped",
      rc != 0 and clean(out + err), (rc, out, err))

put("/healthz", {"status": "ok"})
put("/readyz", {"ready": False, "problems": [
    {"step": "replay" + ESC, "path": "/s" + ESC, "errno": "EIO" + ESC}]},
    status=503)
rc, out, err = run("health")
check("health: problems escaped", clean(out + err) and shown(out),
      (rc, out, err))

put("/api/v1/config/s/val", ("v" + ESC + "\n").encode(),
    ctype="text/plain; charset=utf-8")
rc, out, err = run("cat", "/s/val")
check("cat through a pipe: the bytes exactly",
      rc == 0 and out == ("v" + ESC + "\n").encode(), (rc, out, err))
rc, out, err = run_tty("cat", "/s/val")
check("cat on a terminal: escaped", rc == 0 and clean(out) and shown(out),
      (rc, out, err))
# JSON may carry C1 controls and bidi overrides as raw UTF-8
put("/api/v1/config/s/g", json.dumps(node, ensure_ascii=False).encode())
rc, out, err = run_tty("--json", "ls", "/s/g")
check("--json on a terminal: escaped", rc == 0 and clean(out) and shown(out),
      (rc, out, err))
rc, out, err = run("--json", "ls", "/s/g")
check("--json through a pipe: the bytes exactly",
      rc == 0 and out == answers["/api/v1/config/s/g"][2] + b"\n",
      (rc, out[:300], err))
put("/api/v1/config/s/g", node)

# ---- malformed answers ----------------------------------------------------


def malformed(what, args, path, doc, **kw):
    put(path, doc, **kw)
    rc, out, err = run(*args)
    check("%s: a clear error, exit 1" % what,
          rc == 1 and b"malformed answer from " + URL.encode() in err and
          clean(out + err), (rc, out, err))


bad_child = dict(node, children=[{"kind": "item", "path": "/s/g/k"}])
malformed("ls -l, a child without name", ["ls", "-l", "/s/g"],
          "/api/v1/config/s/g", bad_child)
malformed("tree, a child without name", ["tree", "/s/g"],
          "/api/v1/config/s/g", bad_child)
malformed("ls -l, a link without target", ["ls", "-l", "/s/g"],
          "/api/v1/config/s/g", dict(node, links=[{"name": "l"}]))
malformed("tree, an attribute name not a string", ["tree", "/s/g"],
          "/api/v1/config/s/g", dict(node, attributes=[{"name": 7}]))
malformed("ls -R, a node without path", ["ls", "-R", "/s/g"],
          "/api/v1/config/s/g", {k: v for k, v in node.items() if k != "path"})
malformed("ls, children not an array", ["ls", "/s/g"],
          "/api/v1/config/s/g", dict(node, children={"a": 1}))
malformed("import, an op without op", ["import", docf], "/api/v1/import",
          {"changed": True, "revision": 9, "ops": [{"path": "/s/x"}]})
malformed("import, a rename without to", ["import", docf], "/api/v1/import",
          {"changed": True, "ops": [{"op": "rename", "from": "/a"}]})
malformed("history, an entry without op", ["history"], "/api/v1/history",
          {"entries": [{"revision": 1, "path": "/a"}]})
malformed("history, a rename without from or path", ["history"],
          "/api/v1/history",
          {"entries": [{"revision": 1, "op": "rename", "to": "/b"}]})
malformed("watch, an event without op", ["watch", "--count", "1"],
          "/api/v1/events",
          b'event: store\ndata: {"revision": 1, "path": "/a"}\n\n',
          ctype="text/event-stream")
malformed("ls -R, a child that is its parent again", ["ls", "-R", "/s/g"],
          "/api/v1/config/s/g",
          dict(node, children=[{"name": "g", "kind": "group",
                                "path": "/s/g"}]))
malformed("tree, another node than asked for", ["tree", "/s/g"],
          "/api/v1/config/s/g", dict(node, path="/s/h"))
malformed("ls, not JSON", ["ls", "/s/g"], "/api/v1/config/s/g",
          b"{not json", ctype="application/json")
put("/api/v1/config/s/g", node)

# ---- the cap on an answer -------------------------------------------------

big = dict(node, path="/s/big", children=[],
           attributes=[{"name": "a%d" % i, "mode": "0644",
                              "value": "x" * 100} for i in range(30000)])
for chunked in (False, True):
    put("/api/v1/config/s/big", big, chunked=chunked)
    rc, out, err = run("--max-answer", "1M", "ls", "/s/big")
    check("--max-answer 1M refuses a 4 MB answer (%s)" %
          ("chunked" if chunked else "Content-Length"),
          rc == 1 and b"larger than --max-answer" in err, (rc, out[:200], err))
# parsed, it takes some 24 MB: the bound is on that too
rc, out, err = run("--max-answer", "8M", "ls", "/s/big")
check("--max-answer 8M refuses it parsed (some 24 MB)",
      rc == 1 and b"more memory parsed than --max-answer" in err,
      (rc, len(out), err))
rc, out, err = run("--max-answer", "32M", "ls", "/s/big")
check("--max-answer 32M takes it", rc == 0 and out.count(b"\n") >= 30000,
      (rc, len(out), err))
rc, out, err = run("--max-answer", "1x", "ls", "/s/big")
check("--max-answer with a bad size is a usage error", rc == 2, (rc, err))

# ---- one bound over the whole of a command's answers -----------------------


# A wrapper of its own: configfsctl's peak RSS is RUSAGE_CHILDREN of a
# process that ran nothing else. A client that grows past 1 GiB or runs
# past 30 s (the unbounded one did both) is killed, and says so.
RSS_WRAPPER = """
import os, resource, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
why = ""
end = time.monotonic() + 30
while p.poll() is None:
    try:
        with open("/proc/%d/status" % p.pid) as f:
            kib = int([l for l in f if l.startswith("VmRSS:")][0].split()[1])
    except (OSError, IndexError, ValueError):
        kib = 0
    if kib > 1024 * 1024 or time.monotonic() > end:
        why = "killed: RSS %d KiB after %s" % (kib, "30 s" if kib <= 1024 * 1024 else "a while")
        p.kill()
        break
    time.sleep(0.02)
out, err = p.communicate()
sys.stdout.buffer.write(out)
sys.stderr.buffer.write(err + why.encode())
sys.stderr.write("\\nrss_kib %d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(p.returncode if not why else 99)
"""


# A sanitizer build keeps freed memory in quarantine (RSS grows with what
# was ever allocated, not what is held): keep it small for these runs.
RSS_ENV = dict(os.environ)
RSS_ENV["ASAN_OPTIONS"] = (os.environ.get("ASAN_OPTIONS", "") +
                           ":quarantine_size_mb=1").lstrip(":")


def run_rss(*args, timeout=90):
    """run(), in the wrapper above: also the client's peak RSS (KiB)."""
    p = subprocess.run([sys.executable, "-c", RSS_WRAPPER, CTL, "--server",
                        URL, "--timeout", "10"] + list(args),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout, env=RSS_ENV)
    err, _, rss = p.stderr.rpartition(b"\nrss_kib ")
    return p.returncode, p.stdout, err, int(rss or 0)


# The client's own peak with nothing to hold (a sanitizer's runtime and
# shadow memory included): the bound is over what an answer adds to it.
RSS_BASE_KIB = run_rss("--version")[3]


def rss_ok(rss_kib, max_answer):
    return rss_kib > 0 and \
        (rss_kib - RSS_BASE_KIB) * 1024 < 4 * max_answer + 20 * 1024 * 1024


rss_seen = []


def page_doc(path, names, next_after, pad=0):
    doc = {"kind": "group", "name": path.rsplit("/", 1)[1], "path": path,
           "revision": 1, "attributes": [], "links": [],
           "children": [{"name": nm, "kind": "item", "path": path + "/" + nm}
                        for nm in names],
           "next_after": next_after}
    if pad:
        doc["pad"] = "x" * pad  # bytes to read, nothing held once parsed
    return json.dumps(doc).encode()


def endless(query):
    """Every page one child further on, and a next_after: forever."""
    after = query.get("after", [""])[0]
    nxt = after + "a"
    return page_doc("/s/endless", [nxt], nxt, pad=20000)


pagers["/api/v1/config/s/endless"] = endless
M = 1024 * 1024
rc, out, err, rss = run_rss("--max-answer", "1M", "ls", "/s/endless")
rss_seen.append(("endless next_after, --max-answer 1M", rss))
check("next_after forever (each cursor further on): refused once the pages "
      "pass --max-answer 1M in all, exit 1, peak RSS %d KiB" % rss,
      rc == 1 and b"larger than --max-answer (1048576 bytes) in all" in err
      and rss_ok(rss, M), (rc, out[:200], err[-600:], rss))


def stuck(query):
    """A next_after that never moves: the same page again and again."""
    return page_doc("/s/stuck", ["m"], "m")


pagers["/api/v1/config/s/stuck"] = stuck
rc, out, err, rss = run_rss("--max-answer", "1M", "ls", "/s/stuck")
rss_seen.append(("a repeated cursor, --max-answer 1M", rss))
check("a cursor that does not advance: refused at once (the server repeats "
      "a cursor), exit 1",
      rc == 1 and b"repeats a cursor" in err and b"malformed answer" in err
      and rss_ok(rss, M), (rc, out[:200], err[-600:], rss))


def backwards(query):
    """Cursors that go back: a, then b, then a again ..."""
    after = query.get("after", [""])[0]
    nxt = {"": "b", "b": "a"}.get(after, "b")
    return page_doc("/s/back", [nxt], nxt)


pagers["/api/v1/config/s/back"] = backwards
rc, out, err, rss = run_rss("--max-answer", "1M", "ls", "/s/back")
check("a cursor that goes back: refused, exit 1",
      rc == 1 and b"repeats a cursor" in err, (rc, out[:200], err[-600:]))

# three pages, each further on, then none: all of them, once
pages = {"": (["a1", "a2"], "a2"), "a2": (["b1"], "b1"), "b1": (["c1"], None)}


def three(query):
    names, nxt = pages[query.get("after", [""])[0]]
    return page_doc("/s/three", names, nxt)


pagers["/api/v1/config/s/three"] = three
rc, out, err = run("--max-answer", "1M", "ls", "/s/three")
check("pages that advance and end: every child once",
      rc == 0 and out.split() == [b"a1", b"a2", b"b1", b"c1"],
      (rc, out[:200], err[-600:]))

# some 80 times its bytes once parsed (jansson: an object, its table)
flat = (b'{"kind":"group","name":"flat","path":"/s/flat","attributes":[],'
        b'"links":[],"children":[' + b",".join([b"{}"] * 630000) + b"]}")
for chunked in (False, True):
    put("/api/v1/config/s/flat", flat, chunked=chunked)
    rc, out, err, rss = run_rss("--max-answer", "2M", "ls", "/s/flat")
    rss_seen.append(("%.1f MB of {} (%s), --max-answer 2M" %
                     (len(flat) / 1e6, "chunked" if chunked else "sized"),
                     rss))
    check("%.1f MB of \"children\":[{},...] under --max-answer 2M (%s): "
          "refused parsed, exit 1, peak RSS %d KiB" %
          (len(flat) / 1e6, "chunked" if chunked else "Content-Length", rss),
          rc == 1 and b"more memory parsed than --max-answer" in err and
          rss_ok(rss, 2 * M), (rc, out[:200], err[-600:], rss))
print("# peak RSS: " + "; ".join("%s: %d KiB" % x for x in rss_seen) +
      "; with nothing to hold: %d KiB" % RSS_BASE_KIB)

# the bound is on answers: batch's FILE is the user's, however large
put("/api/v1/batch", {"revision": 9})
batchf = docf + ".batch"
with open(batchf, "w") as f:
    json.dump([{"op": "mkdir", "path": "/s/b%d" % i} for i in range(600)], f)
rc, out, err = run("--max-answer", "8K", "batch", batchf)
check("batch FILE of %d KB under --max-answer 8K: the user's file is not "
      "bounded, the answer is" % (os.path.getsize(batchf) // 1024),
      rc == 0 and out.strip() == b"revision 9", (rc, out, err))
os.unlink(batchf)

# ---- failover: a write goes to the next server only if it reached none ------


class Node:
    """A raw HTTP server on 127.0.0.1 that records each request line, and
    either answers it (404 to a GET, 200 {} otherwise, keep-alive), closes
    without answering (@close: "writes" or "all"), or holds it unanswered
    (@hold: "writes")."""

    def __init__(self, close=None, hold=None):
        self.close, self.hold = close, hold
        self.got = []
        self.held = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        f = c.makefile("rb")
        try:
            while True:
                line = f.readline()
                if not line:
                    break
                n = 0
                while True:
                    h = f.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    if k.strip().lower() == "content-length":
                        n = int(v)
                if n:
                    f.read(n)
                method = line.split()[0].decode()
                self.got.append(" ".join(line.decode().split()[:2]))
                write = method not in ("GET", "HEAD")
                if self.close == "all" or (self.close == "writes" and write):
                    break
                if self.hold == "writes" and write:
                    self.held.append(c)
                    return
                status, body = ((b"404 Not Found", b'{"status":404,"title":'
                                 b'"Not Found","errno":"ENOENT"}')
                                if method == "GET" else (b"200 OK", b"{}"))
                c.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: "
                          b"application/problem+json\r\nContent-Length: "
                          b"%d\r\n\r\n" % len(body) + body)
        except OSError:
            pass
        c.close()

    def writes(self):
        return [g for g in self.got if not g.startswith(("GET ", "HEAD "))]

    def stop(self):
        self.sock.close()
        for c in self.held:
            c.close()


def run_on(servers, *args):
    p = subprocess.run([CTL, "--server", ",".join(servers), "--timeout", "2"]
                       + list(args), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


UNKNOWN = b"whether it was applied is unknown"
# mv reads the target first: its POST then goes on a connection of its own
# (libcurl sends a request again itself when a reused one dies unanswered)
WRITES = (["write", "/a/x", "5"], ["mkdir", "/a/x"], ["rm", "/a/x"],
          ["mv", "/a/x", "/a/y"])
for mode in ("close", "hold"):
    for args in WRITES:
        a = Node(close="writes") if mode == "close" else Node(hold="writes")
        b = Node()
        rc, out, err = run_on([a.url, b.url], *args)
        check("%s: A %s without answering: sent once to A, never to B; "
              "the outcome is said to be unknown (exit 10)" %
              (" ".join(args), "took it and closed" if mode == "close"
               else "held it past --timeout"),
              rc == 10 and UNKNOWN in err and len(a.writes()) == 1 and
              not b.got, (rc, err, a.got, b.got))
        a.stop()
        b.stop()
# a port where nothing listens: bound, then closed
dead = socket.socket()
dead.bind(("127.0.0.1", 0))
dead_url = "http://127.0.0.1:%d" % dead.getsockname()[1]
dead.close()
b = Node()
rc, out, err = run_on([dead_url, b.url], "write", "/a/x", "5")
check("a write whose connection was refused goes on to B, once",
      rc == 0 and b.writes() == ["PUT /api/v1/config/a/x"] and
      b"trying " + b.url.encode() in err, (rc, err, b.got))
b.stop()
a, b = Node(close="all"), Node()
rc, out, err = run_on([a.url, b.url], "ls", "/a")
check("a read that got no answer goes on to B (reads fail over freely)",
      rc == 3 and len(a.got) == 1 and len(b.got) == 1 and
      b"trying " + b.url.encode() in err, (rc, err, a.got, b.got))
a.stop()
b.stop()

# ---- a fuzzer: valid answers mutated ---------------------------------------

seed = int(os.environ.get("CFS_CLI_FUZZ_SEED", str(int(time.time()))))
runs = int(os.environ.get("CFS_CLI_FUZZ_RUNS", "300"))
rng = random.Random(seed)
print("# fuzz seed %d, %d runs" % (seed, runs))
valid = {
    "/api/v1/config/s/g": (["ls", "-l", "/s/g"], ["tree", "/s/g"],
                           ["ls", "-R", "/s/g"]),
    "/api/v1/history": (["history"],),
    "/api/v1/import": (["import", docf],),
}
docs = {p: json.loads(answers[p][2]) for p in valid}
VALUES = [None, 7, 1.5, True, [], {}, "", ESC, "x" * 300, [ESC], {"a": ESC}]


def mutate(doc, depth=0):
    if isinstance(doc, dict):
        doc = dict(doc)
        keys = list(doc)
        if keys and rng.random() < 0.3:
            del doc[rng.choice(keys)]
        if keys and rng.random() < 0.3:
            doc[rng.choice(keys)] = rng.choice(VALUES)
        for k in list(doc):
            if rng.random() < 0.5:
                doc[k] = mutate(doc[k], depth + 1)
        return doc
    if isinstance(doc, list):
        doc = [mutate(e, depth + 1) for e in doc]
        if rng.random() < 0.2:
            doc.append(rng.choice(VALUES))
        return doc
    if isinstance(doc, str) and rng.random() < 0.3:
        return doc + ESC
    if rng.random() < 0.05:
        return rng.choice(VALUES)
    return doc


crashes = []
for i in range(runs):
    path = rng.choice(list(valid))
    args = rng.choice(valid[path])
    doc = mutate(docs[path])
    put(path, doc)
    rc, out, err = run(*args)
    if not 0 <= rc <= 10 or not clean(out + err):  # exit codes, no signal
        crashes.append((rc, args, json.dumps(doc)[:400], err[:300]))
check("fuzz: %d mutated answers, every command ends with an exit code "
      "(no signal) and prints no control byte (seed %d)" % (runs, seed),
      not crashes,
      "\n".join(map(str, crashes[:5])))

os.unlink(docf)
srv.shutdown()
print("1..%d" % n)
sys.exit(1 if failed else 0)
