# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154 # $src and $tmp: set by the script that sources it
# What the container suite's scripts share, sourced once $src (the source
# root) and $tmp (their scratch folder) are set: TAP output, dockerd
# started when it is not running (and stopped again by docker_down), and
# docker/Dockerfile built.

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift
  for l in "$@"; do printf '%s\n' "$l" | tail -15 | sed 's/^/# /'; done
}
finish() { echo "1..$n"; [ "$failed" -eq 0 ]; exit $?; }
bail() { echo "Bail out! $*"; exit 1; }

pidfile=$tmp/dockerd.pid
started_dockerd=

# docker running and the base image imported (scripts/docker-base.sh,
# which starts dockerd when it is not running), or bail out.
docker_up() {
  local out
  docker info >/dev/null 2>&1 || started_dockerd=1
  if ! out=$(DOCKERD_PIDFILE=$pidfile "$src/scripts/docker-base.sh" 2>&1); then
    bail "scripts/docker-base.sh failed: $(echo "$out" | tail -5)"
  fi
}

# Stop dockerd if docker_up() started it (bounded: 20 s).
docker_down() {
  if [ -n "$started_dockerd" ] && [ -s "$pidfile" ]; then
    local p; p=$(cat "$pidfile")
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
  fi
}

# docker/Dockerfile built as image $1, or bail out; the previous build's
# image, untagged by it, is removed.
build_image() {
  local old_id new_id out
  old_id=$(docker image inspect -f '{{.Id}}' "$1" 2>/dev/null)
  if ! out=$(timeout 1500 docker build -q -f "$src/docker/Dockerfile" -t "$1" "$src" 2>&1); then
    bail "docker build -f docker/Dockerfile failed: $(echo "$out" | tail -15)"
  fi
  new_id=$(docker image inspect -f '{{.Id}}' "$1")
  if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
    docker rmi "$old_id" >/dev/null 2>&1 # the previous run's, now untagged
  fi
}
