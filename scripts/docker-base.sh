#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Make `docker build -f docker/Dockerfile .` possible on a Debian 12 machine
# without an image registry:
#   1. install docker.io, debootstrap and docker-compose (Debian's, 1.29:
#      the container suite runs docker/compose*.yaml with it) if missing;
#   2. start dockerd if no daemon answers (its pid in $DOCKERD_PIDFILE, its
#      log in $DOCKERD_LOG, so that a caller can stop what it started);
#   3. build the base image the Dockerfile names, debian:bookworm-slim, with
#      `debootstrap --variant=minbase bookworm` and `docker import`, from the
#      apt mirror this machine uses. Cached twice: nothing is done when the
#      image exists, and the root file system tarball is kept in
#      $CONFIGFSD_BASE_CACHE (~2 minutes to make, seconds to import).
# Idempotent; run as root (or with sudo available).
set -euo pipefail

tag=${CONFIGFSD_BASE_TAG:-debian:bookworm-slim}
suite=bookworm
cache=${CONFIGFSD_BASE_CACHE:-/var/cache/configfsd}
pidfile=${DOCKERD_PIDFILE:-/run/configfsd-dockerd.pid}
dlog=${DOCKERD_LOG:-/var/log/configfsd-dockerd.log}
export DOCKER_BUILDKIT=0

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

say() { echo "docker-base: $*" >&2; }

# 1. packages
missing=()
for p in docker.io debootstrap docker-compose; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# 2. the daemon
if ! docker info >/dev/null 2>&1; then
  say "starting dockerd (log: $dlog)"
  # its own session and no inherited descriptors: a test harness that
  # waits for its pipes to close is not held by it
  "${sudo_cmd[@]}" setsid dockerd --pidfile "$pidfile" \
    </dev/null >>"$dlog" 2>&1 &
  for _ in $(seq 1 120); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || {
    tail -20 "$dlog" >&2
    say "dockerd did not answer within 60 s"
    exit 1
  }
fi

# 3. the base image
if docker image inspect "$tag" >/dev/null 2>&1; then
  exit 0
fi

# The first http(s) URI of a "bookworm" suite in the machine's apt sources:
# one-line .list files first, then deb822 .sources paragraphs.
mirror() {
  local m
  m=$(grep -hsE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list \
        /etc/apt/sources.list.d/*.list \
      | awk -v s="$suite" '{
          for (i = 2; i <= NF; i++)
            if ($i ~ /^https?:\/\//) { if ($(i + 1) == s) { print $i; exit } else break }
        }')
  if [ -z "$m" ]; then
    m=$(awk -v s="$suite" '
          function flush() { if (uris != "" && suites ~ ("(^| )" s "( |$)") && deb) { print uris; found = 1; exit } }
          /^[[:space:]]*$/ { flush(); uris = ""; suites = ""; deb = 0; next }
          /^Types:/ { deb = ($0 ~ /(^|[ :])deb( |$)/) }
          /^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { uris = $i; break } }
          /^Suites:/ { suites = $0; sub(/^Suites:[[:space:]]*/, "", suites) }
          END { if (!found) flush() }' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null)
  fi
  echo "${m:-http://deb.debian.org/debian}"
}

tarball=$cache/$suite-minbase.tar
if [ ! -s "$tarball" ]; then
  url=$(mirror)
  say "debootstrap --variant=minbase $suite from $url (about 2 minutes)"
  "${sudo_cmd[@]}" mkdir -p "$cache"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap '"${sudo_cmd[@]}" rm -rf "$rootfs"' EXIT
  "${sudo_cmd[@]}" debootstrap --variant=minbase "$suite" "$rootfs" "$url" \
    >"$cache/debootstrap.log" 2>&1 || {
    tail -20 "$cache/debootstrap.log" >&2
    say "debootstrap failed"
    exit 1
  }
  # what debian:*-slim images drop: package caches and lists
  "${sudo_cmd[@]}" rm -rf "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/lib/apt/lists/*
  "${sudo_cmd[@]}" tar -C "$rootfs" --numeric-owner -cf "$tarball.tmp" .
  "${sudo_cmd[@]}" mv "$tarball.tmp" "$tarball"
fi
say "importing $tarball as $tag"
docker import --change 'CMD ["bash"]' "$tarball" "$tag" >/dev/null
