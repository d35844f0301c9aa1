#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The mount end to end (docs/mount.md): real programs, unchanged, against
# `configfsd --mount DIR` (the built binary, a fresh database): the
# kernel documentation's examples and a USB gadget script in the style of
# Documentation/usb/gadget_configfs.rst (set up, then torn down in the
# reverse order), the kernel sample module loaded with --module, find, ls
# -lR, tree, grep -r and cp -r, HTTP and mount writers on one attribute at
# once, the journal and the event stream, a restart, a stop while the
# mount is busy, a SIGKILL with a process inside (the unmount that then
# works), symlink(2) through any path to the mount (bind mounts, another
# mount namespace), and the start-up errors. One TAP line per check.
#   test-mount.sh CONFIGFSD SCHEMA_DIR SAMPLE_MODULE.so
# shellcheck disable=SC2016
set -uo pipefail
here=$(dirname "$0")
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
mount_skip_unless_fuse
configfsd=$1
schemas=$2
module=$3
tmp=$(mktemp -d)
M=$tmp/mnt
mkdir "$M"
cleanup() {
  [ -n "${configfsd_pid:-}" ] && kill -KILL "$configfsd_pid" 2>/dev/null
  [ -n "${busy_pid:-}" ] && kill "$busy_pid" 2>/dev/null
  # binds of the mount first: rm -rf must not walk into the tree
  for b in "$tmp/bind" "$tmp/sub" "$tmp/ns" "$tmp/chroot/cfg"; do
    mountpoint -q "$b" 2>/dev/null && umount -l "$b"
  done
  mount_cleanup "$M" "$tmp/mnt2"
  rm -rf "$tmp"
}
trap cleanup EXIT
export CONFIGFS_HOME=$M
B=
start() {
  mount_start "$configfsd" "$M" "$tmp/log" --db "$tmp/db" \
    --schema-dir "$schemas" --no-samples --module "$module" "$@" || exit 1
  B="http://127.0.0.1:$configfsd_port"
}
start

# ---- the kernel documentation's examples ----------------------------------
check "the configfs.rst examples run unchanged (mkdir, echo >, cat, mv pending->live, rmdir)" \
  sh "$here/scripts/kernel-example.sh"
kernel_out=$(sh "$here/scripts/kernel-example.sh" 2>&1)
check "they print what the kernel prints" same "$(printf '%s\n' device rw target 10.0.0.1 /dev/sda1 disk1 1 42 7 c description)" \
  printf '%s\n' "$kernel_out"

# ---- the kernel sample module, through the mount ---------------------------
count() { sed -n 1p "$M/01-childless/showme"; }
check "sample: every open of showme is one show() (RD3): the count goes up" \
  test "$(count)" -lt "$(count)"
check "sample: reads of one open come from one snapshot (RD3)" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
a = os.read(fd, 4096); os.lseek(fd, 0, 0); b = os.read(fd, 4096)
sys.exit(0 if a == b and a else 1)' "$M/01-childless/showme"
check "sample: echo 3 > storeme; cat storeme" \
  sh -c "echo 3 > '$M/01-childless/storeme' && test \"\$(cat '$M/01-childless/storeme')\" = 3"
check "sample: the value is the one HTTP shows" \
  same 3 curl -sf "$B/api/v1/config/01-childless/storeme"
check "sample: a value HTTP wrote shows at the next open (no cache)" \
  sh -c "curl -sf -X PUT --data-binary 11 '$B/api/v1/config/01-childless/storeme' >/dev/null && test \"\$(cat '$M/01-childless/storeme')\" = 11"
check "sample: a store the item refuses fails with its errno (EINVAL), nothing kept" \
  sh -c "! echo notanumber > '$M/01-childless/storeme' 2>/dev/null && test \"\$(cat '$M/01-childless/storeme')\" = 11"
check "sample: mkdir of a simple child, a group child and its child" \
  sh -c "mkdir '$M/02-simple-children/a' '$M/03-group-children/g' '$M/03-group-children/g/c'"
check "sample: committable: mkdir in pending, mv to live (C7), back (C8)" \
  sh -c "mkdir '$M/04-committable-children/pending/x' && mv '$M/04-committable-children/pending/x' '$M/04-committable-children/live/x' && test -d '$M/04-committable-children/live/x' && mv '$M/04-committable-children/live/x' '$M/04-committable-children/pending/x'"

# ---- the USB gadget script ---------------------------------------------------
check "gadget_configfs.rst set-up script runs unchanged" sh "$here/scripts/gadget-setup.sh"
G=$M/usb_gadget/g1
check "cat idVendor prints what the kernel prints (0x%04x)" same 0x1d6b cat "$G/idVendor"
check "cat idProduct prints 0x0104" same 0x0104 cat "$G/idProduct"
check "HTTP shows the same value as the mount" same 0x1d6b curl -sf "$B/api/v1/config/usb_gadget/g1/idVendor"
check "strings and configuration read back" \
  same "$(printf '%s\n' 'Foo Inc.' 'CDC 2xACM+NCM' 120)" \
  cat "$G/strings/0x409/manufacturer" "$G/configs/c.1/strings/0x409/configuration" "$G/configs/c.1/MaxPower"
check "readlink gives the kernel's relative text (RL1)" \
  same ../../../../usb_gadget/g1/functions/ncm.usb0 readlink "$G/configs/c.1/ncm.usb0"
check "the link leads to the function (RL3)" test -d "$G/configs/c.1/ncm.usb0/"
check "HTTP sees the link with its absolute target" \
  sh -c "curl -sf '$B/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0' -H 'Accept: application/json' | grep -q '/usb_gadget/g1/functions/ncm.usb0'"
check "the journal names the mount's writer uid:$(id -u)" \
  sh -c "curl -sf '$B/api/v1/history?path=/usb_gadget/g1&limit=5' | grep -q '\"principal\":\"uid:$(id -u)\"'"

# ---- any path to the mount (SL5; issue 37 (6)) -------------------------------
# symlink(2) resolves its target from the caller's working directory,
# which the mount knows to be in the tree by its identity (the device and
# mount ID of /proc/PID/cwd), not by the text of the mount point: a bind
# mount, a bind of one folder, a container's own mount namespace (-v) and
# a symlinked directory on the way are the tree as the mount point is.
G2=$M/usb_gadget/g2
mkdir -p "$G2/configs/c.1" && for f in ncm.usb0 acm.GS0 acm.GS1 acm.GS2 acm.GS3 ecm.usb0 ecm.usb1 ecm.usb2; do mkdir "$G2/functions/$f"; done
if [ "$(id -u)" = 0 ] && mkdir "$tmp/bind" "$tmp/sub" "$tmp/ns" &&
  mount --bind "$M" "$tmp/bind" 2>"$tmp/err"; then
  check "bind mount: cd B/usb_gadget/g2; ln -s functions/ncm.usb0 configs/c.1/ (as through the mount)" \
    sh -c "cd '$tmp/bind/usb_gadget/g2' && ln -s functions/ncm.usb0 configs/c.1/ && test \"\$(readlink configs/c.1/ncm.usb0)\" = ../../../../usb_gadget/g2/functions/ncm.usb0"
  check "bind mount: an absolute target through B" \
    ln -s "$tmp/bind/usb_gadget/g2/functions/acm.GS0" "$tmp/bind/usb_gadget/g2/configs/c.1/"
  check "bind mount: an absolute target through B, the link made through the mount" \
    ln -s "$tmp/bind/usb_gadget/g2/functions/ecm.usb0" "$G2/configs/c.1/"
  check "bind mount: '..' above B's root leaves the tree (EPERM)" \
    sh -c "cd '$tmp/bind/usb_gadget/g2' && ! ln -s ../../.. configs/c.1/up 2>'$tmp/err' && grep -q 'not permitted' '$tmp/err'"
  umount "$tmp/bind"
  if mount --bind "$M/usb_gadget" "$tmp/sub" 2>"$tmp/err"; then
    check "bind of the folder usb_gadget: cd SUB/g2; ln -s functions/acm.GS1 configs/c.1/" \
      sh -c "cd '$tmp/sub/g2' && ln -s functions/acm.GS1 configs/c.1/ && test -d '$G2/configs/c.1/acm.GS1/'"
    umount "$tmp/sub"
  else
    n=$((n + 1)); echo "ok $n - bind of a folder # SKIP mount --bind failed: $(head -1 "$tmp/err")"
  fi
  if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
    # a mount namespace of its own where only a bind of the mount shows
    # the tree, at a path the daemon's namespace does not have: a
    # container sharing the mount with -v
    check "another mount namespace (a container's -v): cd V/usb_gadget/g2; ln -s functions/acm.GS2 configs/c.1/" \
      unshare -m sh -c "mount --bind '$M' '$tmp/ns' && cd '$tmp/ns/usb_gadget/g2' && ln -s functions/acm.GS2 configs/c.1/"
    check "  and the link is there for everyone" test -d "$G2/configs/c.1/acm.GS2/"
  else
    n=$((n + 1)); echo "ok $n - another mount namespace # SKIP unshare -m is not available"
  fi
  # a chroot that sees the tree only through a bind inside it: the
  # caller's paths are from its own root
  if mkdir -p "$tmp/chroot/cfg" && mount --bind "$M" "$tmp/chroot/cfg" 2>"$tmp/err"; then
    check "a chroot: cd /cfg/usb_gadget/g2; ln -s functions/ecm.usb1 configs/c.1/ (and an absolute target)" \
      python3 -c 'import os, sys
os.chroot(sys.argv[1]); os.chdir("/cfg/usb_gadget/g2")
os.symlink("functions/ecm.usb1", "configs/c.1/ecm.usb1")
os.symlink("/cfg/usb_gadget/g2/functions/ecm.usb2", "configs/c.1/ecm.usb2")' "$tmp/chroot"
    umount "$tmp/chroot/cfg"
  else
    n=$((n + 1)); echo "ok $n - a chroot # SKIP mount --bind failed: $(head -1 "$tmp/err")"
  fi
else
  n=$((n + 1)); echo "ok $n - bind mounts # SKIP needs root and mount --bind: $(head -1 "$tmp/err" 2>/dev/null)"
fi
ln -s "$M" "$tmp/cfglink"
check "a symlinked directory: cd LINK/usb_gadget/g2; ln -s functions/acm.GS3 configs/c.1/" \
  sh -c "cd '$tmp/cfglink/usb_gadget/g2' && ln -s functions/acm.GS3 configs/c.1/ && test -d '$G2/configs/c.1/acm.GS3/'"
find "$G2/configs/c.1" -maxdepth 1 -type l -exec rm {} +
rmdir "$G2"/functions/* "$G2/configs/c.1" "$G2"
check "  (gadget g2 removed)" test ! -e "$G2"

# ---- tools -------------------------------------------------------------------
check "find lists the gadget tree (links not followed)" \
  sh -c "find '$G' | sed 's|^$G||' | sort > '$tmp/find' && grep -qx '/configs/c.1/ncm.usb0' '$tmp/find' && grep -qx '/strings/0x409/serialnumber' '$tmp/find' && ! grep -q '^/configs/c.1/ncm.usb0/' '$tmp/find'"
check "find -type l finds the two links" same 2 sh -c "find '$G' -type l | wc -l"
check "ls -lR: attributes 4096 bytes (F4), links 0777 (F5), dirs 0755 (F3)" \
  sh -c "ls -lR '$G' > '$tmp/ls' && grep -q '^-rw-r--r-- 1 .* 4096 .* idVendor\$' '$tmp/ls' && grep -q '^lrwxrwxrwx .* ncm.usb0 -> ../../../../usb_gadget/g1/functions/ncm.usb0\$' '$tmp/ls' && grep -q '^drwxr-xr-x .* functions\$' '$tmp/ls'"
if command -v tree >/dev/null; then
  check "tree draws the gadget" sh -c "tree '$G' | grep -q 'ncm.usb0 -> ../../../../usb_gadget/g1/functions/ncm.usb0'"
else
  n=$((n + 1)); echo "ok $n - tree draws the gadget # SKIP tree is not installed"
fi
check "grep -r finds values" sh -c "grep -r 0x1d6b '$G' | grep -q 'idVendor:0x1d6b'"
check "cp -r copies a subtree out with its values" \
  sh -c "cp -r '$G/strings' '$tmp/copy' && test \"\$(cat '$tmp/copy/0x409/product')\" = 'Bar Gadget'"

# ---- events, concurrency -----------------------------------------------------
curl -sfN --max-time 20 -H 'Accept: text/event-stream' "$B/api/v1/events" >"$tmp/events" 2>/dev/null &
ev_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/events" ] && break; sleep 0.1; done
echo "Baz Gadget" >"$G/strings/0x409/product"
for _ in $(seq 1 100); do grep -q 'strings/0x409/product' "$tmp/events" && break; sleep 0.1; done
kill "$ev_pid" 2>/dev/null
wait "$ev_pid" 2>/dev/null
check "a write through the mount is an event of the stream (the UI updates)" \
  grep -q '/usb_gadget/g1/strings/0x409/product' "$tmp/events"

mkdir "$M/02-simple-children/race"
A=$M/02-simple-children/race/storeme
before=$(curl -sf "$B/api/v1/history?path=/02-simple-children/race&limit=1000" | grep -o '"op":"store"' | wc -l)
pids=()
for w in 1 2 3; do
  (for k in $(seq 1 40); do echo $((w * 1000 + k)) >"$A" || exit 1; done) &
  pids+=($!)
  (for k in $(seq 1 40); do curl -sf -X PUT --data-binary $((w * 1000 + 500 + k)) "$B/api/v1/config/02-simple-children/race/storeme" >/dev/null || exit 1; done) &
  pids+=($!)
done
ok=0
for p in "${pids[@]}"; do wait "$p" || ok=1; done
check "3 mount and 3 HTTP writers on one attribute: every write succeeds" test $ok = 0
hist=$(curl -sf "$B/api/v1/history?path=/02-simple-children/race&limit=1000")
check "every write is journaled once (240 stores)" \
  test "$(($(printf '%s' "$hist" | grep -o '"op":"store"' | wc -l) - before))" = 240
check "the value shown is the last one journaled" \
  same "$(printf '%s' "$hist" | python3 -c 'import json,sys; e=[x for x in json.load(sys.stdin)["entries"] if x["op"]=="store"]; print(max(e, key=lambda x: x["revision"])["value"].strip())')" \
  cat "$A"

# ---- a restart shows what was written through the mount --------------------
st=0
mount_stop "$M" || st=1 # not in check(): its subshell cannot wait
check "SIGTERM stops the daemon (status 0: no leak under ASan) and unmounts" test $st = 0
start
check "after a restart: the gadget's values" same 0x1d6b cat "$G/idVendor"
check "after a restart: the links" same ../../../../usb_gadget/g1/functions/acm.GS0 readlink "$G/configs/c.1/acm.GS0"
check "after a restart: the sample's items" test -d "$M/03-group-children/g/c"

check "the gadget's teardown script runs unchanged, in reverse order" sh "$here/scripts/gadget-teardown.sh"
check "nothing of the gadget is left" same "" ls -A "$M/usb_gadget"

# ---- a busy mount does not keep the daemon from stopping -------------------
(cd "$M/02-simple-children" && exec sleep 60) &
busy_pid=$!
for _ in $(seq 1 50); do [ "$(readlink "/proc/$busy_pid/cwd")" = "$M/02-simple-children" ] && break; sleep 0.1; done
st=0
mount_stop "$M" || st=1
check "SIGTERM with a process inside the mount: stops, unmounts lazily" test $st = 0
kill "$busy_pid" 2>/dev/null
wait "$busy_pid" 2>/dev/null
busy_pid=

# ---- after SIGKILL (docs/mount.md, "Starting and stopping") ----------------
# The kernel ends the connection, the dead mount stays: with a process
# inside, fusermount3 -u is EBUSY; -uz detaches it at once.
start
(cd "$M/02-simple-children" && exec sleep 60) &
busy_pid=$!
for _ in $(seq 1 50); do [ "$(readlink "/proc/$busy_pid/cwd")" = "$M/02-simple-children" ] && break; sleep 0.1; done
kill -KILL "$configfsd_pid"
wait "$configfsd_pid" 2>/dev/null
configfsd_pid=
# (mountpoint(1) fails on a dead mount too: /proc/self/mountinfo tells)
check "after SIGKILL with a process inside: fusermount3 -u DIR fails EBUSY" \
  sh -c "! fusermount3 -u '$M' 2>'$tmp/err' && grep -q 'busy' '$tmp/err' && grep -q ' $M ' /proc/self/mountinfo"
check "  fusermount3 -uz DIR removes it at once" \
  sh -c "fusermount3 -uz '$M' && ! grep -q ' $M ' /proc/self/mountinfo"
check "  the process inside then gets ENOTCONN" \
  sh -c "! ls '/proc/$busy_pid/cwd/' 2>'$tmp/err' && grep -q 'not connected' '$tmp/err'"
kill "$busy_pid" 2>/dev/null
wait "$busy_pid" 2>/dev/null
busy_pid=
start
st=0
mount_stop "$M" || st=1
check "  and configfsd --mount DIR starts on it again" test $st = 0

# ---- who may use the mount (docs/security.md, "The mount") -----------------
# As root, another user is nobody: FUSE lets only the mounting user in
# unless --mount-allow-other, and then default_permissions applies the
# modes the mount shows (attributes 0644 and directories 0755, root's).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 0755 "$tmp" # the mount point itself reachable by another user
  nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  start
  mkdir "$M/02-simple-children/acc" && echo 5 >"$M/02-simple-children/acc/storeme"
  check "another user reaches the mount point's folder" "${nobody[@]}" ls "$tmp"
  check "without --mount-allow-other another user is refused the mount" \
    sh -c "! ${nobody[*]} ls '$M' >/dev/null 2>&1"
  st=0
  mount_stop "$M" || st=1
  check "stopped" test $st = 0
  start --mount-allow-other
  check "with --mount-allow-other another user reads an attribute (0644)" \
    same 5 "${nobody[@]}" cat "$M/02-simple-children/acc/storeme"
  check "with --mount-allow-other another user cannot write it (EACCES: default_permissions)" \
    sh -c "! ${nobody[*]} sh -c 'echo 6 > $M/02-simple-children/acc/storeme' 2>/dev/null && test \"\$(cat $M/02-simple-children/acc/storeme)\" = 5"
  check "with --mount-allow-other another user cannot mkdir (EACCES)" \
    sh -c "! ${nobody[*]} mkdir '$M/02-simple-children/other' 2>/dev/null && test ! -e '$M/02-simple-children/other'"
  st=0
  mount_stop "$M" || st=1
  check "stopped again" test $st = 0
fi

# ---- start-up errors ---------------------------------------------------------
mkdir "$tmp/full" && touch "$tmp/full/x"
rc=0
"$configfsd" --listen 127.0.0.1:0 --db "$tmp/db2" --no-samples --mount "$tmp/full" 2>"$tmp/err" || rc=$?
check "--mount on a directory that is not empty: a clean error" \
  sh -c "test $rc != 0 && grep -q 'is not empty' '$tmp/err'"
rc=0
"$configfsd" --listen 127.0.0.1:0 --db "$tmp/db2" --no-samples --mount "$tmp/full/x" 2>"$tmp/err" || rc=$?
check "--mount on a file: a clean error" \
  sh -c "test $rc != 0 && grep -q 'is not a directory' '$tmp/err'"
rc=0
CONFIGFSD_MOUNT=$tmp/nothere "$configfsd" --listen 127.0.0.1:0 --db "$tmp/db2" --no-samples 2>"$tmp/err" || rc=$?
check "CONFIGFSD_MOUNT is the twin of --mount (a missing directory: a clean error)" \
  sh -c "test $rc != 0 && grep -q 'nothere: No such file or directory' '$tmp/err'"

echo "1..$n"
[ "$failed" -eq 0 ]
