#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the pinned Node packages of tools/node (the OpenAPI linter and the
# JSON-schema validator) with `npm ci`, if they are missing or the lock file
# changed since. Idempotent, and serialised with flock, since the style and
# integration suites may ask at the same time. Exits 77 (a skip, for meson
# test) when node or npm is not installed.
set -euo pipefail
dir=$(cd "$(dirname "$0")/../tools/node" && pwd)

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
echo "node-tools: npm ci in tools/node" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
echo "$want" >"$stamp"
