#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite: installs what is missing, then builds and tests
#   build-ci        plain build, -Werror: every suite (install, container,
#                   clients, soak and cluster included: meson install into a
#                   DESTDIR, the Docker image built and run, the generated
#                   clients, soak for its short default, 20 s, 3 etcd members
#                   and 3 nodes), plus valgrind on unit
#   build-asan      ASan + UBSan: every suite but install, container, clients
#                   (packaging and the contract, not memory: once is enough),
#                   style (it reads the sources: once is enough) and soak
#                   (the sanitizers' memory makes RSS grow by design)
#   build-tsan      clang ThreadSanitizer: the unit suite (stress included),
#                   the integration suite (the server's threads) and the
#                   cluster suite (the etcd follower, watch and group
#                   commit threads of 3 nodes; about 80 s) and the mount
#                   suite (FUSE's threads beside the server's)
#   build-fuzz      clang libFuzzer + ASan + UBSan: the fuzz suite, each
#                   target for CFS_FUZZ_SECONDS (default 30; 13 targets, two
#                   at a time: about 3.5 minutes)
# and ends with one line "N passed, N failed" counted over every test case.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test || exit 1

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
status=0

run_build() { # name, meson test args..., -- setup args...
  local dir=$1; shift
  local test_args=() setup_args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do test_args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  setup_args=("$@")
  echo "== $dir: meson setup ${setup_args[*]}"
  if [ ! -d "$dir" ]; then
    meson setup "$dir" "${setup_args[@]}" >"$results/$dir.setup.log" 2>&1 \
      || { cat "$results/$dir.setup.log"; echo "$dir: setup failed"; status=1; return; }
  fi
  if ! ninja -C "$dir" >"$results/$dir.build.log" 2>&1; then
    tail -50 "$results/$dir.build.log"; echo "$dir: build failed"; status=1
    echo "build:$dir" >>"$results/failed-builds"; return
  fi
  echo "== $dir: meson test ${test_args[*]}"
  meson test -C "$dir" --print-errorlogs "${test_args[@]}" || status=1
  cp "$dir/meson-logs/testlog${TESTLOG_SUFFIX:-}.json" "$results/$dir.${#test_args[@]}.$RANDOM.json" 2>/dev/null
}

export CMOCKA_MESSAGE_OUTPUT=TAP
run_build build-ci --no-suite bench -- -Dwerror=true
TESTLOG_SUFFIX=-valgrind run_build build-ci --suite unit --setup valgrind --no-suite stress -- -Dwerror=true
run_build build-asan --no-suite bench --no-suite install --no-suite container --no-suite clients --no-suite soak --no-suite style -- -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
CC=clang run_build build-tsan --suite unit --suite integration --suite cluster --suite mount -- -Dwerror=true -Db_sanitize=thread -Db_lundef=false
CC=clang run_build build-fuzz --suite fuzz -- -Dwerror=true -Dfuzz=true -Dtests=disabled -Db_sanitize=address,undefined -Db_lundef=false
# coverage (edges) and corpus size per target
grep -h '^fuzz ' build-fuzz/meson-logs/testlog.txt 2>/dev/null

python3 scripts/count-tests.py "$results"/*.json "$results/failed-builds" || status=1
exit $status
