#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the curl examples of README.md, as written, against a fresh configfsd
# (its own database, a port it picks on 127.0.0.1). Fails if any command
# fails (curl -f: any HTTP error) or the server does not start.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/configfsd.sh
source "$(dirname "$0")/../lib/configfsd.sh"
configfsd=$1
readme=$2
schemas=$3
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

configfsd_start "$configfsd" "$tmp/log" --db "$tmp/db" \
  --schema-dir "$schemas" --log-level warning || exit 1
pid=$configfsd_pid
port=$configfsd_port

sed -n '/<!-- readme-example:begin -->/,/<!-- readme-example:end -->/p' "$readme" |
  sed '/^<!--/d; /^```/d' |
  sed "s|127.0.0.1:8080|127.0.0.1:$port|" >"$tmp/examples.sh"
grep -q curl "$tmp/examples.sh" || { echo "no examples found"; exit 1; }
bash -euo pipefail "$tmp/examples.sh" >"$tmp/out"
# the cat above must have printed what the echo stored
grep -q '42$' "$tmp/out" || { echo "storeme did not read back 42"; cat "$tmp/out"; exit 1; }
echo "README examples: ok"
