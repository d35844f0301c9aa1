# SPDX-License-Identifier: MIT
"""Start and stop a real etcd cluster and configfsd nodes on loopback ports.

Every member and node listens on 127.0.0.1 on a port picked free; every
wait is bounded and polls a condition (no bare sleeps); stop() ends every
process it started, by its own pid, and removes the temporary directory.
"""
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need_wrk():
    """Whether wrk (the load generator) is here, installed from Debian if
    it was missing (as root, or with sudo -n)."""
    if not shutil.which("wrk"):
        sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "wrk"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    return shutil.which("wrk") is not None


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise TimeoutError("timed out after %ss waiting for %s" % (timeout, what))


def http(method, url, body=None, headers=None, timeout=10, cafile=None):
    """(status, headers, body bytes); never raises for an HTTP status.
    @cafile verifies an https server."""
    data = body
    if isinstance(body, (dict, list)):
        data = json.dumps(body).encode()
        headers = dict(headers or {}, **{"Content-Type": "application/json"})
    elif isinstance(body, str):
        data = body.encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers=headers or {})
    try:
        ctx = ssl.create_default_context(cafile=cafile) if cafile else None
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def metric(node, name):
    """The value of @name in @node's /metrics (it must be there)."""
    st, _, b = node.req("GET", "/metrics")
    assert st == 200, (st, b)
    for line in b.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no %s in /metrics" % name)


def make_tls(tmp):
    """A CA, a server certificate for 127.0.0.1 and a client certificate,
    made with openssl in @tmp. Returns the file names."""
    def run(*args):
        subprocess.run(["openssl"] + list(args), cwd=tmp, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=test-ca")
    for who, ext in (("server", "subjectAltName=IP:127.0.0.1"),
                     ("client", "extendedKeyUsage=clientAuth")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", who + ".key",
            "-out", who + ".csr", "-subj", "/CN=" + who)
        with open(os.path.join(tmp, who + ".ext"), "w") as f:
            f.write(ext + "\n")
        run("x509", "-req", "-in", who + ".csr", "-CA", "ca.pem",
            "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", who + ".ext", "-out", who + ".pem")
    return {k: os.path.join(tmp, k) for k in
            ("ca.pem", "server.pem", "server.key", "client.pem",
             "client.key")}


class Etcd:
    def __init__(self, tmp, n=3, tls=None):
        self.tls = tls
        self.scheme = "https" if tls else "http"
        self.tmp = tmp
        self.names = ["m%d" % i for i in range(n)]
        self.client = [free_port() for _ in range(n)]
        self.peer = [free_port() for _ in range(n)]
        self.procs = [None] * n
        self.initial = ",".join("%s=http://127.0.0.1:%d" % (nm, p)
                                for nm, p in zip(self.names, self.peer))

    def endpoints(self):
        return ",".join("127.0.0.1:%d" % p for p in self.client)

    def start_member(self, i, state="new"):
        d = os.path.join(self.tmp, self.names[i])
        log = open(os.path.join(self.tmp, self.names[i] + ".log"), "ab")
        c = "%s://127.0.0.1:%d" % (self.scheme, self.client[i])
        p = "http://127.0.0.1:%d" % self.peer[i]
        tls = []
        if self.tls:
            tls = ["--cert-file", self.tls["server.pem"],
                   "--key-file", self.tls["server.key"],
                   "--trusted-ca-file", self.tls["ca.pem"],
                   "--client-cert-auth"]
        self.procs[i] = subprocess.Popen(
            ["etcd"] + tls + ["--name", self.names[i], "--data-dir", d,
             "--listen-client-urls", c, "--advertise-client-urls", c,
             "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
             "--initial-cluster", self.initial,
             "--initial-cluster-state", state,
             "--initial-cluster-token", "configfsd-test",
             "--heartbeat-interval", "50", "--election-timeout", "500"],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def healthy(self, i):
        url = "%s://127.0.0.1:%d/health" % (self.scheme, self.client[i])
        try:
            if self.tls:
                import ssl
                ctx = ssl.create_default_context(cafile=self.tls["ca.pem"])
                ctx.load_cert_chain(self.tls["client.pem"],
                                    self.tls["client.key"])
                with urllib.request.urlopen(url, timeout=2,
                                            context=ctx) as r:
                    return json.loads(r.read()).get("health") == "true"
            st, _, b = http("GET", url, timeout=2)
            return st == 200 and json.loads(b).get("health") == "true"
        except (OSError, ValueError):
            return False

    def start(self):
        for i in range(len(self.names)):
            self.start_member(i)
        for i in range(len(self.names)):
            wait_for(lambda i=i: self.healthy(i), 30, "etcd member %d" % i)

    def kill(self, i):
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait(10)
        self.procs[i] = None

    def restart(self, i):
        self.start_member(i, state="existing")

    def stop(self):
        for p in self.procs:
            if p:
                p.send_signal(signal.SIGKILL)
                p.wait(10)
        self.procs = [None] * len(self.procs)


class Node:
    """A configfsd on a free loopback port, on etcd (@store, an etcd://
    URL) or, with @store None, on its own SQLite file in @tmp. With
    @cafile it serves https (its --tls-cert among @extra), verified with
    that CA."""

    def __init__(self, binary, tmp, name, store, extra=(), env=None,
                 cafile=None):
        self.binary, self.tmp, self.name = binary, tmp, name
        self.cafile = cafile
        self.store, self.extra = store, list(extra)
        self.env = dict(env or {})
        self.proc, self.port = None, None
        self.log = os.path.join(tmp, name + ".log")

    def start(self, wait_ready=True):
        env = dict(os.environ, TMPDIR=self.tmp, **self.env)
        logf = open(self.log, "ab")
        start = logf.tell()
        where = (["--store", self.store] if self.store else
                 ["--db", os.path.join(self.tmp, self.name + ".db")])
        self.proc = subprocess.Popen(
            [self.binary, "--listen", "127.0.0.1:0"] + where +
            ["--log-level", "warning"] + self.extra,
            stderr=logf, stdout=subprocess.DEVNULL, env=env)
        logf.close()
        self.port = wait_for(lambda: self.listening_after(start), 30,
                             self.name + " to listen")
        if wait_ready:
            wait_for(self.ready, 30, self.name + " to be ready")

    def log_size(self):
        return os.path.getsize(self.log) if os.path.exists(self.log) else 0

    def listening_after(self, offset):
        """The port of the first "listening on" line after byte @offset of
        the log, or None; raises if the process is gone."""
        if self.proc.poll() is not None:
            raise RuntimeError("%s exited: %s" % (self.name, self.read_log()))
        with open(self.log) as f:
            f.seek(offset)
            for line in f:
                if "listening on" in line and "(port " in line:
                    return int(line.rsplit("(port ", 1)[1].split(")")[0])
        return None

    def wait_restarted(self, offset, timeout=60):
        """The node re-executed itself (same pid) after byte @offset of its
        log: wait until it listens again, on its new port, and is ready."""
        self.port = wait_for(lambda: self.listening_after(offset), timeout,
                             self.name + " to listen again")
        wait_for(self.ready, timeout, self.name + " to be ready again")

    def read_log(self):
        with open(self.log) as f:
            return f.read()[-4000:]

    def url(self, path):
        return "%s://127.0.0.1:%d%s" % ("https" if self.cafile else "http",
                                        self.port, path)

    def req(self, method, path, body=None, headers=None, timeout=20):
        return http(method, self.url(path), body, headers, timeout,
                    self.cafile)

    def ready(self):
        try:
            return self.req("GET", "/readyz", timeout=2)[0] == 200
        except OSError:
            return False

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.proc = None

    def stop(self):
        if self.proc:
            # a process SIGSTOPped (a fault) would see SIGTERM only later
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait(10)
            self.proc = None


class Cluster:
    """3 etcd members and @nodes configfsd nodes."""

    def __init__(self, binary, nodes=3, prefix="/t"):
        self.tmp = tempfile.mkdtemp(prefix="configfsd-cluster-")
        self.etcd = Etcd(self.tmp)
        self.binary = binary
        self.prefix = prefix
        self.nodes = []
        self.n = nodes

    def store_url(self):
        return "etcd://%s%s" % (self.etcd.endpoints(), self.prefix)

    def start(self):
        self.etcd.start()
        for i in range(self.n):
            node = Node(self.binary, self.tmp, "node%d" % i, self.store_url(),
                        ["--body-limit", str(16 << 20)])
            node.start()
            self.nodes.append(node)
        return self

    def stop_and_read_logs(self):
        """stop(), returning every configfsd log by its name."""
        for n in self.nodes:
            n.stop()
        logs = {}
        # every node's log, those of tests that start their own nodes
        # (and etcd) in a subdirectory included; etcd members' are m*.log
        for d, _, files in os.walk(self.tmp):
            for f in files:
                if f.endswith(".log") and not f.startswith("m"):
                    name = os.path.relpath(os.path.join(d, f[:-4]), self.tmp)
                    with open(os.path.join(d, f), errors="replace") as fh:
                        logs[name] = fh.read()
        self.stop()
        return logs

    def stop(self):
        for n in self.nodes:
            n.stop()
        self.etcd.stop()
        if not os.environ.get("CFS_KEEP_TMP"):
            shutil.rmtree(self.tmp, ignore_errors=True)


class Dropper:
    """Shared by LossyProxy instances: once armed, the next request (the
    next @times requests) whose body holds @marker reach etcd, and their
    answers are lost."""

    def __init__(self, marker):
        self.marker = marker
        self.left = 0
        self.dropped = 0
        self.lock = threading.Lock()

    def arm(self, times=1):
        with self.lock:
            self.left = times

    def take(self, body):
        with self.lock:
            if self.left > 0 and self.marker in body:
                self.left -= 1
                self.dropped += 1
                return True
            return False


class LossyProxy:
    """An HTTP/1.1 proxy on a free loopback port in front of one etcd
    member. Requests pass through one at a time per connection (a watch
    is piped both ways as it streams); a request @dropper takes is sent
    to etcd, its answer read and thrown away, and the client's connection
    closed: etcd did it, the client cannot know (none without @dropper).

    With @refuse (a request path), a request for it is answered 404 here
    and never sent on (a configfsd older than that route), counted in
    self.refused; @upstream_port may then be set later (self.upstream).
    With @delay (seconds), every answer but a watch's is held that long
    (a slow link)."""

    def __init__(self, upstream_port, dropper=None, refuse=None, delay=0):
        self.upstream = ("127.0.0.1", upstream_port)
        self.dropper = dropper
        self.delay = delay
        self.refuse = refuse
        self.refused = 0
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.port = self.srv.getsockname()[1]
        self.socks = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.closed = True
        for s in [self.srv] + self.socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self):
        while not self.closed:
            try:
                cs, _ = self.srv.accept()
            except OSError:
                return
            self.socks.append(cs)
            threading.Thread(target=self._serve, args=(cs,),
                             daemon=True).start()

    @staticmethod
    def _head(sock, buf):
        """(head bytes, rest) of the next message, or (None, b"")."""
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            if not data:
                return None, b""
            buf += data
        head, rest = buf.split(b"\r\n\r\n", 1)
        return head + b"\r\n\r\n", rest

    @staticmethod
    def _exactly(sock, buf, n):
        while len(buf) < n:
            data = sock.recv(65536)
            if not data:
                raise OSError("closed in a body")
            buf += data
        return buf[:n], buf[n:]

    def _body(self, sock, head, buf):
        """(raw body as sent, rest): Content-Length or chunked."""
        low = head.lower()
        if b"transfer-encoding: chunked" in low:
            out = b""
            while True:
                while b"\r\n" not in buf:
                    data = sock.recv(65536)
                    if not data:
                        raise OSError("closed in a chunk")
                    buf += data
                line, buf = buf.split(b"\r\n", 1)
                size = int(line.split(b";")[0], 16)
                chunk, buf = self._exactly(sock, buf, size + 2)
                out += line + b"\r\n" + chunk
                if size == 0:
                    return out, buf
        for line in low.split(b"\r\n"):
            if line.startswith(b"content-length:"):
                return self._exactly(sock, buf, int(line.split(b":")[1]))
        return b"", buf

    def _pipe(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _serve(self, cs):
        us = socket.create_connection(self.upstream)
        self.socks.append(us)
        cbuf, ubuf = b"", b""
        try:
            while True:
                head, cbuf = self._head(cs, cbuf)
                if head is None:
                    return
                if b"expect: 100-continue" in head.lower():
                    cs.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    head = b"\r\n".join(
                        h for h in head.split(b"\r\n")
                        if not h.lower().startswith(b"expect:"))
                body, cbuf = self._body(cs, head, cbuf)
                path = head.split(b" ", 2)[1]
                if self.refuse and path.split(b"?")[0] == self.refuse:
                    self.refused += 1
                    cs.sendall(b"HTTP/1.1 404 Not Found\r\n"
                               b"Content-Length: 0\r\n\r\n")
                    continue
                us.sendall(head + body)
                if path == b"/v3/watch":
                    threading.Thread(target=self._pipe, args=(us, cs),
                                     daemon=True).start()
                    if cbuf:
                        us.sendall(cbuf)
                    self._pipe(cs, us)
                    return
                rhead, ubuf = self._head(us, ubuf)
                if rhead is None:
                    return
                rbody, ubuf = self._body(us, rhead, ubuf)
                if self.dropper and self.dropper.take(body):
                    return  # etcd answered; the client never hears it
                if self.delay:
                    time.sleep(self.delay)  # the slow link itself
                cs.sendall(rhead + rbody)
        except OSError:
            pass
        finally:
            cs.close()
            us.close()
