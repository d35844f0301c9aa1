#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Drive `configfsctl shell` on a pseudo-terminal, as a user at a keyboard:
# each KEYS argument is typed (\t is the Tab key, \n Enter), then the
# output is read until the prompt comes back (bounded: 10 s each). Prints
# everything the terminal showed.
#   pty-shell.py CONFIGFSCTL SERVER HOME KEYS...
import os
import pty
import select
import sys
import time

ctl, server, home, *keys = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.environ["HOME"] = home
    os.environ["TERM"] = "xterm"
    os.execv(ctl, [ctl, "--server", server, "shell"])


def read_until(done, timeout=10.0):
    buf = b""
    end = time.time() + timeout
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # the shell exited
            break
        if not data:
            break
        buf += data
        if done(buf):
            break
    return buf


shown = read_until(lambda b: b.endswith(b"> "))
for k in keys:
    k = k.encode().decode("unicode_escape").encode()
    os.write(fd, k)
    if k.endswith(b"\t"):  # wait for the completion to be drawn
        shown += read_until(lambda b: False, 1.0)
    else:
        shown += read_until(lambda b: b.rstrip().endswith(b">"))
os.write(fd, b"exit\n")
shown += read_until(lambda b: False, 3.0)
os.waitpid(pid, 0)
sys.stdout.write(shown.decode(errors="replace").replace("\r", ""))
