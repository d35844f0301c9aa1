#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The clients suite: generate six clients from api/openapi.yaml with pinned
# npm generators (openapi-typescript + openapi-fetch, @hey-api/openapi-ts,
# orval's fetch and axios clients, openapi-typescript-codegen, also with
# --useUnionTypes, and swagger-typescript-api), type-check and compile them with the test flows (TypeScript 5, strict),
# and run the flows under Node's test runner (TAP on stdout) against live
# configfsd servers, directly and through Prism's validating proxy. Nothing
# generated is edited: a change of the spec a client cannot use fails here.
#   run.sh CONFIGFSD BLOB_MODULE SOURCE_ROOT WORK_DIR
# Exit 77 (skip) only when node is not installed.
set -euo pipefail
configfsd=$1 module=$2 src=$3 work=$4
here=$src/tests/clients
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "1..0 # SKIP node or npm is not installed"
  exit 77
fi
"$src/scripts/node-tools.sh" "$here" >&2
bin=$here/node_modules/.bin

rm -rf "$work"
mkdir -p "$work/gen"
cp -r "$here/src" "$here/tsconfig.json" "$work/"
ln -s "$here/node_modules" "$work/node_modules"
spec=$src/api/openapi.yaml
"$bin/openapi-typescript" "$spec" -o "$work/gen/openapi-typescript/schema.d.ts" >&2
CFS_SPEC=$spec CFS_HEY_OUT=$work/gen/hey-api \
  "$bin/openapi-ts" -f "$here/openapi-ts.config.mjs" -s >&2
CFS_SPEC=$spec CFS_ORVAL_OUT=$work/gen/orval CFS_ORVAL_MUTATOR=$work/src/orval-fetch.ts \
  "$bin/orval" --config "$here/orval.config.cjs" >&2
"$bin/openapi" --input "$spec" --output "$work/gen/openapi-typescript-codegen" --client fetch >&2
# the union-types variant is only type-checked: its names must not collide
"$bin/openapi" --input "$spec" --output "$work/gen/openapi-typescript-codegen-unions" \
  --client fetch --useUnionTypes >&2
"$bin/swagger-typescript-api" generate --path "$spec" \
  --output "$work/gen/swagger-typescript-api" --name api.ts >&2
(cd "$work" && "$bin/tsc" -p tsconfig.json) >&2

export CFS_CONFIGFSD=$configfsd CFS_BLOB_MODULE=$module CFS_SOURCE_ROOT=$src
export CFS_SPEC=$spec CFS_PRISM=$bin/prism
cd "$work"
exec node --test --test-reporter=tap --test-concurrency=1 out/src/spec.test.js out/src/clients.test.js out/src/contract.test.js
