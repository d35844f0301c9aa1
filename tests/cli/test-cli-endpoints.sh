#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# configfsctl with more than one server and across restarts, against live
# configfsd servers (127.0.0.1, ports they pick, fresh databases): the bash
# completion script it prints (commands and options from its table, config
# paths from the server), --server and CONFIGFSCTL_SERVER as a list that
# fails over on an unreachable server and on a 503, `cluster` and `health`
# over every server, and `watch` resuming after its server was killed and
# restarted, without missing or repeating a change. One TAP line per check.
#   test-cli-endpoints.sh CONFIGFSD CONFIGFSCTL SCHEMA_DIR
# The checks are single-quoted on purpose: check() evaluates them later.
# shellcheck disable=SC2016,SC2034
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/configfsd.sh
source "$(dirname "$0")/../lib/configfsd.sh"
configfsd=$1
CTL=$2
schemas=$3
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
unset CONFIGFSCTL_SERVER CONFIGFSCTL_TOKEN CONFIGFSCTL_TOKEN_FILE \
  CONFIGFSCTL_CACERT

# shellcheck source=SCRIPTDIR/../lib/cli-checks.sh
source "$(dirname "$0")/../lib/cli-checks.sh"
run() {
  rc=0
  "$CTL" "$@" >"$out" 2>"$err" </dev/null || rc=$?
}
# start NAME [ARGS...]: a configfsd with database NAME.db; sets $port, $pid.
start() {
  local name=$1
  shift
  if ! configfsd_start "$configfsd" "$tmp/$name.log" --db "$tmp/$name.db" \
    --schema-dir "$schemas" --log-level warning "$@"; then
    echo "Bail out! configfsd did not start"
    exit 1
  fi
  pids+=("$configfsd_pid")
  port=$configfsd_port
  pid=$configfsd_pid
}
# a port where nothing listens: bound, then closed
dead_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dead=http://127.0.0.1:$dead_port

start a
a_port=$port a_pid=$pid
A=http://127.0.0.1:$a_port
start b
B=http://127.0.0.1:$port

# ---- completion ---------------------------------------------------------------
run completion bash
cp "$out" "$tmp/complete.bash"
check "completion bash: a script bash reads, registered for configfsctl" \
  '[ $rc = 0 ] && bash -n $tmp/complete.bash && has "complete -F _configfsctl configfsctl"'
# complete WORD...: what the script offers for the last word, the line
# (COMP_LINE, COMP_POINT) as the words typed, the cursor after the last
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    COMP_LINE=; for w in "${@:1:$#-1}"; do printf -v q "%q " "$w"; COMP_LINE+=$q; done
    COMP_LINE+=${!#}; COMP_POINT=${#COMP_LINE}
    _configfsctl; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$tmp/complete.bash" "$CTL" "$@" >"$out" 2>"$err"
  rc=$?
}
complete_words ""
check "completion: every command of the table, no hidden one" \
  'for c in ls tree cat write mkdir rmdir ln rm mv batch export import history watch health cluster completion; do grep -qx "$c" $out || exit 1; done; ! grep -q "^__" $out'
complete_words mkdir -
check "completion: the options of the command (mkdir: -p, --attr, --if-match)" \
  'grep -qx -- -p $out && grep -qx -- --attr $out && grep -qx -- --if-match $out && ! grep -qx -- --since $out'
"$CTL" --server "$A" mkdir -p /usb_gadget/g1/functions/ncm.usb0 || echo "Bail out! mkdir -p"
complete_words --server "$A" ls /usb_gadget/g1/f
check "completion: config paths from the server given on the line, folders with /" \
  'grep -qx "/usb_gadget/g1/functions/" $out && [ "$(wc -l <$out)" = 1 ]'
complete_words --server "$A" cat usb_gadget/g1/id
check "completion: attributes, relative as typed" \
  'grep -qx "usb_gadget/g1/idVendor " $out && grep -qx "usb_gadget/g1/idProduct " $out'
complete_words --server "$A" --cwd /usb_gadget/g1 ls f
check "completion with --cwd on the line: paths relative to that working directory" \
  '[ "$(cat $out)" = functions/ ]'
run completion zsh
check "completion zsh: a #compdef function asking __complete" \
  '[ $rc = 0 ] && head -1 $out | grep -qx "#compdef configfsctl" && has "__complete"'
run completion fish
check "completion of another shell: usage (2)" '[ $rc = 2 ]'

# ---- --server as a list -----------------------------------------------------------
run --server "$dead,$A" ls /usb_gadget
check "--server DEAD,A: fails over to A and answers" \
  '[ $rc = 0 ] && grep -qx g1 $out && has "trying $A" $err'
rc=0
CONFIGFSCTL_SERVER="$dead,$A" "$CTL" mkdir /02-simple-children/c1 >"$out" 2>"$err" || rc=$?
check "CONFIGFSCTL_SERVER as a list: a write whose connection was never made goes to the next" \
  '[ $rc = 0 ] && "$CTL" --server "$A" cat /02-simple-children/c1/storeme >/dev/null'
run --server "$dead,http://127.0.0.1:$dead_port" ls /
check "every server unreachable: 10" '[ $rc = 10 ]'
run --server "," ls /
check "--server with no server in it: usage (2)" '[ $rc = 2 ]'

# a server that answers 503 to everything (not ready, no writer)
cat >"$tmp/busy.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        body = b'{"type":"about:blank","title":"Service Unavailable","status":503,"errno":"EAGAIN"}'
        self.send_response(503)
        self.send_header("Content-Type", "application/problem+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = do_PUT = do_DELETE = answer
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_port, flush=True)
s.serve_forever()
EOF
python3 "$tmp/busy.py" >"$tmp/busy.port" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$tmp/busy.port" ] && break; sleep 0.1; done
busy=http://127.0.0.1:$(cat "$tmp/busy.port")
run --server "$busy,$A" mkdir /02-simple-children/c2
check "a 503 fails over to the next server, which applies the write" \
  '[ $rc = 0 ] && has "answered 503; trying $A" $err && "$CTL" --server "$A" ls /02-simple-children | grep -qx c2'
run --server "$busy" ls /
check "one server answering 503: retry later (9)" '[ $rc = 9 ]'

# ---- cluster and health over every server ---------------------------------------
run --server "$A,$B" cluster
check "cluster: one line per server, both ready" \
  '[ $rc = 0 ] && [ "$(grep -c " ready " $out)" = 2 ] && has "$A" && has "$B"'
run --server "$A,$dead" cluster
check "cluster with a server down: it is unreachable, exit 10" \
  '[ $rc = 10 ] && grep "$dead" $out | grep -q unreachable && grep "$A" $out | grep -q " ready "'
run --json --server "$A,$B" cluster
check "cluster --json: each server's GET /api/v1" \
  '[ $rc = 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [e[\"id\"] for e in d]==[1,2] and all(e[\"info\"][\"name\"]==\"configfsd\" for e in d)" $out'
run --server "$A,$B" health
check "health over every server: each one's line" \
  '[ $rc = 0 ] && grep -q "^$A: alive, ready" $out && grep -q "^$B: alive, ready" $out'
run --server "$A,$dead" health
check "health with one server down: 10, the others still asked" \
  '[ $rc = 10 ] && grep -q "^$A: alive, ready" $out && grep -q "^$dead: unreachable" $out'

# ---- watch across a restart -------------------------------------------------------
# from the revision of now, read before the watch starts: a watch that
# connects after the mkdir below must still deliver it
since=$(curl -sf "$A/readyz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')
"$CTL" --server "$A" watch --since "$since" /02-simple-children >"$tmp/watch" 2>"$tmp/watch.err" &
wpid=$!
pids+=("$wpid")
"$CTL" --server "$A" mkdir /02-simple-children/before >/dev/null
wait_for "$tmp/watch" "/02-simple-children/before"
got_before=$?
kill -KILL "$a_pid"
wait "$a_pid" 2>/dev/null
wait_for "$tmp/watch.err" "resuming"
said=$?
# the same database and port; changes made before the watch is back
start a --listen "127.0.0.1:$a_port"
"$CTL" --server "$A" mkdir /02-simple-children/after1 >/dev/null
"$CTL" --server "$A" mkdir /02-simple-children/after2 >/dev/null
wait_for "$tmp/watch" "/02-simple-children/after2"
got_after=$?
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
cp "$tmp/watch" "$out"
cp "$tmp/watch.err" "$err"
check "watch resumes after its server was killed and restarted (Last-Event-ID)" \
  '[ $got_before = 0 ] && [ $said = 0 ] && [ $got_after = 0 ]'
check "watch after the restart: every change once, in order, none lost" \
  '[ "$(grep -o "mkdir /02-simple-children/[a-z0-9]*" $out | tr "\n" " ")" = "mkdir /02-simple-children/before mkdir /02-simple-children/after1 mkdir /02-simple-children/after2 " ]'

finish_checks
