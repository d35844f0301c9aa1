#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HTTP benchmark: configfsd against baselines measured in the same run
# (the machines are shared and noisy: read the ratios, not the figures).
#   GET of an attribute           vs a bare libmicrohttpd server (tiny body)
#   GET of an item, 10 attributes vs the same bare server
#   durable PUT of an attribute   vs one SQLite commit (synchronous=FULL)
#                                    per request
# Usage: run.sh CONFIGFSD BARE_SERVER [SECONDS] [CONNECTIONS] [ROUNDS]
set -euo pipefail
configfsd=$1
bare=$2
secs=${3:-10}
conns=${4:-64}
rounds=${5:-5}
here=$(cd "$(dirname "$0")" && pwd)
command -v wrk >/dev/null || "$here/../../scripts/deps.sh" run wrk
command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.1; done; return 1; }
rps() { # URL [wrk args...] -> requests/s
  local url=$1; shift
  wrk -t2 -c"$conns" -d"${secs}s" "$@" "$url" | awk '/Requests\/sec/ {print $2}'
}

bp=$(free_port)
"$bare" "$bp" 2 2>/dev/null & pids+=($!)
wait_port "$bp"

mkdir "$tmp/schemas"
cp "$here/bench10.json" "$tmp/schemas/"
cp_=$(free_port)
"$configfsd" --listen "127.0.0.1:$cp_" --db "$tmp/c.db" --no-samples \
  --schema-dir "$tmp/schemas" --threads 2 --log-level warning 2>"$tmp/log" & pids+=($!)
wait_port "$cp_"
api="http://127.0.0.1:$cp_/api/v1/config"
curl -sf -X POST -H 'Content-Type: application/json' -d '{"name":"i"}' "$api/bench" >/dev/null

sp=$(free_port)
"$bare" "$sp" 2 --sqlite "$tmp/b.db" 2>/dev/null & pids+=($!)
wait_port "$sp"

# Rounds, each measuring every figure and its baseline back to back, so
# that a burst of load from elsewhere hits a ratio's both sides alike; the
# report is the median ratio over the rounds.
: >"$tmp/rounds"
for round in $(seq 1 "$rounds"); do
  bare_get=$(rps "http://127.0.0.1:$bp/")
  attr_get=$(rps "$api/bench/i/a0")
  item_get=$(rps "$api/bench/i")
  ceiling=$(rps "http://127.0.0.1:$sp/" -s "$here/put.lua")
  put=$(rps "$api/bench/i/a1" -s "$here/put.lua")
  echo "$bare_get $attr_get $item_get $put $ceiling" >>"$tmp/rounds"
done
store=$(curl -sf "http://127.0.0.1:$cp_/metrics" |
  awk '/^configfsd_store_(transactions|commits)_total/ {print $2}' | tr '\n' ' ')

python3 - "$tmp/rounds" $store <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
txns, commits = (float(sys.argv[2]), float(sys.argv[3])) if len(sys.argv) > 3 else (0, 0)
print("round  bare GET  attr GET  item GET       PUT  1-commit")
for i, r in enumerate(rows, 1):
    print(f"{i:5d} " + " ".join(f"{v:9.0f}" for v in r))
med = lambda f: statistics.median(f(r) for r in rows)
bare, attr, item, put, ceil = (med(lambda r, i=i: r[i]) for i in range(5))
a = med(lambda r: r[1] / r[0])
it = med(lambda r: r[2] / r[0])
p = med(lambda r: r[3] / r[4])
print(f"median of {len(rows)} rounds (each ratio taken within its round):")
print(f"configfsd GET attribute        {a:6.1%} of bare            (goal >= 60%)")
print(f"configfsd GET item (10 attrs)  {it:6.1%} of bare            (goal >= 35%)")
print(f"configfsd durable PUT          {p:6.1f}x one commit per PUT  (goal >= 8x)")
if commits:
    print(f"group commit: {txns / commits:.1f} changes per database commit")
PY
