#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lint api/openapi.yaml with Redocly CLI and Spectral (versions pinned in
# tools/node/package-lock.json): Redocly's recommended-strict rules with the
# project's settings in api/redocly.yaml, and Spectral's spectral:oas with
# api/spectral.yaml. Each relaxation is justified in those files, and none
# is keyed by the file's name: the spec is linted as a copy under another
# name, as a user who downloads it from /api/v1/openapi.yaml would. Any
# finding fails. Exits 77 (skipped) only when node is not installed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/node-tools.sh"
rc=$?
if [ $rc -ne 0 ]; then
  [ $rc -eq 77 ] && echo "lint-openapi: skipped, node is not installed"
  exit $rc
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/api/openapi.yaml" "$tmp/configfsd-api.yaml"
bin=$root/tools/node/node_modules/.bin
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_COLOR=1
status=0
(cd "$tmp" && "$bin/redocly" lint --config "$root/api/redocly.yaml" configfsd-api.yaml) || status=1
(cd "$tmp" && "$bin/spectral" lint --ruleset "$root/api/spectral.yaml" \
  --fail-severity=hint configfsd-api.yaml) || status=1
exit $status
