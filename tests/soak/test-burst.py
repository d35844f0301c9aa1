#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bursts of connections: a node keeps accepting.

wrk opens CONNECTIONS keep-alive connections to one node, sends GETs on
all of them as fast as they are answered, and after SECONDS exits with a
request in flight on each (its sockets closed or reset under the node's
answers). ROUNDS times in a row. After each burst a new connection must
be answered (/healthz, 10 s at most): under libmicrohttpd's epoll loop the
node fell silent from about the fourth burst on, for tens of seconds,
/healthz included, as the connections closed mid-request still counted
against --max-connections (server/daemon.c). Every burst must also have
answered some requests, and none with a failure.

Usage: test-burst.py CONFIGFSD. wrk comes from Debian, installed here if
missing (as root, or with sudo -n); without it the test is skipped. TAP.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROUNDS, SECONDS, CONNECTIONS, LIMIT = 8, 2, 384, 512

LUA = """
ok, bad = 0, 0
local threads = {}
setup = function(t) table.insert(threads, t) end
response = function(status, headers, body)
  if status == 200 then ok = ok + 1 else bad = bad + 1 end
end
done = function(summary, latency, requests)
  local o, b = 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); b = b + t:get("bad") end
  io.write(string.format("RESULT ok=%d bad=%d\\n", o, b))
end
"""


def need_wrk():
    if shutil.which("wrk"):
        return True
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "wrk"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    return shutil.which("wrk") is not None


def get(url, timeout):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except OSError as e:
        return "%s" % e


def main():
    binary = sys.argv[1]
    if not need_wrk():
        print("1..0 # SKIP wrk is missing and could not be installed")
        return 0
    tmp = tempfile.mkdtemp(prefix="configfsd-burst-")
    log = os.path.join(tmp, "node.log")
    with open(log, "wb") as logf:
        node = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--db",
             os.path.join(tmp, "burst.db"), "--log-level", "warning",
             "--max-connections", str(LIMIT)],
            stderr=logf, stdout=subprocess.DEVNULL)
    lua = os.path.join(tmp, "burst.lua")
    with open(lua, "w") as f:
        f.write(LUA)
    failed = 0
    try:
        port = None
        for _ in range(300):
            with open(log) as f:
                m = re.search(r"\(port (\d+)\)", f.read())
            if m or node.poll() is not None:
                break
            time.sleep(0.1)
        if not m:
            print("Bail out! the node did not start: " + open(log).read())
            return 1
        port = int(m.group(1))
        base = "http://127.0.0.1:%d" % port
        print("1..%d" % ROUNDS)
        for k in range(1, ROUNDS + 1):
            out = subprocess.run(
                ["wrk", "-t1", "-c%d" % CONNECTIONS, "-d%ds" % SECONDS,
                 "--timeout", "10s", "-s", lua, base + "/api/v1"],
                capture_output=True, text=True, timeout=SECONDS + 60).stdout
            m = re.search(r"RESULT ok=(\d+) bad=(\d+)", out)
            ok, bad = (int(m.group(1)), int(m.group(2))) if m else (0, -1)
            st = get(base + "/healthz", 10)
            if ok > 0 and bad == 0 and st == 200:
                print("ok %d - burst %d of %d connections: %d answered, "
                      "then a new connection is answered" % (
                          k, k, CONNECTIONS, ok))
            else:
                failed += 1
                print("not ok %d - burst %d of %d connections: %d answered, "
                      "%s failed; /healthz afterwards: %s" % (
                          k, k, CONNECTIONS, ok, bad, st))
    finally:
        node.send_signal(signal.SIGTERM)
        try:
            node.wait(30)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
