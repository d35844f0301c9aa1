#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what is missing, build, and run configfsd on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build
if [ -x build/server/configfsd ]; then
  exec build/server/configfsd "$@"
fi
echo "run: the core library and its samples are built (build/core);" \
     "the configfsd server is not part of this tree yet." >&2
