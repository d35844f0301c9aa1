#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`configfsd probe`, the container HEALTHCHECK: exit 0 on a 2xx answer, 1
on any other answer, on no server, on a server that stays silent (within
its --timeout) or answers something that is not HTTP, 2 on a bad URL; with
no URL it probes /readyz at the port of $CONFIGFSD_LISTEN. TAP output.
usage: test-probe.py CONFIGFSD"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CONFIGFSD = sys.argv[1]
results = []


def ok(cond, what, detail=""):
    results.append(cond)
    print(f"{'ok' if cond else 'not ok'} {len(results)} - {what}")
    if not cond and detail:
        for line in str(detail).splitlines()[-10:]:
            print(f"# {line}")


def probe(*args, env=None):
    t0 = time.monotonic()
    p = subprocess.run([CONFIGFSD, "probe", *args], capture_output=True, text=True,
                       timeout=30, env=env)
    return p.returncode, p.stdout + p.stderr, time.monotonic() - t0


def fake_server(reply):
    """A listening socket on 127.0.0.1 that answers @reply (None: never)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    held = []

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            held.append(conn)
            if reply is not None:
                conn.recv(4096)
                conn.sendall(reply)
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log")
        proc = subprocess.Popen(
            [CONFIGFSD, "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, "db"),
             "--no-samples", "--log-file", log], stdin=subprocess.DEVNULL)
        try:
            port = None
            deadline = time.monotonic() + 10
            while port is None and time.monotonic() < deadline:
                with open(log, "a+") as f:
                    f.seek(0)
                    m = re.search(r"\(port (\d+)\)", f.read())
                port = m and m.group(1)
                time.sleep(0.05)
            if port is None:
                print("Bail out! configfsd did not start")
                return 1
            base = f"http://127.0.0.1:{port}"
            rc, out, _ = probe(f"{base}/readyz")
            ok(rc == 0 and "200" in out, "a ready server: exit 0, status line printed", out)
            rc, out, _ = probe(f"http://localhost:{port}")
            ok(rc == 0, "a URL without a path probes /readyz, names resolve", out)
            rc, out, _ = probe(f"{base}/no-such-page")
            ok(rc == 1 and "404" in out, "a 404 answer: exit 1", out)
            env = dict(os.environ, CONFIGFSD_LISTEN=f"0.0.0.0:{port}")
            rc, out, _ = probe(env=env)
            ok(rc == 0 and f"127.0.0.1:{port}/readyz" in out,
               "no URL: /readyz at the port of $CONFIGFSD_LISTEN, 0.0.0.0 as 127.0.0.1", out)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
        rc, out, _ = probe(f"http://127.0.0.1:{port}/readyz")
        ok(rc == 1 and "refused" in out, "no server: exit 1, says why", out)

    srv, port = fake_server(None)
    rc, out, took = probe("--timeout", "1", f"http://127.0.0.1:{port}/readyz")
    srv.close()
    ok(rc == 1 and took < 10, f"a silent server: exit 1 after the timeout ({took:.1f} s)", out)
    srv, port = fake_server(b"SSH-2.0-OpenSSH_9.2\r\n")
    rc, out, _ = probe(f"http://127.0.0.1:{port}/readyz")
    srv.close()
    ok(rc == 1 and "not an HTTP answer" in out, "not HTTP: exit 1", out)
    srv, port = fake_server(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
    rc, out, _ = probe(f"http://127.0.0.1:{port}/readyz")
    srv.close()
    ok(rc == 1 and "503" in out, "503 (not ready): exit 1", out)
    srv, port = fake_server(b"HTTP/1.0 204 No Content\r\n\r\n")
    rc, out, _ = probe(f"http://127.0.0.1:{port}/readyz")
    srv.close()
    ok(rc == 0, "any 2xx: exit 0", out)
    for bad in ["https://127.0.0.1:1/", "http://", "http://host:port/", "http://[::1/",
                "http://h/a b"]:
        rc, out, _ = probe(bad)
        ok(rc == 2, f"bad URL {bad!r}: exit 2", out)
    rc, out, _ = probe("--timeout", "0", "http://127.0.0.1:1/")
    ok(rc == 2, "bad --timeout: exit 2", out)
    print(f"1..{len(results)}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
