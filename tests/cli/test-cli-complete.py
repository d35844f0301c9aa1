#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""configfsctl's completion scripts against hostile names (issue 37 (2)).

Any writer can make a child whose name is shell code. The test makes such
children on a real configfsd (127.0.0.1, a port it picks, a fresh
database) and completes them in a real interactive bash, and zsh when it
is installed (scripts/deps.sh test installs it), on a pseudo-terminal, as
a user pressing Tab would: for each name, the line typed is
    configfsctl --server URL --json ls /02-simple-children/hN<Tab> >out.N; ...
with a prefix that only that child has. The completed line is run; the
check is that no marker file of the names' commands appeared (nothing was
executed) and that the command listed the very child (the "path" of its
answer). Names: $(...), backticks, ;, a name that splits into a command,
blanks, quotes, glob and brace characters, pipes and redirections, a
backslash, !, $VAR, ':' and '=', and a name with a leading '-' (offered as
./-NAME); plus a typed prefix that is itself quoted (a backslash, or a
quote the word begins with, which readline keeps and closes) and one
holding a ':' (where bash's COMP_WORDBREAKS cuts a word). A name with a newline cannot
be made (the server refuses control bytes). One TAP line per check.
usage: test-cli-complete.py CONFIGFSD CONFIGFSCTL SCHEMA_DIR
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CONFIGFSD, CTL, SCHEMAS = sys.argv[1:4]
tmp = tempfile.mkdtemp(prefix="cfs-complete-")
work = os.path.join(tmp, "work")  # where a name's command would leave a marker
os.mkdir(work)
procs = []
n = 0
failed = 0


def check(what, ok, info=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what), flush=True)
    if not ok:
        failed += 1
        for line in str(info).splitlines()[:30]:
            print("# " + line)


def skip(what, why):
    global n
    n += 1
    print("ok %d - %s # SKIP %s" % (n, what, why), flush=True)


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)


def bail(why):
    print("Bail out! " + why)
    cleanup()
    sys.exit(1)


# ---- a real configfsd ---------------------------------------------------------

log_path = os.path.join(tmp, "server.log")
with open(log_path, "w") as log:
    srv = subprocess.Popen([CONFIGFSD, "--listen", "127.0.0.1:0", "--db",
                            os.path.join(tmp, "c.db"), "--schema-dir", SCHEMAS,
                            "--log-level", "warning"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=log)
procs.append(srv)
port = None
end = time.monotonic() + 10
while time.monotonic() < end and srv.poll() is None and not port:
    with open(log_path) as f:
        m = re.search(r"listening on .* \(port (\d+)\)", f.read())
    if m:
        port = m.group(1)
    else:
        time.sleep(0.05)
if not port:
    bail("configfsd did not start")
URL = "http://127.0.0.1:" + port


def ctl(*args):
    return subprocess.run([CTL, "--server", URL] + list(args),
                          stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=30)


# name -> where it lives; each marker file a name's command would make is
# "pwned<N>" in the shell's working directory
NAMES = [
    "h1$(touch pwned1)",
    "h2`touch pwned2`",
    "h3;touch pwned3",
    "h4 a b;touch pwned4",
    "h5 'single' \"double\"",
    "h6*?[ab]{c,d}",
    "h7|touch pwned7&>x<y",
    "h8\\back\\\\slash",
    "h9!bang#hash~tilde",
    "hz $HOME ${IFS} $(touch pwnedz)",
    "hc:x=y;touch pwnedc",
]
for name in NAMES:
    p = ctl("mkdir", "/02-simple-children/" + name)
    if p.returncode != 0:
        bail("mkdir %r: %s" % (name, p.stderr.decode(errors="replace")))
p = ctl("mkdir", "/netconsole/-rf")
if p.returncode != 0:
    bail("mkdir /netconsole/-rf: %s" % p.stderr.decode(errors="replace"))
# a name with a newline cannot be made (configfs names hold no control
# bytes), so none can reach a completion from a real server
# (test-cli-hostile.py: a fake server's such names are not offered)
p = ctl("mkdir", "/02-simple-children/nl\nx")
check("a name with a newline is refused by the server (EINVAL, 5)",
      p.returncode == 5, p.stderr)

bindir = os.path.join(tmp, "bin")
os.mkdir(bindir)
os.symlink(os.path.abspath(CTL), os.path.join(bindir, "configfsctl"))
for shell in ("bash", "zsh"):
    p = subprocess.run([CTL, "completion", shell], capture_output=True)
    if p.returncode != 0:
        bail("completion %s: %s" % (shell, p.stderr))
    if shell == "bash":
        with open(os.path.join(tmp, "complete.bash"), "wb") as f:
            f.write(p.stdout)
    else:
        os.mkdir(os.path.join(tmp, "zfunc"))
        with open(os.path.join(tmp, "zfunc", "_configfsctl"), "wb") as f:
            f.write(p.stdout)

# ---- an interactive shell on a pseudo-terminal ---------------------------------


class Term:
    """A shell on a pty, its output drained as it comes."""

    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(work)
            os.execve(argv[0], argv, env)
        self.shown = b""

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([self.fd], [], [], min(left, 0.05))
            if r:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                self.shown += data

    def run(self, keys, done_file, timeout=20):
        """Type @keys (a line ending in Enter); wait, bounded, for
        @done_file. @return whether it came."""
        os.write(self.fd, keys.encode())
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if os.path.exists(done_file):
                return True
            self.drain(0.05)
        os.write(self.fd, b"\x03")  # a line left open: drop it
        self.drain(0.5)
        return False

    def close(self):
        try:
            os.write(self.fd, b"exit\n")
        except OSError:
            pass
        end = time.monotonic() + 5
        while time.monotonic() < end:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            self.drain(0.05)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def shell_env():
    env = {"HOME": tmp, "TERM": "xterm", "INPUTRC": "/dev/null",
           "PATH": bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
           "LANG": "C.UTF-8", "PS1": "$ "}
    return env


def markers():
    return sorted(f for f in os.listdir(work) if f.startswith("pwned"))


def answer_path(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read()).get("path")
    except (OSError, ValueError, AttributeError):
        return None


def complete_each(shell, term, tag):
    """Each hostile name through @term: completed, run, checked."""
    setup_done = os.path.join(work, "setup-" + tag)
    ok = term.run(SETUP[shell] + "; echo >" + setup_done + "\n", setup_done)
    check("%s: the completion is loaded" % shell, ok,
          term.shown.decode(errors="replace")[-1500:])
    if not ok:
        return
    # typed: the name's leading letters and digits, which no other has
    cases = [("/02-simple-children/" + re.match(r"[a-z0-9]+", name).group(0),
              "--json ls", "/02-simple-children/" + name) for name in NAMES]
    # a typed prefix that is quoted itself: taken off before asking
    cases.append(("/02-simple-children/h4\\ a", "--json ls",
                  "/02-simple-children/" + NAMES[3]))
    # a word begun with a quote: completed inside it, for that quote (bash's
    # readline closes it after; zsh leaves it open, to go on into the
    # folder: the test closes it)
    for quote in ("'", '"'):
        for k in (0, 1, 4):
            name = NAMES[k]
            cases.append((quote + "/02-simple-children/" +
                          re.match(r"[a-z0-9]+", name).group(0), "--json ls",
                          "/02-simple-children/" + name))
    # a ':' typed (bash's COMP_WORDBREAKS): readline keeps what precedes it
    cases.append(("/02-simple-children/hc:x", "--json ls",
                  "/02-simple-children/" + NAMES[-1]))
    # a leading '-': offered as ./-rf, never read as an option
    cases.append(("", "--cwd /netconsole --json ls", "/netconsole/-rf"))
    # the server from CONFIGFSCTL_SERVER (exported by the setup), none on
    # the line
    for k in (0, 3):
        cases.append(("/02-simple-children/" +
                      re.match(r"[a-z0-9]+", NAMES[k]).group(0),
                      "ENV --json ls", "/02-simple-children/" + NAMES[k]))
    for i, (typed, cmd, want) in enumerate(cases):
        out = os.path.join(work, "out-%s.%d" % (tag, i))
        done = os.path.join(work, "rc-%s.%d" % (tag, i))
        close = typed[0] if shell == "zsh" and typed[:1] in ("'", '"') else ""
        before = len(term.shown)
        server = "" if cmd.startswith("ENV ") else "--server %s " % URL
        came = term.run("configfsctl %s%s %s\t%s >%s 2>&1; "
                        "echo $? >%s\n" % (server, cmd.replace("ENV ", ""),
                                            typed, close, out, done), done)
        got = answer_path(out)
        check("%s: %r completed and run lists that very child, "
              "nothing executed" % (shell, want.rsplit("/", 1)[1]),
              came and got == want and not markers(),
              "came %s, listed %r, markers %s\nterminal: %r" %
              (came, got, markers(), term.shown[before:][-800:]))
        for f in markers():
            os.unlink(os.path.join(work, f))


SETUP = {
    # failglob: an unquoted glob matching nothing would not run at all
    "bash": "source %s/complete.bash; shopt -s failglob; "
            "export CONFIGFSCTL_SERVER=%s" % (tmp, URL),
    "zsh": "fpath=(%s/zfunc $fpath); autoload -Uz compinit; "
           "compinit -u -D; export CONFIGFSCTL_SERVER=%s" % (tmp, URL),
}

bash = shutil.which("bash")
term = Term([bash, "--norc", "--noprofile", "-i"], shell_env())
complete_each("bash", term, "bash")
term.close()

zsh = shutil.which("zsh")
if zsh:
    term = Term([zsh, "-f", "-i"], shell_env())
    complete_each("zsh", term, "zsh")
    term.close()
else:
    skip("zsh: hostile names completed quoted",
         "zsh is not installed (scripts/deps.sh test installs it)")

cleanup()
print("1..%d" % n)
sys.exit(1 if failed else 0)
