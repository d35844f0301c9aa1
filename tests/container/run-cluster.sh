#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docker/compose-cluster.yaml, for real, with Debian's docker-compose: 3 etcd
# members and 3 configfsd nodes. Builds the configfsd image
# (docker/Dockerfile, on the base scripts/docker-base.sh imports) and the
# etcd image through the compose file's own build section, starts it all on
# free ports of 127.0.0.1, waits (bounded) for every node's /readyz, writes
# on node 1 and reads it on nodes 2 and 3 (?min_revision= from the write's
# ETag), kills node 1's container and checks that writes go on on the
# others, that a configfsctl watch given the three nodes goes on through
# another one without losing a change, and that configfsctl fails over
# and shows node 1 unreachable in `cluster`; starts it again and checks it caught
# up; then `down -v`. TAP
# output. Everything it started is removed at the end (dockerd too when
# this test started it); the images stay, as a build cache.
# usage: run-cluster.sh SOURCE_ROOT
set -uo pipefail
src=$(cd "$1" && pwd)
export DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0

if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
  echo "1..0 # SKIP needs root (or sudo) to install and start docker"
  exit 0
fi

tag=configfsd:test
etcd_tag=configfsd-etcd:test
run_id=configfsd-cluster-$$
tmp=$(mktemp -d)
compose=(docker-compose -p "$run_id" -f "$src/docker/compose-cluster.yaml")
compose_up=

# shellcheck source=tests/container/lib.sh
. "$src/tests/container/lib.sh"
cleanup() {
  docker rm -f "$run_id-watch" >/dev/null 2>&1
  if [ -n "$compose_up" ]; then
    timeout 180 "${compose[@]}" down -v -t 20 >/dev/null 2>&1
  fi
  docker_down
  rm -rf "$tmp"
}
trap cleanup EXIT

# ---- docker, docker-compose, the images --------------------------------------
docker_up
command -v docker-compose >/dev/null || bail "no docker-compose after scripts/docker-base.sh"
ok "docker and docker-compose $(docker-compose version --short 2>/dev/null) run (scripts/docker-base.sh)"

t0=$(date +%s)
build_image "$tag"
ok "docker build -f docker/Dockerfile . ($(($(date +%s) - t0)) s)"

# the tokens file, made by the image's own configfsd; readable by its user
openssl rand -hex 32 >"$tmp/token"
token=$(cat "$tmp/token")
docker run --rm -i "$tag" hash-token ci writer <"$tmp/token" >"$tmp/tokens" 2>"$tmp/err" ||
  bail "configfsd hash-token: $(cat "$tmp/err")"
chmod 0644 "$tmp/tokens"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ports=("$(free_port)" "$(free_port)" "$(free_port)")
export CONFIGFSD_IMAGE=$tag ETCD_IMAGE=$etcd_tag CONFIGFSD_TOKENS_FILE=$tmp/tokens
export CONFIGFSD_PORT1=${ports[0]} CONFIGFSD_PORT2=${ports[1]} CONFIGFSD_PORT3=${ports[2]}

t0=$(date +%s)
if ! out=$(timeout 900 "${compose[@]}" build etcd1 2>&1); then
  bail "docker-compose build etcd1 failed: $(echo "$out" | tail -15)"
fi
ok "docker-compose build: the etcd image from docker/etcd.Dockerfile ($(($(date +%s) - t0)) s)"

# ---- up -------------------------------------------------------------------------
compose_up=1
t0=$(date +%s)
if ! out=$(timeout 180 "${compose[@]}" up -d --no-build 2>&1); then
  not_ok "docker-compose up -d" "$out"
  finish
fi
ok "docker-compose -f docker/compose-cluster.yaml up -d"

cid() { "${compose[@]}" ps -q "$1" 2>/dev/null; }
# every published port is on 127.0.0.1; the etcd members publish none
pub=
for s in etcd1 etcd2 etcd3 node1 node2 node3; do
  pub="$pub$(docker port "$(cid "$s")" 2>/dev/null | sed "s/^/$s: /")"$'\n'
done
if grep -q 'node3: 8080/tcp -> 127.0.0.1:' <<<"$pub" &&
   ! grep -E -q -- '-> (0\.0\.0\.0|\[?::\]?):' <<<"$pub" &&
   ! grep -q '^etcd' <<<"$pub"; then
  ok "published ports: the nodes' only, on 127.0.0.1"
else
  not_ok "published ports: the nodes' only, on 127.0.0.1" "$pub"
fi

url() { echo "http://127.0.0.1:${ports[$(($1 - 1))]}$2"; }
auth=(-H "Authorization: Bearer $token")
logs() { "${compose[@]}" logs --no-color --tail 30 2>&1; }
# ready N: /readyz of node N answers 200 within 120 s
ready() {
  local i
  for i in $(seq 1 240); do
    [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$(url "$1" /readyz)")" = 200 ] && return 0
    sleep 0.5
  done
  return 1
}
all=1
for i in 1 2 3; do ready "$i" || all=; done
if [ -n "$all" ]; then
  ok "all three nodes' /readyz answer 200 ($(($(date +%s) - t0)) s from the start of up)"
else
  not_ok "all three nodes' /readyz answer 200 within 120 s" "$(logs)"
  finish
fi

# put N PATH VALUE: PUT on node N; prints the revision of its ETag
put() {
  local h
  h=$(curl -s -f -m 20 -o /dev/null -D - "${auth[@]}" -X PUT --data-binary "$3" "$(url "$1" "$2")") || return 1
  tr -d '\r' <<<"$h" | sed -n 's/^[Ee][Tt][Aa][Gg]: *"\([0-9]*\)"$/\1/p'
}
# get N PATH REV: GET on node N once it applied revision REV
get() { curl -s -f -m 20 "${auth[@]}" "$(url "$1" "$2?min_revision=$3")"; }

# ---- write on node 1, read on nodes 2 and 3 -------------------------------------
sub=/api/v1/config/02-simple-children
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -m 20 "${auth[@]}" -X POST \
  -H 'Content-Type: application/json' -d '{"name":"c1"}' "$(url 1 "$sub")")
rev=$(put 1 "$sub/c1/storeme" 41)
if [ "$code" = 201 ] && [ -n "$rev" ]; then
  ok "mkdir and PUT on node 1 (revision $rev)"
else
  not_ok "mkdir and PUT on node 1" "mkdir $code: $(cat "$tmp/body")" "revision '$rev'" "$(logs)"
  finish
fi
for i in 2 3; do
  got=$(get "$i" "$sub/c1/storeme" "$rev")
  if [ "$got" = 41 ]; then
    ok "node $i reads it (?min_revision=$rev)"
  else
    not_ok "node $i reads it (?min_revision=$rev)" "got '$got'"
  fi
done

# ---- node 1's container killed: writes go on on the others ------------------------
# --forward-writes (the compose file sets it): one node holds the
# writer's role and the others send it their writes, over the compose
# network, at the URL each advertises (http://nodeN:8080)
metric() { curl -s -f -m 5 "${auth[@]}" "$(url "$1" /metrics)" | sed -n "s/^$2 //p"; }
writer=
for _ in $(seq 1 60); do
  roles=$(for i in 1 2 3; do metric "$i" configfsd_cluster_writer; done | tr '\n' ' ')
  [ "$(tr ' ' '\n' <<<"$roles" | sort | tr -d '\n')" = 001 ] && break
  sleep 0.5
done
for i in 1 2 3; do [ "$(metric "$i" configfsd_cluster_writer)" = 1 ] && writer=$i; done
other=$((writer % 3 + 1))
forwarded=0
for k in $(seq 1 40); do
  [ -n "$writer" ] || break
  rev=$(put "$other" "$sub/c1/storeme" "$((100 + k))")
  forwarded=$(metric "$other" configfsd_cluster_forwarded_total)
  [ "${forwarded:-0}" -gt 0 ] && break
  sleep 0.5
done
if [ -n "$writer" ] && [ "${forwarded:-0}" -gt 0 ] &&
   [ "$(get "$writer" "$sub/c1/storeme" "${rev:-0}")" = "$((100 + k))" ]; then
  ok "one writer (node $writer); a write on node $other is forwarded to it and read there"
else
  not_ok "one writer; a write on another node is forwarded to it" "roles: '$roles'" "forwarded '$forwarded', revision '$rev'" "$(logs)"
fi

# a watch through configfsctl (the image's, on the host's network) given
# the three nodes, node 1 first: it must go on when node 1 goes
watcher=$run_id-watch
docker run -d --name "$watcher" --network host -e CONFIGFSCTL_TOKEN="$token" \
  -e CONFIGFSCTL_SERVER="$(url 1 ''),$(url 2 ''),$(url 3 '')" \
  --entrypoint configfsctl "$tag" watch /02-simple-children >/dev/null
rev=$(put 1 "$sub/c1/storeme" 40)
watching=
for _ in $(seq 1 100); do
  grep -q "storeme = 40$" <<<"$(docker logs "$watcher" 2>/dev/null)" && watching=1 && break
  sleep 0.2
done

c1=$(cid node1)
docker kill "$c1" >/dev/null 2>&1
for _ in $(seq 1 40); do
  [ "$(docker inspect -f '{{.State.Running}}' "$c1" 2>/dev/null)" = false ] && break
  sleep 0.25
done
if [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$(url 1 /readyz)")" = 200 ]; then
  not_ok "docker kill of node 1's container" "it still answers"
fi
# VALUE written on node FROM is read on node TO; sets rev to its revision
write_read() {
  local got
  rev=$(put "$2" "$sub/c1/storeme" "$1")
  got=$(get "$3" "$sub/c1/storeme" "${rev:-0}")
  if [ -n "$rev" ] && [ "$got" = "$1" ]; then
    ok "node 1 killed: a write on node $2 (revision $rev) is read on node $3"
  else
    not_ok "node 1 killed: a write on node $2 is read on node $3" "revision '$rev', got '$got'" "$(logs)"
  fi
}
write_read 42 2 3
write_read 43 3 2

# the watch went on through node 2 or 3 (Last-Event-ID): 42 and 43, once
seen=
for _ in $(seq 1 100); do
  seen=$(docker logs "$watcher" 2>/dev/null | grep -o "storeme = 4[0-9]$" | tr '\n' ' ')
  [ "$seen" = "storeme = 40 storeme = 42 storeme = 43 " ] && break
  sleep 0.2
done
if [ -n "$watching" ] && [ "$seen" = "storeme = 40 storeme = 42 storeme = 43 " ] &&
   grep -q resuming <<<"$(docker logs "$watcher" 2>&1)"; then
  ok "configfsctl watch over n1,n2,n3 resumes on another node when node 1 goes, nothing lost"
else
  not_ok "configfsctl watch over n1,n2,n3 resumes on another node when node 1 goes" \
    "watching '$watching', seen '$seen'" "$(docker logs "$watcher" 2>&1 | tail -8)"
fi
docker rm -f "$watcher" >/dev/null 2>&1

# configfsctl (the image's, on the host's network) given the three nodes,
# node 1 first and down: it fails over, and `cluster` shows who is there
ctl() {
  docker run --rm --network host -e CONFIGFSCTL_TOKEN="$token" \
    -e CONFIGFSCTL_SERVER="$(url 1 ''),$(url 2 ''),$(url 3 '')" \
    --entrypoint configfsctl "$tag" "$@"
}
got=$(ctl cat /02-simple-children/c1/storeme 2>"$tmp/ctl.err")
if [ "$got" = 43 ] && grep -q "trying $(url 2 '')" "$tmp/ctl.err"; then
  ok "configfsctl --server n1,n2,n3 with node 1 down: fails over to node 2"
else
  not_ok "configfsctl --server n1,n2,n3 with node 1 down: fails over to node 2" "got '$got'" "$(cat "$tmp/ctl.err")"
fi
ctl cluster >"$tmp/members" 2>"$tmp/ctl.err"
code=$?
if [ "$code" = 10 ] && grep "$(url 1 '')" "$tmp/members" | grep -q unreachable &&
   [ "$(grep -c ' ready ' "$tmp/members")" = 2 ]; then
  ok "configfsctl cluster: node 1 unreachable (exit 10), nodes 2 and 3 ready"
else
  not_ok "configfsctl cluster: node 1 unreachable (exit 10), nodes 2 and 3 ready" "exit $code" "$(cat "$tmp/members" "$tmp/ctl.err")"
fi

# ---- node 1 back: it rebuilt from the log -------------------------------------------
docker start "$c1" >/dev/null 2>&1
if ready 1 && [ "$(get 1 "$sub/c1/storeme" "${rev:-0}")" = 43 ]; then
  ok "node 1 started again is ready and reads the writes made while it was down"
else
  not_ok "node 1 started again is ready and reads the writes made while it was down" "$(logs)"
fi

# ---- down -v ----------------------------------------------------------------------------
if out=$(timeout 180 "${compose[@]}" down -v -t 20 2>&1); then
  compose_up=
  left=$(docker ps -aq -f "label=com.docker.compose.project=$run_id")
  vols=$(docker volume ls -q -f "label=com.docker.compose.project=$run_id")
  if [ -z "$left$vols" ]; then
    ok "docker-compose down -v: no container or volume left"
  else
    not_ok "docker-compose down -v: no container or volume left" "containers: $left" "volumes: $vols"
  fi
else
  not_ok "docker-compose down -v" "$out"
fi

finish
