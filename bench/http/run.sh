#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HTTP benchmark: configfsd against baselines measured in the same run
# (the machines are shared and noisy: read the ratios, not the figures).
#   GET of an attribute           vs a bare libmicrohttpd server (tiny body)
#   GET of an item, 10 attributes vs the same bare server
#   durable PUT of an attribute   vs the bare server with SQLite group
#                                    commit (synchronous=FULL), and vs one
#                                    SQLite commit per request
#   GET of a hot attribute        latency p50/p99 (READERS connections)
#                                    while PUTs of that same attribute run
#                                    at full speed, vs the same GETs alone
# Each round measures every figure and its baseline back to back; the
# report is one table of the medians over the rounds, each ratio taken
# within its round. Fails if any answer was not a 2xx; socket errors
# (wrk's timeouts, 2 s) are printed.
# Usage: run.sh CONFIGFSD BARE_SERVER [SECONDS] [CONNECTIONS] [ROUNDS]
#               [READERS]
set -euo pipefail
configfsd=$1
bare=$2
secs=${3:-10}
conns=${4:-64}
rounds=${5:-5}
readers=${6:-8}
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
# wrk's output for a figure is kept in $tmp/NAME.out; its lines about
# answers that were not 2xx (or 3xx) and socket errors go to $tmp/bad.
: >"$tmp/bad"
checked() { # NAME: the figure's output, its failed answers noted
  awk -v n="$1" '/Non-2xx|Socket errors/ {print n ": " $0}' "$tmp/$1.out" >>"$tmp/bad"
  cat "$tmp/$1.out"
}
rps() { # NAME URL [wrk args...] -> requests/s
  local name=$1 url=$2; shift 2
  wrk -t2 -c"$conns" -d"${secs}s" "$@" "$url" >"$tmp/$name.out"
  checked "$name" | awk '/Requests\/sec/ {print $2}'
}
latency() { # NAME URL -> "p50 p99 requests/s", latencies in microseconds
  wrk -t1 -c"$readers" -d"${secs}s" --latency "$2" >"$tmp/$1.out"
  checked "$1" | awk '
    function us(v) {
      if (v ~ /us$/) return v + 0
      if (v ~ /ms$/) return v * 1000
      if (v ~ /m$/) return v * 60e6
      return v * 1e6 # seconds
    }
    $1 == "50%" {p50 = us($2)} $1 == "99%" {p99 = us($2)}
    /Requests\/sec/ {r = $2}
    END {print p50, p99, r}'
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
gp=$(free_port)
"$bare" "$gp" 2 --sqlite "$tmp/g.db" --group 2>/dev/null & pids+=($!)
wait_port "$gp"

: >"$tmp/rounds"
for round in $(seq 1 "$rounds"); do
  bare_get=$(rps bare_get "http://127.0.0.1:$bp/")
  attr_get=$(rps attr_get "$api/bench/i/a0")
  item_get=$(rps item_get "$api/bench/i")
  ceiling=$(rps one_commit "http://127.0.0.1:$sp/" -s "$here/put.lua")
  group=$(rps group_commit "http://127.0.0.1:$gp/" -s "$here/put.lua")
  put=$(rps put "$api/bench/i/a1" -s "$here/put.lua")
  # the hot attribute: a1, alone, then while it is written at full speed
  hot=$(latency hot "$api/bench/i/a1")
  wrk -t1 -c"$conns" -d"${secs}s" -s "$here/put.lua" "$api/bench/i/a1" \
    >"$tmp/hot_put.out" &
  w=$!
  hot_w=$(latency hot_under_put "$api/bench/i/a1")
  wait "$w"
  hot_put=$(checked hot_put | awk '/Requests\/sec/ {print $2}')
  echo "$bare_get $attr_get $item_get $ceiling $group $put $hot $hot_w $hot_put" >>"$tmp/rounds"
  echo "round $round: $(tail -1 "$tmp/rounds")" >&2
done
store=$(curl -sf "http://127.0.0.1:$cp_/metrics" |
  awk '/^configfsd_store_(transactions|commits)_total/ {print $2}' | tr '\n' ' ')

python3 - "$tmp/rounds" "$tmp/bad" "$secs" "$conns" "$readers" $store <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
bad = [l.strip() for l in open(sys.argv[2]) if l.strip()]
secs, conns, readers = sys.argv[3:6]
txns, commits = (float(sys.argv[6]), float(sys.argv[7])) if len(sys.argv) > 7 else (0, 0)
(BARE, ATTR, ITEM, ONE, GROUP, PUT, HP50, HP99, HRPS, WP50, WP99, WRPS,
 WPUT) = range(13)
med = lambda i: statistics.median(r[i] for r in rows)
ratio = lambda a, b: statistics.median(r[a] / r[b] for r in rows)
ms = lambda us: "%.0f us" % us if us < 1000 else "%.2f ms" % (us / 1000)
per_s = lambda i: "{:,.0f}/s".format(med(i)).replace(",", " ")
print(f"configfsd against baselines of the same run: median of {len(rows)} "
      f"rounds, {secs} s per figure, {conns} connections")
fmt = "{:<27} {:>10}  {:<37} {:>6}  {}"
print(fmt.format("figure", "configfsd", "baseline", "ratio", "goal"))
for name, a, base, r, goal in [
    ("GET attribute", per_s(ATTR), "bare server " + per_s(BARE),
     "%.1f%%" % (100 * ratio(ATTR, BARE)), ">= 60%"),
    ("GET item (10 attributes)", per_s(ITEM), "bare server " + per_s(BARE),
     "%.1f%%" % (100 * ratio(ITEM, BARE)), ">= 35%"),
    ("durable PUT", per_s(PUT), "bare + SQLite group commit " + per_s(GROUP),
     "%.1f%%" % (100 * ratio(PUT, GROUP)), ""),
    ("durable PUT", per_s(PUT), "one SQLite commit per PUT " + per_s(ONE),
     "%.1fx" % ratio(PUT, ONE), ">= 8x"),
    ("hot GET p50, PUTs on it", ms(med(WP50)), "no writes " + ms(med(HP50)),
     "%.2fx" % ratio(WP50, HP50), ""),
    ("hot GET p99, PUTs on it", ms(med(WP99)), "no writes " + ms(med(HP99)),
     "%.2fx" % ratio(WP99, HP99), ""),
]:
    print(fmt.format(name, a, base, r, goal).rstrip())
print(f"hot GET: {readers} connections, {per_s(HRPS)} alone, {per_s(WRPS)} "
      f"while {conns} connections PUT {per_s(WPUT)} to it")
if commits:
    print(f"group commit: {txns / commits:.1f} changes per database commit")
for l in bad:
    print("  " + l)
if any("Non-2xx" in l for l in bad):
    print("FAILED: answers that were not 2xx (above)")
    sys.exit(1)
PY
