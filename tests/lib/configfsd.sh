# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the shell tests that run the real configfsd.
#
# configfsd_start BINARY LOG ARGS...: BINARY on 127.0.0.1:0 in the
# background with ARGS, its log in LOG; waits (up to 10 s) for the
# "listening" line and sets $configfsd_pid and $configfsd_port. Returns 1,
# with the log on stderr, when it exits or never says its port.
configfsd_start() {
  local bin=$1 log=$2
  shift 2
  # emptied here, not only by the child's redirection: a restart with the
  # same LOG would otherwise read the last run's port before the child
  # truncates it
  : >"$log"
  "$bin" --listen 127.0.0.1:0 "$@" 2>"$log" &
  configfsd_pid=$!
  configfsd_port=
  for _ in $(seq 1 100); do
    configfsd_port=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$log")
    [ -n "$configfsd_port" ] && return 0
    kill -0 "$configfsd_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "configfsd did not start" >&2
  cat "$log" >&2
  return 1
}
