#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# configfsctl shell against a live configfsd (127.0.0.1, a port it picks, a
# fresh database): the working directory (cd, pwd, cd into what is not a
# folder), paths relative to it in every command, ln -s with a relative
# target resolved from the working directory as configfs does, the exit
# status of a piped session; and on a pseudo-terminal (pty-shell.py), tab
# completion of commands and of paths from the server, and the history
# file. One TAP line per check.
#   test-cli-shell.sh CONFIGFSD CONFIGFSCTL SCHEMA_DIR PTY_SHELL
# The checks are single-quoted on purpose: check() evaluates them later.
# shellcheck disable=SC2016,SC2034
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/configfsd.sh
source "$(dirname "$0")/../lib/configfsd.sh"
configfsd=$1
CTL=$2
schemas=$3
pty_shell=$4
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
unset CONFIGFSCTL_SERVER CONFIGFSCTL_TOKEN CONFIGFSCTL_TOKEN_FILE \
  CONFIGFSCTL_CACERT

# shellcheck source=SCRIPTDIR/../lib/cli-checks.sh
source "$(dirname "$0")/../lib/cli-checks.sh"
# session LINE...: the lines piped into configfsctl shell; $rc, $out, $err
session() {
  rc=0
  printf '%s\n' "$@" | "$CTL" --server "$S" shell >"$out" 2>"$err" || rc=$?
}

if ! configfsd_start "$configfsd" "$tmp/server.log" --db "$tmp/c.db" \
  --schema-dir "$schemas" --log-level info; then
  echo "Bail out! configfsd did not start"
  exit 1
fi
pid=$configfsd_pid
S=http://127.0.0.1:$configfsd_port

session pwd 'mkdir usb_gadget/g1' 'cd usb_gadget/g1' pwd \
  'mkdir functions/ncm.usb0' 'mkdir configs/c.1' \
  'ln -s functions/ncm.usb0 configs/c.1/' 'cd configs/c.1' pwd 'ls -l' \
  'cd ../../functions/./ncm.usb0/..' pwd 'cd' pwd
check "cd and pwd: relative, . and .., cd alone to /" \
  '[ $rc = 0 ] && [ "$(grep -x "/[a-z_/.0-9]*" $out | tr "\n" " ")" = "/ /usb_gadget/g1 /usb_gadget/g1/configs/c.1 /usb_gadget/g1/functions / " ]'
check "ln -s TARGET DIR/ in the shell: TARGET from the working directory, as configfs" \
  'has "ncm.usb0 -> /usb_gadget/g1/functions/ncm.usb0"'
"$CTL" --server "$S" cat /usb_gadget/g1/configs/c.1/ncm.usb0 >/dev/null 2>&1
session 'cd /usb_gadget/g1' 'write idVendor 0x1d6b' 'cat idVendor' 'cd strings' 'ls ../configs'
check "write, cat and ls take paths from the working directory; write's value is left alone" \
  '[ $rc = 0 ] && grep -qx 0x1d6b $out && grep -q "^c\.1  \[" $out'

# ---- summaries: the schema's template after each child in ls ------------------------
"$CTL" --server "$S" write /usb_gadget/g1/UDC "$(printf 'dummy\033[2J\n')"
mark=$(wc -l <"$tmp/server.log")
session 'cd /usb_gadget' ls 'ls -l g1/configs' 'ls g1/functions' 'ls g1' 'ls' \
  'ls /02-simple-children' 'ls -R g1/configs'
tail -n +"$((mark + 1))" "$tmp/server.log" | grep -a "event=access" >"$tmp/access"
check "ls: a gadget's summary from its template ({idVendor}:{idProduct}, UDC {UDC})" \
  '[ $rc = 0 ] && grep -qxF "g1  [0x1d6b:0x0000, UDC dummy\\x1b[2J]" $out'
check "ls -l: a config's links and MaxPower after its line; an unset value is -" \
  'grep -q "^drwxr-xr-x  group .* c\.1  \[/usb_gadget/g1/functions/ncm\.usb0, MaxPower 2 mA\]$" $out && grep -qxF "ncm.usb0  [ifname -, host -]" $out'
check "no summary where the type declares none (attributes, default groups, ls -R)" \
  'grep -qx idVendor $out && grep -qx configs $out && grep -qx description $out && grep -qx c.1 $out'
check "the description is asked once per subsystem, not at all for a folder without children" \
  '[ "$(grep -c "path=/api/v1/schema/" $tmp/access)" = 1 ] && grep -q "path=/api/v1/schema/usb_gadget " $tmp/access'
check "values are read only of the folders listed, not below them" \
  '! grep "path=/api/v1/config/usb_gadget/g1/functions/" $tmp/access && [ "$(grep -c "path=/api/v1/config/usb_gadget/g1/functions " $tmp/access)" = 2 ]'
"$CTL" --server "$S" ls /usb_gadget >"$out"
check "plain ls (not the shell) prints names only, for scripts" '[ "$(cat $out)" = g1 ]'
session 'cd /usb_gadget/g1/idVendor' pwd
check "cd into an attribute: not a directory, the working directory kept" \
  'has "Not a directory" $err && grep -qx / $out'
session 'cd /nowhere' 'cat /usb_gadget/g1/nothing'
check "a piped session exits with its last command's status (ENOENT: 3)" \
  '[ $rc = 3 ] && has "No such file" $err'
session 'exit 7' pwd
check "exit N ends the session with N" '[ $rc = 7 ] && ! grep -qx / $out'
session "mkdir '/02-simple-children/two words'" 'ls /02-simple-children'
check "quotes keep a name with a blank whole" '[ $rc = 0 ] && grep -qx "two words" $out'
# mkdir's -a NAME=VALUE: a value, never a path to resolve from the working
# directory, however the option is spelled (-a V, -pa V, -aV, --attr V)
session 'cd /usb_gadget' 'mkdir -a UDC=../../x ga1' 'mkdir -pa UDC=y/z ga2' \
  'mkdir -aUDC=../q ga3' 'mkdir --attr UDC=./w ga4' 'cat ga1/UDC' \
  'cat ga2/UDC' 'cat ga3/UDC' 'cat ga4/UDC'
check "the value after -a (or -pa, -aV, --attr) is left alone, not taken as a path" \
  '[ $rc = 0 ] && [ "$(tr "\n" " " <$out)" = "../../x y/z ../q ./w " ]'
session 'ls --json usb_gadget'
check "--json applies to one command" '[ $rc = 0 ] && has "\"path\":\"/usb_gadget\""'
session 'ls --server http://127.0.0.1:1 /'
check "other global options are refused in the shell: usage (2)" '[ $rc = 2 ]'

# ---- --cwd, CONFIGFSCTL_CWD: a working directory for the plain CLI ----------------
# run ARG...: configfsctl ARG... once; $rc, $out, $err
run() {
  rc=0
  "$CTL" --server "$S" "$@" >"$out" 2>"$err" || rc=$?
}
run mkdir -p /usb_gadget/g2/functions/acm.gs0
run --cwd /usb_gadget/g2 mkdir functions/ncm.usb0
run --cwd /usb_gadget/g2 mkdir configs/c.1
run --cwd /usb_gadget/g2 ln -s functions/ncm.usb0 configs/c.1/
check "--cwd DIR ln -s TARGET LINKDIR/: TARGET from DIR, as configfs (the issue's script)" \
  '[ $rc = 0 ] && [ "$("$CTL" --server "$S" ls -l /usb_gadget/g2/configs/c.1 | grep -c "ncm.usb0 -> /usb_gadget/g2/functions/ncm.usb0$")" = 1 ]'
rc=0
CONFIGFSCTL_CWD=usb_gadget/g2/configs "$CTL" --server "$S" ln -s ../functions/acm.gs0 c.1/acm >"$out" 2>"$err" || rc=$?
check "CONFIGFSCTL_CWD (leading / left out), .. in the target: from the working directory" \
  '[ $rc = 0 ] && "$CTL" --server "$S" ls -l /usb_gadget/g2/configs/c.1 | grep -q "acm -> /usb_gadget/g2/functions/acm.gs0$"'
rc=0
CONFIGFSCTL_CWD=/nowhere "$CTL" --server "$S" --cwd /usb_gadget/g2/configs/c.1/ ls >"$out" 2>"$err" || rc=$?
check "--cwd wins over CONFIGFSCTL_CWD; a trailing / on it; ls without PATH lists it" \
  '[ $rc = 0 ] && grep -qx MaxPower $out && grep -qx acm $out'
run --cwd /usb_gadget/g2/configs/c.1 cat ../../idVendor
check "cat ../../ATTR from the working directory" '[ $rc = 0 ] && grep -qx 0x0000 $out'
run --cwd /usb_gadget/g2 ls configs/c.1/
check "a trailing / on a folder argument" '[ $rc = 0 ] && grep -qx MaxPower $out'
run --cwd /usb_gadget/g2 write UDC ../../x
check "write VALUE is a value, not a path: left alone" \
  '[ $rc = 0 ] && [ "$("$CTL" --server "$S" cat /usb_gadget/g2/UDC)" = ../../x ]'
run --cwd /usb_gadget/g2 ln -s ../../../functions/ncm.usb0 configs/c.1/up
check "a relative target climbing above the root: EPERM (6), said, nothing made" \
  '[ $rc = 6 ] && has "../../../functions/ncm.usb0: from /usb_gadget/g2 it climbs above the root" $err && ! "$CTL" --server "$S" ls /usb_gadget/g2/configs/c.1 | grep -q up'
run --cwd /usb_gadget rmdir ../../g2
check "any path climbing above the root is refused the same way" \
  '[ $rc = 6 ] && has "climbs above the root" $err && "$CTL" --server "$S" ls /usb_gadget | grep -qx g2'
run --cwd /.. ls
check "a --cwd above the root: EPERM (6)" '[ $rc = 6 ] && has "--cwd /.." $err'
run ln -s ../../functions/acm.gs0 /usb_gadget/g2/configs/c.1/acm2
check "without a working directory a relative target is still taken from the link's folder" \
  '[ $rc = 0 ] && "$CTL" --server "$S" ls -l /usb_gadget/g2/configs/c.1 | grep -q "acm2 -> /usb_gadget/g2/functions/acm.gs0$"'
rc=0
printf '%s\n' pwd ls 'cd ..' pwd | "$CTL" --server "$S" --cwd /usb_gadget/g2/configs shell >"$out" 2>"$err" || rc=$?
check "the shell starts in --cwd's folder" \
  '[ $rc = 0 ] && [ "$(head -1 $out)" = /usb_gadget/g2/configs ] && grep -q "^c\.1" $out && grep -qx /usb_gadget/g2 $out'
rc=0
"$CTL" --server "$S" --cwd /usb_gadget/g2/idVendor shell </dev/null >"$out" 2>"$err" || rc=$?
check "a shell whose --cwd is no folder does not start" '[ $rc != 0 ] && has "Not a directory" $err'
session 'cd /' 'cd ..' pwd
check "the shell's cd above the root: refused, the working directory kept" \
  '[ $rc = 0 ] && has "climbs above the root" $err && grep -qx / $out'
session 'ls --cwd /usb_gadget'
check "--cwd on a shell line: usage (2), cd is the shell's" '[ $rc = 2 ] && has "cd changes" $err'
run --cwd /usb_gadget --help
check "--help names --cwd and CONFIGFSCTL_CWD" '[ $rc = 0 ] && has "--cwd DIR" && has CONFIGFSCTL_CWD'

# ---- on a terminal ---------------------------------------------------------------
python3 "$pty_shell" "$CTL" "$S" "$tmp" 'cd usb_g\t' '\n' 'pwd\n' 'wri\t' ' g1/idV\t' ' 0x0525\n' \
  'cd g1/conf\t' '\n' 'pwd\n' >"$out" 2>"$err"
rc=$?
check "Tab completes a path from the server (usb_g -> usb_gadget/)" \
  '[ $rc = 0 ] && grep -q "^/usb_gadget$" $out'
check "Tab completes a command and a path relative to the working directory" \
  '[ "$("$CTL" --server "$S" cat /usb_gadget/g1/idVendor)" = 0x0525 ]'
check "Tab completes under the working directory (g1/conf -> g1/configs/)" \
  'grep -q "^/usb_gadget/g1/configs$" $out'
check "history is kept in ~/.configfsctl_history" \
  '[ -f $tmp/.configfsctl_history ] && grep -q "^pwd$" $tmp/.configfsctl_history'

finish_checks
