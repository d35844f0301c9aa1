#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HTTP benchmark: configfsd against baselines measured in the same run
# (the machines are shared and noisy: read the ratios, not the figures).
#   GET of an attribute           vs a bare libmicrohttpd server (tiny body)
#   GET of an item, 10 attributes vs the same bare server
#   durable PUT of an attribute   vs one SQLite commit (synchronous=FULL)
#                                    per request
# Usage: run.sh CONFIGFSD BARE_SERVER [SECONDS] [CONNECTIONS]
set -euo pipefail
configfsd=$1
bare=$2
secs=${3:-10}
conns=${4:-64}
here=$(cd "$(dirname "$0")" && pwd)
command -v wrk >/dev/null || "$here/../../scripts/deps.sh" wrk
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
bare_get=$(rps "http://127.0.0.1:$bp/")

mkdir "$tmp/schemas"
cp "$here/bench10.json" "$tmp/schemas/"
cp_=$(free_port)
"$configfsd" --listen "127.0.0.1:$cp_" --db "$tmp/c.db" --no-samples \
  --schema-dir "$tmp/schemas" --threads 2 --log-level warning 2>"$tmp/log" & pids+=($!)
wait_port "$cp_"
api="http://127.0.0.1:$cp_/api/v1/config"
curl -sf -X POST -H 'Content-Type: application/json' -d '{"name":"i"}' "$api/bench" >/dev/null
attr_get=$(rps "$api/bench/i/a0")
item_get=$(rps "$api/bench/i")
put=$(rps "$api/bench/i/a1" -s "$here/put.lua")

sp=$(free_port)
"$bare" "$sp" 2 --sqlite "$tmp/b.db" 2>/dev/null & pids+=($!)
wait_port "$sp"
ceiling=$(rps "http://127.0.0.1:$sp/" -s "$here/put.lua")

python3 - "$bare_get" "$attr_get" "$item_get" "$put" "$ceiling" <<'PY'
import sys
bare, attr, item, put, ceil = map(float, sys.argv[1:])
print(f"bare libmicrohttpd GET          {bare:10.0f} req/s")
print(f"configfsd GET attribute         {attr:10.0f} req/s  {attr/bare:6.1%} of bare   (goal >= 60%)")
print(f"configfsd GET item (10 attrs)   {item:10.0f} req/s  {item/bare:6.1%} of bare   (goal >= 35%)")
print(f"one SQLite commit per PUT       {ceil:10.0f} req/s")
print(f"configfsd durable PUT           {put:10.0f} req/s  {put/ceil:6.1f}x the ceiling (goal >= 8x)")
PY
