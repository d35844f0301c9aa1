#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Reads under a steady writer (docs/DESIGN.md "Committed reads"): what a
# committed read costs when writes run, configfsd beside etcd, in one run.
#   configfsd  GET of an attribute, no writer                  (baseline)
#   configfsd  GET of the attribute being written              (waits for
#                                                               its commit)
#   configfsd  GET of another item's attribute                 (waits for
#                                                               nothing)
#   etcd       linearizable range of a key while puts run
#   etcd       serializable range of a key while puts run
# The writer is wrk with WRITERS connections PUTting at full speed; the
# reader wrk with READERS connections, for SECONDS each. Each round
# measures every row; the report is the median over the rounds, and the
# ratio of each row's reads/s to the no-writer GET of the same round.
# With BEFORE=OTHER_CONFIGFSD, that binary's three rows are measured in the
# same rounds. Goals (issue 35): another item's GET under the writer at
# least 50 % of the no-writer GET, p99 <= 2 ms.
# Usage: [BEFORE=CONFIGFSD] reads-under-writes.sh CONFIGFSD [SECONDS]
#               [WRITERS] [READERS] [ROUNDS]
set -euo pipefail
configfsd=$1
secs=${2:-10}
writers=${3:-64}
readers=${4:-8}
rounds=${5:-3}
before=${BEFORE:-}
here=$(cd "$(dirname "$0")" && pwd)
command -v wrk >/dev/null || "$here/../../scripts/deps.sh" run wrk
command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null; }
command -v etcd >/dev/null || "$here/../../scripts/etcd-deps.sh"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_url() { for _ in $(seq 1 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; return 1; }
: >"$tmp/bad"
# NAME URL [wrk args] -> "p50_us p99_us reads/s"
latency() {
  local name=$1 url=$2; shift 2
  wrk -t1 -c"$readers" -d"${secs}s" --latency "$@" "$url" >"$tmp/$name.out"
  awk -v n="$name" '/Non-2xx|Socket errors/ {print n ": " $0}' "$tmp/$name.out" >>"$tmp/bad"
  awk '
    function us(v) {
      if (v ~ /us$/) return v + 0
      if (v ~ /ms$/) return v * 1000
      if (v ~ /m$/) return v * 60e6
      return v * 1e6
    }
    $1 == "50%" {p50 = us($2)} $1 == "99%" {p99 = us($2)}
    /Requests\/sec/ {r = $2}
    END {print p50, p99, r}' "$tmp/$name.out"
}
writer() { # NAME URL [wrk args]: in the background, pid in $w
  local name=$1 url=$2; shift 2
  wrk -t1 -c"$writers" -d"$((secs + 1))s" "$@" "$url" >"$tmp/$name.out" &
  w=$!
}

mkdir "$tmp/schemas"
cp "$here/bench10.json" "$tmp/schemas/"
declare -A api
start_configfsd() { # SIDE BINARY
  local p
  p=$(free_port)
  "$2" --listen "127.0.0.1:$p" --db "$tmp/$1.db" --no-samples \
    --schema-dir "$tmp/schemas" --threads 2 --log-level warning 2>"$tmp/$1.log" & pids+=($!)
  wait_url "http://127.0.0.1:$p/healthz"
  api[$1]="http://127.0.0.1:$p/api/v1/config"
  for item in i j; do
    curl -sf -X POST -H 'Content-Type: application/json' -d "{\"name\":\"$item\"}" \
      "${api[$1]}/bench" >/dev/null
  done
}
sides=new
start_configfsd new "$configfsd"
if [ -n "$before" ]; then
  sides="new old"
  start_configfsd old "$before"
fi

# etcd, one member, on its own data directory, the v3 JSON gateway
ep=$(free_port)
pp=$(free_port)
etcd --name b --data-dir "$tmp/etcd" \
  --listen-client-urls "http://127.0.0.1:$ep" --advertise-client-urls "http://127.0.0.1:$ep" \
  --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
  --initial-cluster "b=http://127.0.0.1:$pp" >"$tmp/etcd.log" 2>&1 & pids+=($!)
wait_url "http://127.0.0.1:$ep/health"
etcd_url="http://127.0.0.1:$ep"
key=$(printf 'bench/a1' | base64)
curl -sf -X POST -d "{\"key\":\"$key\",\"value\":\"$(printf 1 | base64)\"}" "$etcd_url/v3/kv/put" >/dev/null
vals=$(for k in $(seq 1 200); do printf '"%s",' "$(printf '%d' "$k" | base64)"; done)
cat >"$tmp/etcd-put.lua" <<EOF
local vals, reqs, i = {$vals}, {}, 0
init = function()
  for k, v in ipairs(vals) do
    reqs[k] = wrk.format("POST", "/v3/kv/put", {["Content-Type"] = "application/json"},
      '{"key":"$key","value":"' .. v .. '"}')
  end
end
request = function() i = i % #reqs + 1; return reqs[i] end
EOF
cat >"$tmp/etcd-range.lua" <<EOF
local serializable = os.getenv("SERIALIZABLE") == "1"
request = function()
  return wrk.format("POST", "/v3/kv/range", {["Content-Type"] = "application/json"},
    '{"key":"$key"' .. (serializable and ',"serializable":true' or '') .. '}')
end
EOF
: >"$tmp/rounds"
for round in $(seq 1 "$rounds"); do
  row=""
  for s in $sides; do
    a=${api[$s]}
    read -r p50 p99 r <<<"$(latency "${s}_alone" "$a/bench/i/a0")"
    row+=" ${s}_alone=$r ${s}_alone_p50=$p50 ${s}_alone_p99=$p99"
    writer "${s}_w1" "$a/bench/i/a1" -s "$here/put.lua"
    read -r p50 p99 r <<<"$(latency "${s}_same" "$a/bench/i/a1")"
    wait "$w"
    row+=" ${s}_same=$r ${s}_same_p50=$p50 ${s}_same_p99=$p99"
    writer "${s}_w2" "$a/bench/i/a1" -s "$here/put.lua"
    read -r p50 p99 r <<<"$(latency "${s}_other" "$a/bench/j/a0")"
    wait "$w"
    row+=" ${s}_other=$r ${s}_other_p50=$p50 ${s}_other_p99=$p99"
    row+=" ${s}_puts=$(awk '/Requests\/sec/ {print $2}' "$tmp/${s}_w2.out")"
  done
  writer etcd_w1 "$etcd_url/" -s "$tmp/etcd-put.lua"
  read -r p50 p99 r <<<"$(SERIALIZABLE=0 latency etcd_lin "$etcd_url/" -s "$tmp/etcd-range.lua")"
  wait "$w"
  row+=" etcd_lin=$r etcd_lin_p50=$p50 etcd_lin_p99=$p99"
  writer etcd_w2 "$etcd_url/" -s "$tmp/etcd-put.lua"
  read -r p50 p99 r <<<"$(SERIALIZABLE=1 latency etcd_ser "$etcd_url/" -s "$tmp/etcd-range.lua")"
  wait "$w"
  row+=" etcd_ser=$r etcd_ser_p50=$p50 etcd_ser_p99=$p99"
  row+=" etcd_puts=$(awk '/Requests\/sec/ {print $2}' "$tmp/etcd_w2.out")"
  echo "$row" >>"$tmp/rounds"
  echo "round $round:$row" >&2
done

python3 - "$tmp/rounds" "$tmp/bad" "$secs" "$writers" "$readers" "$before" <<'PY'
import statistics, sys
rows = [dict((k, float(v)) for k, v in (f.split("=") for f in l.split()))
        for l in open(sys.argv[1]) if l.strip()]
bad = [l.strip() for l in open(sys.argv[2]) if l.strip()]
secs, writers, readers, before = sys.argv[3:7]
med = lambda k: statistics.median(r[k] for r in rows)
ratio = lambda a, b: statistics.median(r[a] / r[b] for r in rows)
us = lambda v: "%.0f us" % v if v < 1000 else "%.2f ms" % (v / 1000)
print(f"reads under a steady writer: median of {len(rows)} rounds, {secs} s "
      f"each, writer {writers} connections, reader {readers}")
print(f"{'reader':<52} {'reads/s':>9} {'p50':>9} {'p99':>9} {'vs alone':>9}")
def line(name, k, base):
    print(f"{name:<52} {med(k):>9.0f} {us(med(k + '_p50')):>9} "
          f"{us(med(k + '_p99')):>9} {100 * ratio(k, base):>8.1f}%")
for s in (["new", "old"] if before else ["new"]):
    tag = "" if s == "new" else " (before)"
    line(f"configfsd{tag}, the same GET, no writer", f"{s}_alone", f"{s}_alone")
    line(f"configfsd{tag}, the attribute being written", f"{s}_same", f"{s}_alone")
    line(f"configfsd{tag}, another item's attribute", f"{s}_other", f"{s}_alone")
    print(f"  writer{tag}: {med(s + '_puts'):.0f} durable PUTs/s")
line("etcd, linearizable range while puts run", "etcd_lin", "new_alone")
line("etcd, serializable range while puts run", "etcd_ser", "new_alone")
print(f"  etcd writer: {med('etcd_puts'):.0f} puts/s")
other = ratio("new_other", "new_alone")
p99 = med("new_other_p99")
print(f"goal: another item's GET >= 50% of no writer ({100 * other:.1f}%), "
      f"p99 <= 2 ms ({us(p99)})")
for l in bad:
    print("  " + l)
if any("Non-2xx" in l and not l.startswith("etcd") for l in bad):
    print("FAILED: configfsd answers that were not 2xx (above)")
    sys.exit(1)
PY
