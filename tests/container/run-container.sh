#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The container image, for real: builds docker/Dockerfile unmodified (on the
# base scripts/docker-base.sh imports: there is no registry), runs it with a
# tokens file as a Docker secret, waits for the HEALTHCHECK (the built-in
# probe) to say healthy, writes through the API from the host, replaces the
# container by a new one on the same volume and reads the data back, checks
# that it runs as non-root and that `docker stop` stops it cleanly; then the
# two other ways to start it: without tokens (refused) and with
# --insecure-listen (served, and logged as such); then as platforms run it:
# an arbitrary uid (--user 12345) on a fresh named volume, read-only with
# every capability dropped, the secret mounted root-owned (0440 group 0
# served, 0600 refused with a message saying what to change); the image's
# contents (no shell, apt, headers or man pages) and size, with the debug
# variant's beside it. TAP output; every wait is
# bounded; then the same through docker/compose.yaml (docker-compose, installed
# if missing). The containers and volumes it made are removed at the end, and
# dockerd too when this test started it. The image stays, as a build cache.
# usage: run-container.sh SOURCE_ROOT
set -uo pipefail
# With pipefail, "cmd | grep -q" fails when grep quits before cmd has
# written everything (SIGPIPE): match on a captured output instead.
src=$(cd "$1" && pwd)
export DOCKER_BUILDKIT=0 # the classic builder: what Debian's docker.io has

if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
  echo "1..0 # SKIP needs root (or sudo) to install and start docker"
  exit 0
fi

tag=configfsd:test
run_id=configfsd-test-$$
vol=$run_id-state
tmp=$(mktemp -d)
containers=()
compose=() compose_up=
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
# shellcheck source=tests/container/lib.sh
. "$src/tests/container/lib.sh"
cleanup() {
  if [ -n "$compose_up" ]; then
    timeout 120 "${compose[@]}" down -v -t 20 >/dev/null 2>&1
  fi
  for c in "${containers[@]}"; do docker rm -f -v "$c" >/dev/null 2>&1; done
  docker volume rm -f "$vol" "$run_id-platform" >/dev/null 2>&1
  docker_down
  "${sudo_cmd[@]}" rm -rf "$tmp"
}
trap cleanup EXIT

# ---- docker, the base image, our image -------------------------------------
docker_up
ok "docker runs and debian:bookworm-slim exists (scripts/docker-base.sh)"

t0=$(date +%s)
build_image "$tag"
ok "docker build -f docker/Dockerfile . ($(($(date +%s) - t0)) s)"
# the previous runs' build stages (dangling, newest first): this run's, the
# newest, is the next run's cache
docker images -q -f dangling=true -f label=io.configfsd.stage=build | tail -n +2 |
  xargs -r docker rmi >/dev/null 2>&1

# the build stage installs configfs.pc where a Debian host's build does
# (lib/<triplet>), not under lib64: the newest build stage is this run's
stage=$(docker images -q -f dangling=true -f label=io.configfsd.stage=build | head -1)
want=/usr/lib/$(gcc -print-multiarch)/pkgconfig/configfs.pc
if [ -n "$stage" ] &&
   docker run --rm --entrypoint sh "$stage" -c "test -f /staging$want" >/dev/null 2>&1; then
  ok "the build stage's configfs.pc is at $want, as on this host"
else
  not_ok "the build stage's configfs.pc is at $want, as on this host" "stage '$stage'"
fi

inspect_img() { docker image inspect -f "$1" "$tag"; }
user=$(inspect_img '{{.Config.User}}')
if [ -n "$user" ] && [ "${user%%:*}" != 0 ] && [ "${user%%:*}" != root ]; then
  ok "the image's USER is unprivileged ($user)"
else
  not_ok "the image's USER is unprivileged" "User: '$user'"
fi
labels=$(inspect_img '{{json .Config.Labels}}')
if grep -q '"org.opencontainers.image.title":"configfsd"' <<<"$labels" &&
   grep -q '"org.opencontainers.image.source"' <<<"$labels" &&
   grep -q '"org.opencontainers.image.version"' <<<"$labels"; then
  ok "OCI labels: title, source, version"
else
  not_ok "OCI labels: title, source, version" "$labels"
fi
vols=$(inspect_img '{{json .Config.Volumes}}')
sig=$(inspect_img '{{.Config.StopSignal}}')
hc=$(inspect_img '{{json .Config.Healthcheck.Test}}')
# no VOLUME: an anonymous volume would outlive `docker rm -f`
if [ "$vols" = null ] && [ "$sig" = SIGTERM ] && grep -q '"configfsd","probe"' <<<"$hc"; then
  ok "no anonymous VOLUME, STOPSIGNAL SIGTERM, HEALTHCHECK configfsd probe"
else
  not_ok "no anonymous VOLUME, STOPSIGNAL SIGTERM, HEALTHCHECK configfsd probe" \
    "volumes $vols, stop signal $sig, healthcheck $hc"
fi
# the files of the image, as `docker export` lists them
files_of() {
  local c
  c=$(docker create "$1") || return 1
  docker export "$c" | tar -t
  docker rm -f "$c" >/dev/null 2>&1
}
files=$(files_of "$tag")
bad=$(grep -E '^(usr/)?bin/(ba)?sh$|^(usr/)?bin/(apt|apt-get|dpkg|curl|wget)$|^usr/include/|^usr/share/(man|doc)/|pkgconfig/|systemd/' <<<"$files" | head -5)
if [ -n "$files" ] && [ -z "$bad" ] && grep -q '^usr/share/configfsd/schemas/usb-gadget.json$' <<<"$files" &&
   grep -q '^usr/share/configfsd/static/index.html$' <<<"$files"; then
  ok "slim: the binaries, libraries, schemas and UI; no shell, apt, curl, headers, man pages ($(wc -l <<<"$files") entries)"
else
  not_ok "slim: no shell, apt, curl, headers, man pages; schemas and UI present" "$bad"
fi
size=$(inspect_img '{{.Size}}')
mb=$(((size + 524287) / 1048576))
if [ "$mb" -lt 80 ]; then
  ok "image size: $mb MB ($size bytes)"
else
  not_ok "image size under 80 MB" "$mb MB"
fi
# the debug variant: the same install on debian:bookworm-slim, with a shell
# (built with the default target by the classic builder: a cache hit)
if out=$(timeout 600 docker build -q --target debug -f "$src/docker/Dockerfile" -t "$tag-debug" "$src" 2>&1) &&
   docker run --rm --entrypoint sh "$tag-debug" -c 'configfsd --version' >/dev/null 2>&1; then
  dsize=$(docker image inspect -f '{{.Size}}' "$tag-debug")
  ok "debug variant (--target debug) has a shell: $(((dsize + 524287) / 1048576)) MB beside $mb MB"
else
  not_ok "debug variant (--target debug) builds and has a shell" "$out"
fi
if grep -q '^configfsctl ' <<<"$(docker run --rm --entrypoint configfsctl "$tag" --version 2>/dev/null)"; then
  ok "configfsctl is in the image"
else
  not_ok "configfsctl is in the image"
fi

# ---- a token, hashed by the image's own configfsd ---------------------------
openssl rand -hex 32 >"$tmp/token"
token=$(cat "$tmp/token")
if docker run --rm -i "$tag" hash-token ci writer <"$tmp/token" >"$tmp/tokens" 2>"$tmp/err" &&
   grep -q '^ci writer sha256:' "$tmp/tokens"; then
  ok "configfsd hash-token in the image makes the tokens file"
else
  not_ok "configfsd hash-token in the image makes the tokens file" "$(cat "$tmp/err")"
fi
chmod 0644 "$tmp/tokens" # the image's user reads it through the bind mount
docker volume create "$vol" >/dev/null || bail "docker volume create"

# start NAME [ARGS...]: run detached with the volume and the secret, port 8080
# published on a random port of 127.0.0.1; health checked every second
start() {
  local name=$1; shift
  containers+=("$name")
  docker run -d --name "$name" \
    -v "$vol:/var/lib/configfsd" \
    -v "$tmp/tokens:/run/secrets/configfsd-tokens:ro" \
    -p 127.0.0.1::8080 --health-interval 1s --health-retries 30 \
    "$tag" "$@" >/dev/null
}
# wait_healthy NAME: "healthy", or what it was when 60 s ran out or it exited
wait_healthy() {
  local s
  for _ in $(seq 1 120); do
    s=$(docker inspect -f '{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$1" 2>/dev/null)
    case $s in
      running/healthy) echo healthy; return 0 ;;
      exited/* | dead/*) echo "$s"; return 1 ;;
    esac
    sleep 0.5
  done
  echo "$s"
  return 1
}
port_of() { docker port "$1" 8080/tcp | head -1 | sed 's/.*://'; }
# stop_clean NAME: docker stop within its timeout, exit code 0
stop_clean() {
  local t0 t1 code
  t0=$(date +%s%N)
  docker stop -t 20 "$1" >/dev/null
  t1=$(date +%s%N)
  code=$(docker inspect -f '{{.State.ExitCode}}' "$1")
  if [ "$code" = 0 ] && [ $(((t1 - t0) / 1000000)) -lt 20000 ]; then
    ok "docker stop $2: exit code 0 in $(((t1 - t0) / 1000000)) ms"
  else
    not_ok "docker stop $2: exit code 0 before the 20 s timeout" \
      "exit code $code after $(((t1 - t0) / 1000000)) ms" "$(docker logs "$1" 2>&1)"
  fi
}

# ---- first container: write ---------------------------------------------------
c1=$run_id-1
start "$c1" || bail "docker run failed"
if s=$(wait_healthy "$c1"); then
  ok "the HEALTHCHECK (configfsd probe) reports healthy"
else
  not_ok "the HEALTHCHECK (configfsd probe) reports healthy" "state $s" \
    "$(docker inspect -f '{{json .State.Health}}' "$c1")" "$(docker logs "$c1" 2>&1)"
  finish
fi
api=http://127.0.0.1:$(port_of "$c1")/api/v1
auth=(-H "Authorization: Bearer $token")
code=$(curl -s -o /dev/null -w '%{http_code}' "$api/config/")
if [ "$code" = 401 ]; then ok "0.0.0.0 with tokens: no token, 401"; else not_ok "0.0.0.0 with tokens: no token, 401" "status $code"; fi
errs=
curl -sf "${auth[@]}" -X POST -H 'Content-Type: application/json' -d '{"name":"child1"}' \
  "$api/config/02-simple-children" >/dev/null || errs="$errs mkdir"
curl -sf "${auth[@]}" -X PUT --data-binary '42' \
  "$api/config/02-simple-children/child1/storeme" >/dev/null || errs="$errs store"
curl -sf "${auth[@]}" -X POST -H 'Content-Type: application/json' -d '{"name":"g1"}' \
  "$api/config/usb_gadget" >/dev/null || errs="$errs mkdir-schema"
if [ -z "$errs" ]; then ok "writes through the API from the host"; else not_ok "writes through the API from the host" "failed:$errs"; fi
# no id or stat in the image: ask docker and the host
uid=$(docker top "$c1" -o pid,uid,comm | awk '$3 == "configfsd" { print $2; exit }')
if [ -n "$uid" ] && [ "$uid" != 0 ]; then ok "the server runs as uid $uid, not root"; else not_ok "the server runs as non-root" "uid: '$uid'"; fi
mnt=$(docker volume inspect -f '{{.Mountpoint}}' "$vol")
owner=$("${sudo_cmd[@]}" stat -c %u "$mnt/configfsd.db" 2>/dev/null)
if [ "$owner" = 10001 ]; then ok "the database is in the volume, owned by uid 10001"; else not_ok "the database is in the volume, owned by uid 10001" "owner '$owner'"; fi
stop_clean "$c1" "(SIGTERM)"
if grep -q 'level=notice event=stop' <<<"$(docker logs "$c1" 2>&1)"; then ok "it logged its clean stop"; else not_ok "it logged its clean stop" "$(docker logs "$c1" 2>&1 | tail -5)"; fi

# ---- a new container on the same volume: read back --------------------------
c2=$run_id-2
start "$c2" || bail "docker run (second) failed"
if s=$(wait_healthy "$c2"); then ok "a new container on the same volume is healthy"; else not_ok "a new container on the same volume is healthy" "state $s" "$(docker logs "$c2" 2>&1)"; fi
api=http://127.0.0.1:$(port_of "$c2")/api/v1
got=$(curl -sf "${auth[@]}" "$api/config/02-simple-children/child1/storeme")
if [ "$got" = 42 ]; then ok "the value written before is read back"; else not_ok "the value written before is read back" "got '$got'"; fi
if grep -q '"g1"' <<<"$(curl -sf "${auth[@]}" "$api/config/usb_gadget?depth=1")"; then ok "the schema-made item is back"; else not_ok "the schema-made item is back"; fi
stop_clean "$c2" "(second container)"

# ---- no tokens, no flag: refused ------------------------------------------------
c3=$run_id-3
containers+=("$c3")
timeout 60 docker run --name "$c3" "$tag" >"$tmp/c3.out" 2>&1
code=$?
if [ "$code" -ne 0 ] && grep -q "tokens" "$tmp/c3.out" &&
   grep -q "configfsd hash-token" "$tmp/c3.out" && grep -q -- "--insecure-listen" "$tmp/c3.out"; then
  ok "without a tokens secret it refuses to start (exit $code), naming hash-token and --insecure-listen"
else
  not_ok "without a tokens secret it refuses to start, naming hash-token and --insecure-listen" \
    "exit $code" "$(cat "$tmp/c3.out")"
fi

# ---- --insecure-listen: served, loudly -------------------------------------------
c4=$run_id-4
containers+=("$c4")
docker run -d --name "$c4" -p 127.0.0.1::8080 --health-interval 1s "$tag" --insecure-listen >/dev/null
if s=$(wait_healthy "$c4") &&
   [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(port_of "$c4")/api/v1/config/")" = 200 ]; then
  ok "--insecure-listen serves without a token"
else
  not_ok "--insecure-listen serves without a token" "state $s" "$(docker logs "$c4" 2>&1)"
fi
if grep -q 'level=warning event=insecure.*WITHOUT AUTHENTICATION' <<<"$(docker logs "$c4" 2>&1)"; then
  ok "--insecure-listen is logged as a warning"
else
  not_ok "--insecure-listen is logged as a warning" "$(docker logs "$c4" 2>&1)"
fi
docker rm -f -v "$c4" >/dev/null 2>&1

# ---- as platforms run it ---------------------------------------------------------
# An arbitrary uid (OpenShift), group 0, on a fresh named volume; read-only,
# no capability, no new privileges; the secret root's, mode 0440 group 0.
vol2=$run_id-platform
docker volume create "$vol2" >/dev/null || bail "docker volume create"
cp "$tmp/tokens" "$tmp/tokens-0440"
"${sudo_cmd[@]}" chown 0:0 "$tmp/tokens-0440" && "${sudo_cmd[@]}" chmod 0440 "$tmp/tokens-0440"
c6=$run_id-6
containers+=("$c6")
docker run -d --name "$c6" --user 12345 --read-only --tmpfs /tmp --cap-drop ALL \
  --security-opt no-new-privileges:true -v "$vol2:/var/lib/configfsd" \
  -v "$tmp/tokens-0440:/run/secrets/configfsd-tokens:ro" \
  -p 127.0.0.1::8080 --health-interval 1s --health-retries 30 "$tag" >/dev/null
if s=$(wait_healthy "$c6") &&
   curl -sf "${auth[@]}" -X POST -H 'Content-Type: application/json' -d '{"name":"child1"}' \
     "http://127.0.0.1:$(port_of "$c6")/api/v1/config/02-simple-children" >/dev/null; then
  ok "--user 12345 --read-only --cap-drop ALL, a named volume, a root-owned 0440 secret: healthy, writes"
else
  not_ok "--user 12345 --read-only --cap-drop ALL, a named volume, a root-owned 0440 secret: healthy, writes" \
    "state $s" "$(docker logs "$c6" 2>&1)"
fi
owner=$("${sudo_cmd[@]}" stat -c %u "$(docker volume inspect -f '{{.Mountpoint}}' "$vol2")/configfsd.db" 2>/dev/null)
if [ "$owner" = 12345 ]; then ok "the database was made by uid 12345"; else not_ok "the database was made by uid 12345" "owner '$owner'"; fi
docker rm -f -v "$c6" >/dev/null 2>&1
docker volume rm -f "$vol2" >/dev/null 2>&1
# The secret as 0600 root: unreadable by the image's user, and it says so
cp "$tmp/tokens" "$tmp/tokens-0600"
"${sudo_cmd[@]}" chown 0:0 "$tmp/tokens-0600" && "${sudo_cmd[@]}" chmod 0600 "$tmp/tokens-0600"
c7=$run_id-7
containers+=("$c7")
timeout 60 docker run --name "$c7" -v "$tmp/tokens-0600:/run/secrets/configfsd-tokens:ro" "$tag" >"$tmp/c7.out" 2>&1
code=$?
if [ "$code" -ne 0 ] && grep -q "Permission denied" "$tmp/c7.out" && grep -q "0440" "$tmp/c7.out"; then
  ok "a root-owned 0600 secret: refused (exit $code), saying to mount it 0440 with group 0"
else
  not_ok "a root-owned 0600 secret: refused, saying how to mount it" "exit $code" "$(cat "$tmp/c7.out")"
fi
# no VOLUME in the image: a container removed leaves no volume behind
before=$(docker volume ls -q | sort)
c8=$run_id-8
docker run -d --name "$c8" "$tag" --insecure-listen >/dev/null
docker rm -f "$c8" >/dev/null 2>&1
after=$(docker volume ls -q | sort)
if [ "$before" = "$after" ]; then ok "docker rm -f leaves no anonymous volume"; else not_ok "docker rm -f leaves no anonymous volume" "$(comm -13 <(echo "$before") <(echo "$after"))"; fi

# --mount in a container (docs/mount.md): root, the FUSE device and
# CAP_SYS_ADMIN; the debug variant's shell drives the mount as a configfs
# script would, and the server sees the change over HTTP
if [ -e /dev/fuse ]; then
  c9=$run_id-9
  containers+=("$c9")
  docker run -d --name "$c9" --user 0 --device /dev/fuse --cap-add SYS_ADMIN \
    --security-opt apparmor=unconfined --entrypoint sh "$tag-debug" \
    -c 'mkdir -p /mnt/config && exec configfsd --listen 127.0.0.1:8080 --db /tmp/m.db --mount /mnt/config' >/dev/null
  mounted=
  for _ in $(seq 1 100); do
    docker exec "$c9" sh -c 'test -d /mnt/config/usb_gadget' 2>/dev/null && { mounted=1; break; }
    sleep 0.1
  done
  out=$(docker exec "$c9" sh -c 'cd /mnt/config/usb_gadget && mkdir g1 && cd g1 &&
        echo 0x1d6b > idVendor && mkdir functions/ncm.usb0 configs/c.1 &&
        ln -s functions/ncm.usb0 configs/c.1/ && cat idVendor &&
        configfsctl cat /usb_gadget/g1/idVendor &&
        configfsctl ls /usb_gadget/g1/configs/c.1' 2>&1)
  if [ -n "$mounted" ] && [ "$(printf '%s\n' "$out" | head -2 | tr '\n' ' ')" = "0x1d6b 0x1d6b " ] &&
     grep -q 'ncm.usb0' <<<"$out"; then
    ok "--mount in the container (--device /dev/fuse --cap-add SYS_ADMIN): a gadget script runs, HTTP sees it"
  else
    not_ok "--mount in the container (--device /dev/fuse --cap-add SYS_ADMIN): a gadget script runs, HTTP sees it" \
      "mounted=${mounted:-no}" "$out" "$(docker logs "$c9" 2>&1 | tail -20)"
  fi
  docker stop -t 10 "$c9" >/dev/null 2>&1
  code=$(docker inspect -f '{{.State.ExitCode}}' "$c9" 2>/dev/null)
  if [ "$code" = 0 ]; then ok "--mount in the container: SIGTERM unmounts and exits 0"; else not_ok "--mount in the container: SIGTERM unmounts and exits 0" "exit $code" "$(docker logs "$c9" 2>&1 | tail -20)"; fi
else
  ok "--mount in a container # SKIP no /dev/fuse on this machine"
fi

# ---- docker/compose.yaml: named volume, tokens secret -------------------------
if ! command -v docker-compose >/dev/null; then
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends docker-compose >/dev/null 2>&1
fi
if command -v docker-compose >/dev/null; then
  compose_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  export CONFIGFSD_IMAGE=$tag CONFIGFSD_TOKENS_FILE=$tmp/tokens CONFIGFSD_PORT=$compose_port
  compose=(docker-compose -p "$run_id" -f "$src/docker/compose.yaml")
  compose_up=1
  if out=$(timeout 120 "${compose[@]}" up -d --no-build 2>&1); then
    c5=$("${compose[@]}" ps -q configfsd)
    if s=$(wait_healthy "$c5") &&
       grep -q '"usb_gadget"' <<<"$(curl -sf "${auth[@]}" "http://127.0.0.1:$compose_port/api/v1/config/")"; then
      ok "docker/compose.yaml: healthy, served with the tokens secret"
    else
      not_ok "docker/compose.yaml: healthy, served with the tokens secret" "state $s" "$(docker logs "$c5" 2>&1)"
    fi
    if docker volume inspect "${run_id}_configfsd-state" >/dev/null 2>&1; then
      ok "docker/compose.yaml: state in the named volume"
    else
      not_ok "docker/compose.yaml: state in the named volume"
    fi
  else
    not_ok "docker/compose.yaml: docker-compose up" "$out"
  fi
else
  not_ok "docker-compose installs (apt-get install docker-compose)"
fi

finish
