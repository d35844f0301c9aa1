#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the configfsctl tour of README.md, as written, against a fresh
# configfsd (its own database, a port it picks on 127.0.0.1), with the
# built configfsctl first on PATH. Fails if any command fails or the
# server does not start.
#   readme-cli.sh CONFIGFSD CONFIGFSCTL README SCHEMA_DIR
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/configfsd.sh
source "$(dirname "$0")/../lib/configfsd.sh"
configfsd=$1
ctl=$2
readme=$3
schemas=$4
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

sed -n '/<!-- cli-example:begin -->/,/<!-- cli-example:end -->/p' "$readme" |
  sed '/^<!--/d; /^```/d' >"$tmp/tour.sh"
grep -q '^configfsctl ' "$tmp/tour.sh" || { echo "no tour found"; exit 1; }
mkdir "$tmp/bin" "$tmp/work"
ln -s "$(realpath "$ctl")" "$tmp/bin/configfsctl"
(
  cd "$tmp/work"
  PATH=$tmp/bin:$PATH CONFIGFSCTL_SERVER=http://127.0.0.1:$port \
    bash -euo pipefail -x "$tmp/tour.sh" >"$tmp/out" 2>"$tmp/trace"
) || { echo "the tour failed:"; tail -20 "$tmp/trace"; cat "$tmp/out"; exit 1; }
# the cat must have printed what the write stored, the dry run a plan
grep -qx 42 "$tmp/out" || { echo "storeme did not read back 42"; cat "$tmp/out"; exit 1; }
grep -q '^dry run: ' "$tmp/out" || { echo "no dry run"; cat "$tmp/out"; exit 1; }
echo "README configfsctl tour: ok"
