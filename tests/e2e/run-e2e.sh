#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The e2e suite's entry: make sure Chromium and playwright-core are there,
# then run the browser scenarios of SCRIPT (webui.mjs unless given; TAP on
# stdout) against the given configfsd. Exit 77 (skip) only when node is not
# installed; a browser that cannot be installed is a failure.
#   run-e2e.sh CONFIGFSD SOURCE_ROOT [SCRIPT]
set -euo pipefail
configfsd=$1
src=$2
script=${3:-webui.mjs}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "1..0 # SKIP node or npm is not installed"
  exit 77
fi
"$src/scripts/browser-deps.sh" >&2
"$src/scripts/node-tools.sh" >&2
exec node "$src/tests/e2e/$script" "$configfsd" "$src"
