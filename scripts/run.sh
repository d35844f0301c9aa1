#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what is missing, build, and run configfsd on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build
# ninja builds the server with everything else (set -e stops on failure).
exec build/server/configfsd "$@"
