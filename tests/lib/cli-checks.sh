# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154 # $tmp: set by the script that sources it
# Sourced by the configfsctl tests once $tmp is set: TAP checks over the
# last command's exit status ($rc), standard output ($out) and error
# ($err), and a bounded wait for a line to show up in a file.
#   check DESCRIPTION CONDITION: one TAP line; on failure what came
#   has TEXT [FILE]: FILE (default $out) holds TEXT
#   wait_for FILE TEXT: up to 30 s for TEXT to appear in FILE
#   finish_checks: the TAP plan, and the exit status
n=0
failed=0
out=$tmp/out
err=$tmp/err
rc=0

check() {
  n=$((n + 1))
  if eval "$2"; then
    echo "ok $n - $1"
  else
    failed=$((failed + 1))
    echo "not ok $n - $1"
    echo "# condition: $2"
    echo "# exit status: $rc"
    head -c 1500 "$out" | sed 's/^/# stdout: /'
    head -c 800 "$err" | sed 's/^/# stderr: /'
  fi
}
has() { grep -qF -- "$1" "${2:-$out}"; }
wait_for() {
  for _ in $(seq 1 300); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
finish_checks() {
  echo "1..$n"
  [ "$failed" = 0 ]
}
