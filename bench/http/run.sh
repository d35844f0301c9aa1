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
# With BEFORE=OTHER_CONFIGFSD in the environment (an older build), that
# binary is measured too, in the same rounds against the same baselines,
# and the table puts its ratios beside this one's: a change's cost, read
# on one noisy machine in one run.
# Usage: [BEFORE=CONFIGFSD] run.sh CONFIGFSD BARE_SERVER [SECONDS]
#               [CONNECTIONS] [ROUNDS] [READERS]
set -euo pipefail
configfsd=$1
bare=$2
secs=${3:-10}
conns=${4:-64}
rounds=${5:-5}
readers=${6:-8}
before=${BEFORE:-}
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
declare -A api port
start_configfsd() { # SIDE BINARY: a configfsd on its own database
  local p
  p=$(free_port)
  "$2" --listen "127.0.0.1:$p" --db "$tmp/$1.db" --no-samples \
    --schema-dir "$tmp/schemas" --threads 2 --log-level warning 2>"$tmp/$1.log" & pids+=($!)
  wait_port "$p"
  port[$1]=$p
  api[$1]="http://127.0.0.1:$p/api/v1/config"
  curl -sf -X POST -H 'Content-Type: application/json' -d '{"name":"i"}' \
    "${api[$1]}/bench" >/dev/null
}
sides=new
start_configfsd new "$configfsd"
if [ -n "$before" ]; then
  sides="new old"
  start_configfsd old "$before"
fi

sp=$(free_port)
"$bare" "$sp" 2 --sqlite "$tmp/b.db" 2>/dev/null & pids+=($!)
wait_port "$sp"
gp=$(free_port)
"$bare" "$gp" 2 --sqlite "$tmp/g.db" --group 2>/dev/null & pids+=($!)
wait_port "$gp"

# One line per round of NAME=VALUE (requests/s; latencies in us).
: >"$tmp/rounds"
for round in $(seq 1 "$rounds"); do
  row="bare=$(rps bare_get "http://127.0.0.1:$bp/")"
  for s in $sides; do
    a=${api[$s]}
    row+=" ${s}_attr=$(rps "${s}_attr" "$a/bench/i/a0")"
    row+=" ${s}_item=$(rps "${s}_item" "$a/bench/i")"
  done
  row+=" one=$(rps one_commit "http://127.0.0.1:$sp/" -s "$here/put.lua")"
  row+=" group=$(rps group_commit "http://127.0.0.1:$gp/" -s "$here/put.lua")"
  for s in $sides; do
    a=${api[$s]}
    row+=" ${s}_put=$(rps "${s}_put" "$a/bench/i/a1" -s "$here/put.lua")"
    # the hot attribute: a1, alone, then while it is written at full speed
    read -r p50 p99 r <<<"$(latency "${s}_hot" "$a/bench/i/a1")"
    row+=" ${s}_hot_p50=$p50 ${s}_hot_p99=$p99 ${s}_hot=$r"
    wrk -t1 -c"$conns" -d"${secs}s" -s "$here/put.lua" "$a/bench/i/a1" \
      >"$tmp/${s}_hot_put.out" &
    w=$!
    read -r p50 p99 r <<<"$(latency "${s}_hot_w" "$a/bench/i/a1")"
    wait "$w"
    row+=" ${s}_hotw_p50=$p50 ${s}_hotw_p99=$p99 ${s}_hotw=$r"
    row+=" ${s}_hotw_put=$(checked "${s}_hot_put" | awk '/Requests\/sec/ {print $2}')"
  done
  echo "$row" >>"$tmp/rounds"
  echo "round $round: $row" >&2
done
store=$(curl -sf "http://127.0.0.1:${port[new]}/metrics" |
  awk '/^configfsd_store_(transactions|commits)_total/ {print $2}' | tr '\n' ' ')

python3 - "$tmp/rounds" "$tmp/bad" "$secs" "$conns" "$readers" "$before" $store <<'PY'
import statistics, sys
rows = [dict((k, float(v)) for k, v in (f.split("=") for f in l.split()))
        for l in open(sys.argv[1]) if l.strip()]
bad = [l.strip() for l in open(sys.argv[2]) if l.strip()]
secs, conns, readers, before = sys.argv[3:7]
txns, commits = (float(sys.argv[7]), float(sys.argv[8])) if len(sys.argv) > 8 else (0, 0)
med = lambda k: statistics.median(r[k] for r in rows)
ratio = lambda a, b: statistics.median(r[a] / r[b] for r in rows)
us = lambda v: "%.0f us" % v if v < 1000 else "%.2f ms" % (v / 1000)
per_s = lambda k: "{:,.0f}/s".format(med(k)).replace(",", " ")
pct = lambda v: "%.1f%%" % (100 * v)
times = lambda v: "%.2fx" % v
sides = ["new", "old"] if before else ["new"]
print(f"configfsd against baselines of the same run: median of {len(rows)} "
      f"rounds, {secs} s per figure, {conns} connections")
if before:
    print(f"before: {before}, measured in the same rounds")
# (figure, configfsd's figure, baseline, ratio of a side, format, goal)
lines = [
    ("GET attribute", lambda s: per_s(s + "_attr"),
     "bare server " + per_s("bare"),
     lambda s: ratio(s + "_attr", "bare"), pct, ">= 60%"),
    ("GET item (10 attributes)", lambda s: per_s(s + "_item"),
     "bare server " + per_s("bare"),
     lambda s: ratio(s + "_item", "bare"), pct, ">= 35%"),
    ("durable PUT", lambda s: per_s(s + "_put"),
     "bare + SQLite group commit " + per_s("group"),
     lambda s: ratio(s + "_put", "group"), pct, ""),
    ("durable PUT", lambda s: per_s(s + "_put"),
     "one SQLite commit per PUT " + per_s("one"),
     lambda s: ratio(s + "_put", "one"), lambda v: "%.1fx" % v, ">= 8x"),
    ("hot GET p50, PUTs on it", lambda s: us(med(s + "_hotw_p50")),
     "no writes " + us(med("new_hot_p50")),
     lambda s: ratio(s + "_hotw_p50", s + "_hot_p50"), times, ""),
    ("hot GET p99, PUTs on it", lambda s: us(med(s + "_hotw_p99")),
     "no writes " + us(med("new_hot_p99")),
     lambda s: ratio(s + "_hotw_p99", s + "_hot_p99"), times, ""),
]
fmt = "{:<25} {:>10}  {:<37} {:>6}" + ("  {:>6}" if before else "{}") + "  {}"
print(fmt.format("figure", "configfsd", "baseline", "ratio",
                 "before" if before else "", "goal"))
for name, fig, base, r, f, goal in lines:
    print(fmt.format(name, fig("new"), base, f(r("new")),
                     f(r("old")) if before else "", goal).rstrip())
for s in sides:
    print(f"hot GET{' (before)' if s == 'old' else ''}: {readers} "
          f"connections, {per_s(s + '_hot')} alone, {per_s(s + '_hotw')} "
          f"while {conns} connections PUT {per_s(s + '_hotw_put')} to it"
          + (f"; under writes p50 {us(med(s + '_hotw_p50'))}, p99 "
             f"{us(med(s + '_hotw_p99'))}, alone {us(med(s + '_hot_p50'))}, "
             f"{us(med(s + '_hot_p99'))}" if s == "old" else ""))
if commits:
    print(f"group commit: {txns / commits:.1f} changes per database commit")
for l in bad:
    print("  " + l)
if any("Non-2xx" in l for l in bad):
    print("FAILED: answers that were not 2xx (above)")
    sys.exit(1)
PY
