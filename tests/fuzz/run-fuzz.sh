#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-fuzz.sh TARGET SRC_DIR WORK_DIR SECONDS - one libFuzzer run of the
# suite `fuzz`: TARGET mutates its seeds (SRC_DIR/seeds, SRC_DIR/regress,
# with SRC_DIR/dict) for SECONDS (CFS_FUZZ_SECONDS overrides it), growing
# a corpus of its own in WORK_DIR/corpus, kept between runs of this build.
# Fails on any finding (crash, sanitizer report, leak, timeout, OOM); the
# input that found it is in WORK_DIR/artifacts, to be copied into
# SRC_DIR/regress once fixed. Ends with one line of coverage: edges
# ("cov:" of libFuzzer's last stats), features and corpus size.
set -uo pipefail
exe=$1 src=$2 work=$3 seconds=${CFS_FUZZ_SECONDS:-$4}
name=$(basename "$src")
mkdir -p "$work/corpus" "$work/artifacts"
log=$work/fuzz.log
dict=()
[ -f "$src/dict" ] && dict=("-dict=$src/dict")
inputs=()
for d in seeds regress; do
  [ -d "$src/$d" ] && inputs+=("$src/$d")
done

"$exe" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
  -max_len=65536 -print_final_stats=1 "${dict[@]}" \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "${inputs[@]}" >"$log" 2>&1
status=$?

# "#N DONE cov: E ft: F corp: C/Sb ..." (or the last "pulse"/"NEW" line)
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
files=$(find "$work/corpus" -type f | wc -l)
unanswered=$(grep -c 'no answer' "$log")
echo "fuzz $name: ${seconds}s runs=${runs:-?} cov=${cov:-?} ft=${ft:-?} corp=${corp:-?} corpus_files=$files unanswered=$unanswered status=$status"
if [ $status -ne 0 ]; then
  grep -v -E '^#[0-9]+' "$log" | tail -80
  echo "fuzz $name: finding(s) in $work/artifacts:" && ls -l "$work/artifacts"
  exit 1
fi
exit 0
