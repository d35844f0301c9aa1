#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lint api/openapi.yaml with Redocly CLI (version pinned in
# tools/node/package-lock.json), its recommended-strict rules and the
# project's settings in api/redocly.yaml; findings that are the contract are
# listed, with reasons, in api/.redocly.lint-ignore.yaml. Any other finding
# fails. Exits 77 (skipped) only when node is not installed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/node-tools.sh"
rc=$?
if [ $rc -ne 0 ]; then
  [ $rc -eq 77 ] && echo "lint-openapi: skipped, node is not installed"
  exit $rc
fi
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_COLOR=1
exec "$root/tools/node/node_modules/.bin/redocly" lint \
  --config "$root/api/redocly.yaml" "$root/api/openapi.yaml"
