#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install Debian's Chromium, the browser of the e2e suite (tests/e2e), if it
# is missing. Idempotent and serialised with flock (build-ci and build-asan
# may ask at the same time). playwright-core drives this browser; it never
# downloads one of its own. Fails if the package cannot be installed.
set -euo pipefail
if [ -x /usr/bin/chromium ] && dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q 'install ok installed'; then
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
exec 9>"${TMPDIR:-/tmp}/configfsd-browser-deps.lock"
flock 9
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
echo "browser-deps: installing chromium" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
