#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian 12 packages configfsd needs, if any is missing.
# Idempotent: a machine that has them all is not touched.
#   scripts/deps.sh run        what building and running configfsd need
#                              (scripts/run.sh)
#   scripts/deps.sh test       that, plus what the test suites need: the
#                              sanitizer and fuzzer runtimes, cmocka,
#                              valgrind, the linters of the style suite,
#                              Chromium (e2e) and etcd (cluster)
#                              (scripts/test.sh; also the default)
#   scripts/deps.sh PKG...     those Debian packages too (bench/ asks for wrk)
set -euo pipefail
here=$(dirname "$0")
mode=test
case "${1:-}" in
  run|test) mode=$1; shift ;;
esac

# to build (meson, the compiler, the libraries of docs/DESIGN.md) and to
# embed the spec and the UI (python3); libfuse3-dev and fuse3 for
# configfsd --mount (fusermount3 for a user other than root); libedit-dev
# for configfsctl shell's line editing
pkgs=(
  gcc meson ninja-build pkg-config python3
  libmicrohttpd-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev
  nettle-dev zlib1g-dev libfuse3-dev fuse3 libedit-dev
)
if [ "$mode" = test ]; then
  # clang and libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes
  # (build-tsan, build-fuzz of scripts/test.sh); clang-format, clang-tidy
  # and cppcheck: the style suite; openssl and curl: the CLI and TLS tests;
  # tree: a tool the mount suite runs against the mount; zsh: the
  # completion test completes in it as in bash (cli.complete)
  pkgs+=(
    clang libclang-rt-14-dev libcmocka-dev valgrind
    clang-format clang-tidy cppcheck openssl curl tree zsh
  )
fi
pkgs+=("$@")
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
if [ "$mode" = test ]; then
  # the browser of the e2e suite (tests/e2e), installed the same way
  "$here/browser-deps.sh"
  # etcd, for the cluster suite (tests/cluster)
  "$here/etcd-deps.sh"
fi
