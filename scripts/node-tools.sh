#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the pinned Node packages of a folder with `npm ci`, if they are
# missing or its lock file changed since: tools/node (the OpenAPI linter,
# the JSON-schema validator, the browser driver) by default, or the folder
# given (tests/clients: the client generators and Prism). Idempotent, and
# serialised with flock, since several suites may ask at the same time.
# Exits 77 (a skip, for meson test) when node or npm is not installed.
#   node-tools.sh [DIR]
set -euo pipefail
dir=$(cd "${1:-$(dirname "$0")/../tools/node}" && pwd)

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node-tools: node or npm is not installed" >&2
  exit 77
fi
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
stamp=$dir/node_modules/.package-lock.sha256

exec 9>"$dir/.install.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "node-tools: npm ci in $dir" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
echo "$want" >"$stamp"
