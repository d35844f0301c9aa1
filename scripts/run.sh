#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what is missing, build, and run configfsd from the source tree:
# ./configfsd.db, schemas/ and web/static/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh run
[ -d build ] || meson setup build >/dev/null
ninja -C build
# ninja builds the server with everything else (set -e stops on failure).
# The development defaults, from the source tree: the built-in ones follow
# the install prefix (docs/install.md). Options after these, and the
# CONFIGFSD_* variables, still win.
exec build/server/configfsd \
  --db "${CONFIGFSD_DB:-./configfsd.db}" \
  --schema-dir "${CONFIGFSD_SCHEMA_DIR:-schemas}" \
  --static-dir "${CONFIGFSD_STATIC_DIR:-web/static}" \
  "$@"
