#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run scripts/validate-responses.mjs (same arguments) once its node packages
# are installed; exit 77 (skipped) only when node is not installed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/node-tools.sh"
rc=$?
if [ $rc -ne 0 ]; then
  [ $rc -eq 77 ] && echo "1..0 # SKIP node is not installed"
  exit $rc
fi
exec node "$root/scripts/validate-responses.mjs" "$@"
