#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""systemd's Type=notify readiness, spoken by configfsd without libsystemd:
a unix datagram socket in the test plays the service manager. READY=1 must
come once the port answers (not before), STOPPING=1 on SIGTERM, for a
socket path and for an abstract name. TAP output.
usage: test-sd-notify.py CONFIGFSD"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

CONFIGFSD = sys.argv[1]
TIMEOUT = 10.0
results = []


def ok(cond, what, detail=""):
    results.append(cond)
    print(f"{'ok' if cond else 'not ok'} {len(results)} - {what}")
    if not cond and detail:
        for line in str(detail).splitlines()[-10:]:
            print(f"# {line}")


def recv_state(sock, deadline):
    sock.settimeout(max(0.01, deadline - time.monotonic()))
    try:
        data, _ = sock.recvfrom(4096)
    except socket.timeout:
        return None
    return dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)


def run(name, bind_addr, env_value, tmp):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(bind_addr)
    log = os.path.join(tmp, f"{name}.log")
    env = dict(os.environ, NOTIFY_SOCKET=env_value)
    proc = subprocess.Popen(
        [CONFIGFSD, "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, f"{name}.db"),
         "--no-samples", "--log-file", log],
        env=env, stdin=subprocess.DEVNULL)
    try:
        state = recv_state(sock, time.monotonic() + TIMEOUT)
        ok(state is not None and state.get("READY") == "1",
           f"{name}: READY=1 arrives", f"got {state!r}")
        port = None
        with open(log) as f:
            m = re.search(r"\(port (\d+)\)", f.read())
            port = m and m.group(1)
        ok(port is not None and state is not None and
           state.get("STATUS") == f"serving on port {port}",
           f"{name}: after the listening line, with STATUS naming the port",
           f"state {state!r}, port {port!r}")
        # ready means served: the first request after READY=1 succeeds
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                code = r.status
        except Exception as e:  # noqa: BLE001 - reported as the failure
            code = repr(e)
        ok(code == 200, f"{name}: /readyz answers 200 once READY=1 is sent", code)
        proc.send_signal(signal.SIGTERM)
        state = recv_state(sock, time.monotonic() + TIMEOUT)
        ok(state is not None and state.get("STOPPING") == "1",
           f"{name}: STOPPING=1 on SIGTERM", f"got {state!r}")
        try:
            rc = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            rc = "still running"
        ok(rc == 0, f"{name}: exits 0", rc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        sock.close()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "notify.sock")
        run("path", path, path, tmp)
        abstract = f"configfsd-test-notify-{os.getpid()}"
        run("abstract", "\0" + abstract, "@" + abstract, tmp)
        # no NOTIFY_SOCKET: starts and stops as ever, nothing to send to
        env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
        proc = subprocess.Popen(
            [CONFIGFSD, "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, "plain.db"),
             "--no-samples", "--log-file", os.path.join(tmp, "plain.log")],
            env=env, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            with open(os.path.join(tmp, "plain.log"), "a+") as f:
                f.seek(0)
                if "(port " in f.read():
                    break
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "still running"
        ok(rc == 0, "without NOTIFY_SOCKET: starts, stops, exits 0", rc)
    print(f"1..{len(results)}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
