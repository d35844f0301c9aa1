#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# configfsctl end to end: every command against a live configfsd (the real
# binary, on 127.0.0.1 and a port it picks, a fresh database), with odd
# values, errors and their exit codes, tokens, rmdir -r of a subtree with
# links, and watch receiving an event. One TAP line per check.
#   test-cli.sh CONFIGFSD CONFIGFSCTL SCHEMA_DIR MODULE.so
# The checks are single-quoted on purpose: check() evaluates them later.
# shellcheck disable=SC2016,SC2034
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/configfsd.sh
source "$(dirname "$0")/../lib/configfsd.sh"
configfsd=$1
CTL=$2
schemas=$3
module=$4
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
unset CONFIGFSCTL_SERVER CONFIGFSCTL_TOKEN CONFIGFSCTL_TOKEN_FILE \
  CONFIGFSCTL_CACERT

# shellcheck source=SCRIPTDIR/../lib/cli-checks.sh
source "$(dirname "$0")/../lib/cli-checks.sh" # check, has, wait_for

# run ARGS...: configfsctl with stdin from $STDIN (default: nothing);
# sets $rc, $out and $err.
run() {
  rc=0
  "$CTL" "$@" >"$out" 2>"$err" <"${STDIN:-/dev/null}" || rc=$?
}
# start NAME ARGS...: a configfsd in the background (with the cli-raw
# module unless ARGS say --no-module); sets $port.
start() {
  local name=$1
  local mod=(--module "$module")
  shift
  if [ "${1:-}" = --no-module ]; then
    mod=()
    shift
  fi
  if ! configfsd_start "$configfsd" "$tmp/$name.log" --db "$tmp/$name.db" \
    --schema-dir "$schemas" "${mod[@]}" --log-level warning "$@"; then
    echo "Bail out! configfsd did not start"
    exit 1
  fi
  pids+=("$configfsd_pid")
  port=$configfsd_port
}

start main
export CONFIGFSCTL_SERVER=http://127.0.0.1:$port

# ---- usage, help, version -------------------------------------------------
run --version
check "--version prints the version" '[ $rc = 0 ] && grep -qE "^configfsctl [0-9]+\.[0-9]+" $out'
run --help
check "--help lists every command and the exit codes" \
  '[ $rc = 0 ] && has "rmdir [-r] PATH" && has "watch [--since REV]" && has "10  server unreachable"'
run ls --help
check "COMMAND --help explains the command" '[ $rc = 0 ] && has "Usage: configfsctl [OPTION]... ls [-l] [-R] [PATH]"'
run frobnicate
check "an unknown command is a usage error (2)" '[ $rc = 2 ] && has "unknown command" $err'
run
check "no command is a usage error (2)" '[ $rc = 2 ]'
run ls --bogus
check "an unknown option is a usage error (2)" '[ $rc = 2 ]'
run cat -r /x
check "an option of another command is a usage error (2)" '[ $rc = 2 ] && has "-r does not apply" $err'
run cat
check "a missing argument is a usage error (2)" '[ $rc = 2 ] && has "Usage: configfsctl cat PATH" $err'
run history --limit ten
check "a bad number is a usage error (2)" '[ $rc = 2 ]'

# ---- health ----------------------------------------------------------------
run health
check "health: alive and ready" '[ $rc = 0 ] && has "alive, ready at revision 0"'
run --json health
check "health --json: both answers" \
  '[ $rc = 0 ] && has "\"healthz\":{\"status\":\"ok\"}" && has "\"status\":\"ready\""'

# ---- ls, mkdir, write, cat -------------------------------------------------
run ls
check "ls lists the subsystems, the module's included" \
  '[ $rc = 0 ] && grep -qx 02-simple-children $out && grep -qx cli-raw $out'
run ls --json /
check "ls --json prints the server's node" '[ $rc = 0 ] && has "\"kind\":\"root\""'
run mkdir /02-simple-children/child1
check "mkdir makes an item, silently" '[ $rc = 0 ] && [ ! -s $out ]'
run mkdir /02-simple-children/child1
check "mkdir of an existing name: EEXIST (4), the problem on stderr" \
  '[ $rc = 4 ] && has "File exists" $err && has "409 Conflict, EEXIST" $err'
run --json mkdir /02-simple-children/child1
check "--json: the problem document on stderr" \
  '[ $rc = 4 ] && has "\"errno\":\"EEXIST\"" $err && [ ! -s $out ]'
run mkdir /02-simple-children/nope/deeper
check "mkdir under a missing folder: ENOENT (3)" '[ $rc = 3 ] && has ENOENT $err'
run mkdir /01-childless/x
check "mkdir where configfs refuses it: EPERM (6)" '[ $rc = 6 ] && has EPERM $err'
run write /02-simple-children/child1/storeme 42
check "write stores a value, silently" '[ $rc = 0 ] && [ ! -s $out ]'
run cat /02-simple-children/child1/storeme
check "cat prints exactly what show() returned" '[ $rc = 0 ] && [ "$(od -An -c $out | tr -s " ")" = " 4 2 \\n" ]'
STDIN=<(printf 43) run write 02-simple-children/child1/storeme
check "write reads the value from stdin (leading / optional)" '[ $rc = 0 ]'
run cat 02-simple-children/child1/storeme
check "... and cat reads it back" '[ "$(cat $out)" = 43 ]'
run write /02-simple-children/child1/storeme abc
check "a value store() refuses: EINVAL (5) with the detail" '[ $rc = 5 ] && has EINVAL $err'
run cat /02-simple-children/nope
check "cat of a missing attribute: ENOENT (3)" '[ $rc = 3 ]'
run cat /02-simple-children/child1
check "cat of a folder: Is a directory (1)" '[ $rc = 1 ] && has "Is a directory" $err'
run --json cat /02-simple-children/child1/storeme
rev=$(sed -n 's/.*"revision":\([0-9]*\).*/\1/p' "$out")
check "cat --json: the attribute with its revision" '[ $rc = 0 ] && has "\"value\":\"43\"" && [ -n "$rev" ]'
run write --if-match $((rev + 1)) /02-simple-children/child1/storeme 44
check "write --if-match with a stale revision: ESTALE (9), unchanged" \
  '[ $rc = 9 ] && has ESTALE $err && [ "$("$CTL" cat /02-simple-children/child1/storeme)" = 43 ]'
run write --if-match "$rev" --json /02-simple-children/child1/storeme 44
check "write --if-match with the current revision; --json prints the attribute" \
  '[ $rc = 0 ] && has "\"value\":\"44\""'
run mkdir -a storeme=7 /02-simple-children/child2
check "mkdir -a stores attributes in the same change" \
  '[ $rc = 0 ] && [ "$("$CTL" cat /02-simple-children/child2/storeme)" = 7 ]'
run mkdir -a storeme=x /02-simple-children/child3
check "mkdir -a with a refused value makes nothing" \
  '[ $rc = 5 ] && ! "$CTL" ls /02-simple-children | grep -qx child3'
run mkdir -a "$(printf 'text=\xff')" /cli-raw/u8
check "mkdir -a with a value that is not UTF-8 is refused before sending (5)" \
  '[ $rc = 5 ] && has "not UTF-8" $err && ! "$CTL" ls /cli-raw | grep -qx u8'
run mkdir -p /usb_gadget/g1/configs/c.1
check "mkdir -p makes the missing parents" '[ $rc = 0 ] && "$CTL" ls /usb_gadget/g1/configs | grep -qx c.1'
run mkdir -p /usb_gadget/g1/configs/c.1
check "mkdir -p of an existing folder succeeds" '[ $rc = 0 ]'
run mkdir -p /usb_gadget/g1/functions/ncm.usb0
check "mkdir -p below an existing folder" '[ $rc = 0 ]'
run ls -l /02-simple-children/child1
check "ls -l: mode, kind, revision, name" \
  '[ $rc = 0 ] && grep -qE "^-rw-r--r--  attribute +[0-9]+  storeme$" $out'

# ---- odd values: the cli-raw module keeps bytes exactly --------------------
run mkdir /cli-raw/r1
check "mkdir in the module's subsystem" '[ $rc = 0 ]'
printf 'a\0b\0' >"$tmp/nul"
STDIN=$tmp/nul run write /cli-raw/r1/text
check "a NUL byte without --binary is refused before sending (5)" \
  '[ $rc = 5 ] && has "--binary" $err && [ ! -s "$("$CTL" cat /cli-raw/r1/text >$tmp/c; echo $tmp/c)" ]'
STDIN=$tmp/nul run write --binary /cli-raw/r1/text
"$CTL" cat /cli-raw/r1/text >"$tmp/back"
check "write --binary stores NUL bytes; cat gives them back exactly" '[ $rc = 0 ] && cmp -s $tmp/nul $tmp/back'
printf '\xff\xfe\x80 not utf-8\n' >"$tmp/bad"
STDIN=$tmp/bad run write /cli-raw/r1/text
"$CTL" cat /cli-raw/r1/text >"$tmp/back"
check "invalid UTF-8 is stored and read back byte for byte" '[ $rc = 0 ] && cmp -s $tmp/bad $tmp/back'
run tree /cli-raw
check "tree escapes bytes that are not text" '[ $rc = 0 ] && has "text = \\xff\\xfe\\x80 not utf-8"'
STDIN=$tmp/bad run write /fakenbd/pending/x/device
check "invalid UTF-8 into a missing item: ENOENT (3)" '[ $rc = 3 ]'
head -c 4095 /dev/zero | tr '\0' 'v' >"$tmp/big"
STDIN=$tmp/big run write /cli-raw/r1/text
"$CTL" cat /cli-raw/r1/text >"$tmp/back"
check "a 4095-byte value round-trips" '[ $rc = 0 ] && cmp -s $tmp/big $tmp/back'
printf v >>"$tmp/big"
STDIN=$tmp/big run write /cli-raw/r1/text
check "a 4096-byte value: EFBIG (5), the old value kept" \
  '[ $rc = 5 ] && has EFBIG $err && [ "$("$CTL" cat /cli-raw/r1/text | wc -c)" = 4095 ]'
head -c 20000 /dev/urandom >"$tmp/blob"
STDIN=$tmp/blob run write --binary /cli-raw/r1/blob
"$CTL" cat /cli-raw/r1/blob >"$tmp/back"
check "a 20000-byte binary attribute round-trips" '[ $rc = 0 ] && cmp -s $tmp/blob $tmp/back'
run ls -l /cli-raw/r1
check "ls -l marks the binary attribute" '[ $rc = 0 ] && grep -qE "^-rw-r--r--  binary .* blob$" $out'

# ---- names that need percent-encoding --------------------------------------
odd='a b%c?d#e+&=é'
run mkdir "/cli-raw/$odd"
check "mkdir of a name with space % ? # + & = and non-ASCII" '[ $rc = 0 ]'
run ls /cli-raw
check "ls shows the name as it is" '[ $rc = 0 ] && grep -qxF "$odd" $out'
run write "/cli-raw/$odd/text" 'hello world'
check "write into it" '[ $rc = 0 ] && [ "$("$CTL" cat "/cli-raw/$odd/text")" = "hello world" ]'
run mkdir '/cli-raw/x%2Fy'
check "%2F typed in a name stays those three bytes" \
  '[ $rc = 0 ] && "$CTL" ls /cli-raw | grep -qxF "x%2Fy"'
run rmdir '/cli-raw/x%2Fy'
check "... and is removed by that name" '[ $rc = 0 ] && ! "$CTL" ls /cli-raw | grep -qxF "x%2Fy"'
run ls '/cli-raw/../02-simple-children'
check "a .. segment is refused by the server (5)" '[ $rc = 5 ]'
run rmdir "/cli-raw/$odd"
check "rmdir of the odd name" '[ $rc = 0 ]'

# ---- ln -s, rm, rmdir ------------------------------------------------------
run ln -s ../../functions/ncm.usb0 /usb_gadget/g1/configs/c.1/ncm.usb0
check "ln -s with a target relative to the link's folder" '[ $rc = 0 ]'
run ls -l /usb_gadget/g1/configs/c.1
check "ls -l shows the link and its absolute target" \
  '[ $rc = 0 ] && has "lrwxrwxrwx  link           -  ncm.usb0 -> /usb_gadget/g1/functions/ncm.usb0"'
run ln -s /usb_gadget/g1/functions/ncm.usb0 /usb_gadget/g1/configs/c.1/
check "ln -s into a folder (trailing /) of an existing name: EEXIST (4)" '[ $rc = 4 ]'
run ln /usb_gadget/g1/functions/ncm.usb0 /usb_gadget/g1/configs/c.1/x
check "ln without -s is a usage error (2)" '[ $rc = 2 ]'
run rmdir /usb_gadget/g1/functions/ncm.usb0
check "rmdir of a link target: EBUSY (7)" '[ $rc = 7 ] && has EBUSY $err'
run rm /usb_gadget/g1/configs/c.1
check "rm of a folder is refused (1), the folder stays" \
  '[ $rc = 1 ] && has EISDIR $err && "$CTL" ls /usb_gadget/g1/configs | grep -qx c.1'
run rmdir /usb_gadget/g1/configs/c.1/ncm.usb0
check "rmdir of a link is refused (1)" '[ $rc = 1 ] && has ENOTDIR $err'
run rmdir /usb_gadget/g1
check "rmdir of a folder with children: ENOTEMPTY (8)" '[ $rc = 8 ]'
run ls -l /usb_gadget/g1/configs/c.1/ncm.usb0
check "ls -l of a link: that entry alone" \
  '[ $rc = 0 ] && [ $(wc -l <$out) = 1 ] && has "ncm.usb0 -> /usb_gadget/g1/functions/ncm.usb0"'
run ls /usb_gadget/g1/configs/c.1/MaxPower
check "ls of an attribute: its name" '[ $rc = 0 ] && [ "$(cat $out)" = MaxPower ]'
run tree /usb_gadget/g1/configs
check "tree shows links with their targets" \
  '[ $rc = 0 ] && has "\`-- ncm.usb0 -> /usb_gadget/g1/functions/ncm.usb0" && has "|-- MaxPower = "'
run cat /usb_gadget/g1/configs/c.1/ncm.usb0
check "cat of a link is refused like a directory (1)" '[ $rc = 1 ] && has "Is a directory" $err'
run rm /usb_gadget/g1/configs/c.1/ncm.usb0
check "rm removes the link" '[ $rc = 0 ] && ! "$CTL" ls /usb_gadget/g1/configs/c.1 | grep -q ncm'
run --json ln -s /usb_gadget/g1/functions/ncm.usb0 /usb_gadget/g1/configs/c.1/
check "ln -s TARGET DIR/ names the link after the target; --json the link" \
  '[ $rc = 0 ] && has "\"path\":\"/usb_gadget/g1/configs/c.1/ncm.usb0\""'
run rmdir /02-simple-children/child2
check "rmdir removes an item" '[ $rc = 0 ] && ! "$CTL" ls /02-simple-children | grep -qx child2'

# rmdir -r: a gadget with a function, a config linking it, strings
"$CTL" mkdir -p /usb_gadget/g1/strings/0x409
"$CTL" write /usb_gadget/g1/strings/0x409/manufacturer acme
"$CTL" mkdir -p /usb_gadget/g2/functions/acm.gs0
"$CTL" mkdir -p /usb_gadget/g2/configs/c.1
"$CTL" ln -s /usb_gadget/g2/functions/acm.gs0 /usb_gadget/g2/configs/c.1/
"$CTL" ln -s /usb_gadget/g1/functions/ncm.usb0 /usb_gadget/g2/configs/c.1/
before=$("$CTL" health | sed 's/.*revision //')
run rmdir -r /usb_gadget/g1
check "rmdir -r refuses a subtree that a link outside points into (EBUSY, 7)" \
  '[ $rc = 7 ] && "$CTL" ls /usb_gadget | grep -qx g1 && [ "$("$CTL" health | sed "s/.*revision //")" = "$before" ]'
run --json rmdir -r /usb_gadget/g2
check "rmdir -r removes a subtree with links as one batch, links first" \
  '[ $rc = 0 ] && ! "$CTL" ls /usb_gadget | grep -qx g2 && has "\"results\":[{\"op\":\"unlink\"" && [ "$("$CTL" health | sed "s/.*revision //")" = $((before + 1)) ]'
run history --limit 1
check "... in one revision" '[ $rc = 0 ] && grep -q "^$((before + 1)) .* rmdir /usb_gadget/g2$" $out'
run rmdir -r /usb_gadget/g1
check "rmdir -r once nothing points in" '[ $rc = 0 ] && ! "$CTL" ls /usb_gadget | grep -qx g1'
run rmdir -r --if-revision 1 /02-simple-children/child1
check "rmdir -r --if-revision with a stale revision: ESTALE (9)" \
  '[ $rc = 9 ] && "$CTL" ls /02-simple-children | grep -qx child1'

# ---- mv: commit and uncommit -----------------------------------------------
"$CTL" mkdir /04-committable-children/pending/c1
run mv /04-committable-children/pending/c1 /04-committable-children/live
check "mv pending/x live (the folder) commits" \
  '[ $rc = 0 ] && "$CTL" ls /04-committable-children/live | grep -qx c1'
run rmdir /04-committable-children/live/c1
check "rmdir in live/ is refused: EPERM (6)" '[ $rc = 6 ]'
run --json mv /04-committable-children/live/c1 /04-committable-children/pending/c1
check "mv live/x pending/x uncommits; --json the node" \
  '[ $rc = 0 ] && has "\"path\":\"/04-committable-children/pending/c1\""'
run mv --if-match 1 /04-committable-children/pending/c1 /04-committable-children/live/
check "mv --if-match stale: ESTALE (9)" '[ $rc = 9 ]'
run mv /04-committable-children/pending/c1 /04-committable-children/live/other
check "mv to another name: refused by configfs (5 or 6)" '[ $rc = 5 ] || [ $rc = 6 ]'
"$CTL" mv /04-committable-children/pending/c1 /04-committable-children/live/
run rmdir -r /04-committable-children/live
check "rmdir -r of a default group is refused whole (EPERM, 6): c1 stays" \
  '[ $rc = 6 ] && "$CTL" ls /04-committable-children/live | grep -qx c1'
run rmdir -r /04-committable-children/live/c1
check "rmdir -r of a committed item uncommits it first" \
  '[ $rc = 0 ] && [ -z "$("$CTL" ls /04-committable-children/live)" ] && [ -z "$("$CTL" ls /04-committable-children/pending)" ]'

# ---- batch -----------------------------------------------------------------
cat >"$tmp/batch.json" <<'EOF'
{"ops":[{"op":"mkdir","path":"/02-simple-children/b1"},
        {"op":"store","path":"/02-simple-children/b1/storeme","value":"7"}]}
EOF
run batch "$tmp/batch.json"
check "batch FILE runs the document, prints the revision" \
  '[ $rc = 0 ] && grep -qE "^revision [0-9]+$" $out && [ "$("$CTL" cat /02-simple-children/b1/storeme)" = 7 ]'
STDIN=<(echo '[{"op":"mkdir","path":"/02-simple-children/b2"},{"op":"store","path":"/02-simple-children/b2/storeme","value":"x"}]') \
  run batch -
check "a failing batch: the op's errno (5), op_index on stderr, nothing made" \
  '[ $rc = 5 ] && has "op_index 1" $err && ! "$CTL" ls /02-simple-children | grep -qx b2'
STDIN=<(echo '[{"op":"mkdir","path":"/02-simple-children/b2"}]') run --json batch -
check "batch - reads stdin; a bare list of ops; --json the result" \
  '[ $rc = 0 ] && has "\"results\":[{\"op\":\"mkdir\",\"path\":\"/02-simple-children/b2\",\"status\":\"ok\"}]"'
STDIN=<(echo '[{"op":"rmdir","path":"/02-simple-children/b2"}]') run batch --if-revision 1 -
check "batch --if-revision stale: ESTALE (9)" '[ $rc = 9 ]'
STDIN=<(echo '{"ops":[') run batch -
check "batch of malformed JSON: EINVAL (5) with the line" '[ $rc = 5 ] && has "-:" $err'
run batch "$tmp/nonexistent.json"
check "batch of a missing file: ENOENT (3)" '[ $rc = 3 ]'
# compare ops: etcd's txn compare on a value (b1/storeme holds 7)
STDIN=<(echo '[{"op":"compare","path":"/02-simple-children/b1/storeme","value":"7\n"},{"op":"store","path":"/02-simple-children/b1/storeme","value":"8"}]') \
  run batch -
check "batch with a compare that holds: runs, prints the revision" \
  '[ $rc = 0 ] && grep -qE "^revision [0-9]+$" $out && [ "$("$CTL" cat /02-simple-children/b1/storeme)" = 8 ]'
STDIN=<(echo '[{"op":"mkdir","path":"/02-simple-children/b3"},{"op":"compare","path":"/02-simple-children/b1/storeme","value":"7"},{"op":"store","path":"/02-simple-children/b1/storeme","value":"9"}]') \
  run batch -
check "a compare that does not hold: ESTALE (9), its op_index on stderr, nothing changed" \
  '[ $rc = 9 ] && has "op_index 1" $err && has "compare /02-simple-children/b1/storeme" $err && [ "$("$CTL" cat /02-simple-children/b1/storeme)" = 8 ] && ! "$CTL" ls /02-simple-children | grep -qx b3'
cat >"$tmp/txn.json" <<'EOF'
{"ops": [{"op": "compare", "path": "/02-simple-children/b1/storeme", "value": "8"},
         {"op": "store", "path": "/02-simple-children/b1/storeme", "value": "10"}],
 "else": [{"op": "mkdir", "path": "/02-simple-children/was-not-8"}]}
EOF
run batch "$tmp/txn.json"
check "batch with else, the compares holding: ops ran, said" \
  '[ $rc = 0 ] && grep -qE "^revision [0-9]+ \(the compares held: ops ran\)$" $out && [ "$("$CTL" cat /02-simple-children/b1/storeme)" = 10 ]'
run batch "$tmp/txn.json"
check "batch with else, a compare not holding: else ran, said, exit 0" \
  '[ $rc = 0 ] && grep -qE "^revision [0-9]+ \(a compare did not hold: else ran\)$" $out && "$CTL" ls /02-simple-children | grep -qx was-not-8 && [ "$("$CTL" cat /02-simple-children/b1/storeme)" = 10 ]'
run rmdir /02-simple-children/was-not-8
run --json batch "$tmp/txn.json"
check "batch --json with else: the server's succeeded" '[ $rc = 0 ] && has "\"succeeded\":false"'
STDIN=<(echo '[{"op":"compare","path":"/02-simple-children/b1","value":""}]') run batch -
check "a compare of a folder: said, not taken for another value" \
  '[ $rc != 0 ] && [ $rc != 9 ] && has "not an attribute" $err && has "op_index 0" $err'
STDIN=<(echo '{"ops":[{"op":"compare","path":"/02-simple-children/b1/storeme","value":"10"},{"op":"store","path":"/02-simple-children/b1/storeme","value":"7"}]}') \
  run batch -
check "compare and store as one: the value put back (7)" \
  '[ $rc = 0 ] && [ "$("$CTL" cat /02-simple-children/b1/storeme)" = 7 ]'

# ---- export, import --------------------------------------------------------
run export /02-simple-children
cp "$out" "$tmp/export.json"
check "export PATH prints the document" '[ $rc = 0 ] && has "\"format\":1" && has "\"path\":\"/02-simple-children/b1\""'
run export
check "export (all) includes the module's items" '[ $rc = 0 ] && has "\"path\":\"/cli-raw/r1\""'
"$CTL" rmdir /02-simple-children/b1
run import --dry-run "$tmp/export.json"
check "import --dry-run prints the plan, changes nothing" \
  '[ $rc = 0 ] && has "mkdir /02-simple-children/b1" && has "store /02-simple-children/b1/storeme = 7" && has "dry run" && ! "$CTL" ls /02-simple-children | grep -qx b1'
run import "$tmp/export.json"
check "import applies it" \
  '[ $rc = 0 ] && grep -qE "^revision [0-9]+: 2 operations$" $out && [ "$("$CTL" cat /02-simple-children/b1/storeme)" = 7 ]'
STDIN=$tmp/export.json run import -
check "import - reads stdin; an unchanged tree: no changes" '[ $rc = 0 ] && has "no changes"'
run import "$tmp/export.json"
check "import of an unchanged tree: no changes" '[ $rc = 0 ] && has "no changes"'
# a module's subsystem (dlopen'ed), 20000 random bytes in a binary attribute
"$CTL" export /cli-raw >"$tmp/raw.json"
run import --replace --dry-run "$tmp/raw.json"
check "a module's items with random binary values: an unchanged tree plans nothing" \
  '[ $rc = 0 ] && has "dry run: 0 operations"'
head -c 300 /dev/urandom >"$tmp/blob2"
"$CTL" write --binary /cli-raw/r1/blob <"$tmp/blob2"
check "the module's binary value changed after the export" \
  '"$CTL" cat /cli-raw/r1/blob | cmp -s - "$tmp/blob2"'
run import --replace "$tmp/raw.json"
"$CTL" cat /cli-raw/r1/blob >"$tmp/back"
check "import --replace puts the module's binary value back, byte for byte" \
  '[ $rc = 0 ] && grep -qE "^revision [0-9]+: 1 operations$" $out && cmp -s $tmp/blob $tmp/back'
"$CTL" mkdir /02-simple-children/extra
"$CTL" export /02-simple-children >"$tmp/export-now.json"
CONFIGFSCTL_PROGRESS=1 run export /02-simple-children
check "export streams the document as it comes; progress on stderr" \
  '[ $rc = 0 ] && cmp -s $out "$tmp/export-now.json" && has "received" $err && ! has "received" $out'
STDIN=<(cat "$tmp/export.json") CONFIGFSCTL_PROGRESS=1 run import -
check "import from a pipe (sent as it is read, chunked); progress on stderr" \
  '[ $rc = 0 ] && has "no changes" && has "sent" $err'
run import --replace --dry-run "$tmp/export.json"
check "import --replace plans the removal of what the document lacks" \
  '[ $rc = 0 ] && has "rmdir /02-simple-children/extra"'
run import --replace --if-match 1 "$tmp/export.json"
check "import --if-match stale: ESTALE (9)" '[ $rc = 9 ] && "$CTL" ls /02-simple-children | grep -qx extra'
run --json import --replace "$tmp/export.json"
check "import --replace removes it; --json the result" \
  '[ $rc = 0 ] && has "\"changed\":true" && ! "$CTL" ls /02-simple-children | grep -qx extra'

# ---- history ---------------------------------------------------------------
run history --limit 2
check "history --limit 2: two lines, newest first" '[ $rc = 0 ] && [ $(wc -l <$out) = 2 ] && head -1 $out | grep -q "anonymous rmdir /02-simple-children/extra"'
run history /02-simple-children/child1/storeme
check "history PATH: the stores with old values" '[ $rc = 0 ] && has "store /02-simple-children/child1/storeme = 44 (was 43)"'
run --json history --limit 1
check "history --json: the page" '[ $rc = 0 ] && has "\"entries\":[" && has "\"next_before\""'
run history --before 2
check "history --before" '[ $rc = 0 ] && [ $(wc -l <$out) = 1 ] && has "mkdir /02-simple-children/child1"'

# ---- tree ------------------------------------------------------------------
"$CTL" mkdir -p /02-simple-children/t1
run tree /02-simple-children/t1
check "tree draws a subtree with values" \
  '[ $rc = 0 ] && [ "$(cat $out)" = "$(printf "/02-simple-children/t1\n\`-- storeme = 0")" ]'
run --json tree /
check "tree --json: the nested node" '[ $rc = 0 ] && has "\"kind\":\"root\"" && has "\"storeme\""'
run ls -R /04-committable-children
check "ls -R lists each folder under a header" \
  '[ $rc = 0 ] && has "/04-committable-children/pending:" && has "/04-committable-children/live:"'

# ---- watch -----------------------------------------------------------------
rev=$("$CTL" health | sed 's/.*revision //')
"$CTL" watch --since "$rev" /02-simple-children/t1 >"$tmp/watch" 2>"$tmp/watch.err" &
wpid=$!
pids+=("$wpid")
"$CTL" write /02-simple-children/t1/storeme 5
"$CTL" write /02-simple-children/child1/storeme 6 # not under the path
wait_for "$tmp/watch" "store /02-simple-children/t1/storeme = 5"
got=$?
kill -INT $wpid
wrc=0
wait $wpid || wrc=$?
rc=$wrc
cp "$tmp/watch" "$out"
cp "$tmp/watch.err" "$err"
check "watch prints the event as it comes, ends on SIGINT with 0" \
  '[ $got = 0 ] && [ $wrc = 0 ] && [ "$(cat $out)" = "$((rev + 1)) store /02-simple-children/t1/storeme = 5" ]'
run --json watch --since 0 --count 2
check "watch --since 0 --count 2 --json: two event lines, then exit 0" \
  '[ $rc = 0 ] && [ $(wc -l <$out) = 2 ] && head -1 $out | grep -q "^{\"revision\":1,"'

# ---- a group over the server's cap of 10000 children per answer ------------
# $1: mkdir or rmdir of /03-group-children/wide/w00000..w10999, 1000 a batch
wide() {
  for b in $(seq 0 10); do
    { printf '['
      seq -f "{\"op\":\"$1\",\"path\":\"/03-group-children/wide/w%05.0f\"}" \
        $((b * 1000)) $((b * 1000 + 999)) | paste -sd,
      printf ']'; } >"$tmp/wide.json"
    "$CTL" batch "$tmp/wide.json" >/dev/null || return 1
  done
}
"$CTL" mkdir /03-group-children/wide && wide mkdir
run ls /03-group-children/wide
check "ls of 11,000 children reads on past the server's first page" \
  '[ $rc = 0 ] && [ "$(grep -cx "w[0-9]*" $out)" = 11000 ] && [ "$(grep -x "w[0-9]*" $out | sort -u | wc -l)" = 11000 ]'
run --json ls /03-group-children/wide
check "ls --json of 11,000 children: one whole node, no cursor left" \
  '[ $rc = 0 ] && [ "$(grep -o "\"name\":\"w[0-9]*\"" $out | wc -l)" = 11000 ] && ! has next_after'
run ls -R /03-group-children
check "ls -R reads every child of a deep listing the cap cut short" \
  '[ $rc = 0 ] && [ "$(grep -cx "w[0-9]*" $out)" = 11000 ] && [ "$(grep -c "^/03-group-children/wide/w" $out)" = 11000 ]'
wide rmdir && "$CTL" rmdir /03-group-children/wide

# ---- the server: --server, unreachable -------------------------------------
run --server "http://127.0.0.1:$port/" ls /cli-raw
check "--server (trailing / allowed)" '[ $rc = 0 ] && grep -qx r1 $out'

# ---- a watch whose server goes away; health after a partial replay ---------
rev=$("$CTL" health | sed 's/.*revision //')
# --timeout 2: it tries to resume for 2 s (test-cli-endpoints.sh: resumed)
"$CTL" --timeout 2 watch --since $((rev - 1)) >"$tmp/watch" 2>"$tmp/watch.err" &
wpid=$!
pids+=("$wpid")
wait_for "$tmp/watch" "$rev "
got=$?
kill "${pids[0]}" && wait "${pids[0]}" 2>/dev/null
for _ in $(seq 1 300); do # up to 30 s for the watch to notice
  kill -0 $wpid 2>/dev/null || break
  sleep 0.1
done
kill $wpid 2>/dev/null
wrc=0
wait $wpid || wrc=$?
rc=$wrc
cp "$tmp/watch" "$out"
cp "$tmp/watch.err" "$err"
check "watch gives up when the server stays away: unreachable (10), says where to resume" \
  '[ $got = 0 ] && [ $wrc = 10 ] && has "resume with --since $rev" $err'
start main --no-module # the stored /cli-raw items have no subsystem now
export CONFIGFSCTL_SERVER=http://127.0.0.1:$port
run health
check "health of a server with replay problems: not ready (9), the problems listed" \
  '[ $rc = 9 ] && has "alive, not ready" && has "problem: subsystem /cli-raw" && has "503 Not Ready" $err'
run --json health
check "health --json: both answers, exit 9" '[ $rc = 9 ] && has "\"problems\":["'

# ---- tokens ----------------------------------------------------------------
for role in reader writer admin; do
  echo "$role-token-$RANDOM$RANDOM" >"$tmp/$role.token"
  "$configfsd" hash-token "$role" "$role" <"$tmp/$role.token" >>"$tmp/tokens"
done
# and TLS, with a certificate made here (as test-http-tls.c makes its own)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -days 1 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$tmp/tls.key" -out "$tmp/tls.crt" >/dev/null 2>&1 ||
  { echo "Bail out! openssl failed (scripts/deps.sh installs it)"; exit 1; }
start tokens --tokens "$tmp/tokens" --tls-cert "$tmp/tls.crt" \
  --tls-key "$tmp/tls.key"
tserver=https://127.0.0.1:$port
run --server "$tserver" health
check "https with a certificate nobody vouches for: unreachable (10)" \
  '[ $rc = 10 ] && has "cannot reach" $err'
run --server "$tserver" --cacert "$tmp/tls.crt" health
check "--cacert: https verified against that certificate" '[ $rc = 0 ]'
export CONFIGFSCTL_CACERT=$tmp/tls.crt
run --server "$tserver" ls
check "without a token: 401 is EACCES (6)" '[ $rc = 6 ] && has "401" $err'
run --server "$tserver" --token wrong ls
check "a wrong token: EACCES (6)" '[ $rc = 6 ]'
run --server "$tserver" --token "$(cat "$tmp/reader.token")" ls
check "--token: a reader lists" '[ $rc = 0 ] && grep -qx 02-simple-children $out'
run --server "$tserver" --token "$(cat "$tmp/reader.token")" mkdir /02-simple-children/r
check "a reader's mkdir: 403, EACCES (6)" '[ $rc = 6 ] && has 403 $err'
run --server "$tserver" --token-file "$tmp/writer.token" mkdir /02-simple-children/w
check "--token-file: a writer makes an item" '[ $rc = 0 ]'
CONFIGFSCTL_TOKEN_FILE=$tmp/writer.token run --server "$tserver" export
check "CONFIGFSCTL_TOKEN_FILE: a writer's export: 403 (6)" '[ $rc = 6 ]'
CONFIGFSCTL_TOKEN=$(cat "$tmp/admin.token") CONFIGFSCTL_SERVER=$tserver run export
check "CONFIGFSCTL_TOKEN and CONFIGFSCTL_SERVER: an admin exports" \
  '[ $rc = 0 ] && has "\"path\":\"/02-simple-children/w\""'
run --token a --token-file "$tmp/admin.token" ls
check "--token with --token-file is a usage error (2)" '[ $rc = 2 ]'
run --server "$tserver" --token-file "$tmp/nonexistent" ls
check "a missing token file: ENOENT (3)" '[ $rc = 3 ]'
run --server "$tserver" health
check "health needs no token" '[ $rc = 0 ]'

kill "${pids[-1]}" && wait "${pids[-1]}" 2>/dev/null
run --server "$tserver" ls
check "a server that is gone: unreachable (10)" '[ $rc = 10 ] && has "cannot reach" $err'

finish_checks
