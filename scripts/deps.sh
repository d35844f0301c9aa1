#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian 12 packages configfsd builds and tests with, if any is
# missing. Idempotent: a machine that has them all is not touched.
set -euo pipefail

# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (build-tsan,
# build-fuzz of scripts/test.sh)
pkgs=(
  gcc clang libclang-rt-14-dev meson ninja-build pkg-config python3
  libmicrohttpd-dev libjansson-dev libsqlite3-dev
  libcmocka-dev libcurl4-openssl-dev libedit-dev
  valgrind clang-format
  nettle-dev zlib1g-dev openssl curl
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# the browser of the e2e suite (tests/e2e), installed the same way
"$(dirname "$0")/browser-deps.sh"
# etcd, for the cluster suite (tests/cluster)
"$(dirname "$0")/etcd-deps.sh"
