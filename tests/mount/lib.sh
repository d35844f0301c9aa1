# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the tests of the mount (suite mount): start configfsd with
# --mount on a fresh directory, wait for the mount, stop it; TAP checks.
# shellcheck source=SCRIPTDIR/../lib/configfsd.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/configfsd.sh"

# mount_skip_unless_fuse: exit 77 (skipped, with the reason) when this
# machine cannot mount FUSE file systems.
mount_skip_unless_fuse() {
  if [ ! -c /dev/fuse ]; then
    echo "1..0 # SKIP no /dev/fuse on this machine (a container without --device /dev/fuse?)"
    exit 77
  fi
  if [ "$(id -u)" -ne 0 ] && ! command -v fusermount3 >/dev/null; then
    echo "1..0 # SKIP not root and no fusermount3 (Debian package fuse3)"
    exit 77
  fi
}

n=0
failed=0
# check DESCRIPTION COMMAND...: one TAP line; the command's output on
# failure.
check() {
  local desc=$1 o
  shift
  n=$((n + 1))
  if o=$("$@" 2>&1); then
    echo "ok $n - $desc"
  else
    failed=$((failed + 1))
    echo "not ok $n - $desc"
    printf '%s\n' "$o" | head -20 | sed 's/^/# /'
  fi
}
# same EXPECTED COMMAND...: the command's stdout is EXPECTED.
same() {
  local want=$1 got
  shift
  got=$("$@") || { echo "command failed: $*"; return 1; }
  [ "$got" = "$want" ] || { printf 'want: %s\ngot:  %s\n' "$want" "$got"; return 1; }
}

# mount_start BINARY DIR LOG ARGS...: configfsd serving DIR; waits for the
# mount (10 s at most). Sets configfsd_pid, configfsd_port.
mount_start() {
  local bin=$1 dir=$2 log=$3
  shift 3
  configfsd_start "$bin" "$log" --mount "$dir" "$@" || return 1
  for _ in $(seq 1 100); do
    mountpoint -q "$dir" && return 0
    kill -0 "$configfsd_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "configfsd did not mount $dir" >&2
  cat "$log" >&2
  return 1
}

# mount_stop DIR: SIGTERM, wait for the exit (10 s at most), which must be
# clean (status 0); the mount must be gone after it.
mount_stop() {
  local dir=$1
  kill -TERM "$configfsd_pid" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "$configfsd_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$configfsd_pid" 2>/dev/null; then
    echo "configfsd did not stop" >&2
    kill -KILL "$configfsd_pid"
    return 1
  fi
  local st=0
  wait "$configfsd_pid" 2>/dev/null || st=$?
  # a clean exit: under ASan a leak or an error makes it non-zero
  [ "$st" -eq 0 ] || { echo "configfsd exited with status $st" >&2; return 1; }
  ! mountpoint -q "$dir"
}

# mount_cleanup DIR...: a mount left by a failed test goes (lazily).
mount_cleanup() {
  for d in "$@"; do
    if mountpoint -q "$d" 2>/dev/null; then
      fusermount3 -u -z "$d" 2>/dev/null || umount -l "$d" 2>/dev/null
    fi
  done
}
