#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The mount's speed (docs/mount.md): reading and writing one attribute,
# per second, through `configfsd --mount` and through HTTP, beside
# libfuse's own `hello` example (Debian's libfuse3-dev ships its source)
# mounted in the same run as the floor any FUSE filesystem pays.
#   bench-mount.sh CONFIGFSD [N]   (N operations per row; default 2000)
# Two kinds of rows:
#   shell  a process per operation, as scripts do: `cat F`, `echo v > F`
#          (sh), against `curl` GET/PUT of the same attribute
#   calls  the system calls alone, in one Python process: open+read+close
#          and open(O_TRUNC)+write+close, against one keep-alive HTTP
#          connection (http.client) doing GET and PUT
# Writes are durable commits (SQLite, --sync full by default) on every
# path, so they measure the commit as much as the front end.
# Runs as root or as a user FUSE lets mount; needs curl and python3, and
# wrk (installed through scripts/deps.sh when missing).
set -euo pipefail
configfsd=$1
N=${2:-2000}
[ -c /dev/fuse ] || { echo "no /dev/fuse: nothing to measure" >&2; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/../../tests/lib/configfsd.sh
source "$here/../../tests/lib/configfsd.sh"
tmp=$(mktemp -d)
M=$tmp/mnt H=$tmp/hello
mkdir "$M" "$H"
hello_pid=
cleanup() {
  [ -n "${configfsd_pid:-}" ] && kill "$configfsd_pid" 2>/dev/null && wait "$configfsd_pid" 2>/dev/null
  if mountpoint -q "$H"; then fusermount3 -u "$H" 2>/dev/null || umount -l "$H"; fi
  if mountpoint -q "$M"; then fusermount3 -u -z "$M" 2>/dev/null || umount -l "$M"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

configfsd_start "$configfsd" "$tmp/log" --db "$tmp/db" --mount "$M" \
  --log-level warning
for _ in $(seq 1 100); do mountpoint -q "$M" && break; sleep 0.1; done
mountpoint -q "$M" || { echo "configfsd did not mount $M" >&2; exit 1; }
B=http://127.0.0.1:$configfsd_port/api/v1/config
mkdir "$M/02-simple-children/bench"
A=$M/02-simple-children/bench/storeme
U=$B/02-simple-children/bench/storeme
echo 1 >"$A"

# libfuse's hello example: one file, in memory
hello_src=/usr/share/doc/libfuse3-dev/examples/hello.c
if [ -f "$hello_src" ] && cc -O2 -o "$tmp/hello-fs" "$hello_src" $(pkg-config --cflags --libs fuse3) 2>/dev/null; then
  "$tmp/hello-fs" "$H"
  for _ in $(seq 1 100); do mountpoint -q "$H" && break; sleep 0.1; done
else
  echo "# libfuse's hello example is not available: no baseline row" >&2
fi

rate_row() { # NAME PER_SECOND
  printf '| %-44s | %9s |\n' "$1" "$2"
}
rate() { # NAME SECONDS
  python3 -c "import sys; print('| %-44s | %9.0f |' % (sys.argv[1], int(sys.argv[3]) / float(sys.argv[2])))" "$1" "$2" "$N"
}
timeit() { # NAME COMMAND...: the command runs the N operations
  local name=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  rate "$name" "$(python3 -c "print($t1 - $t0)")"
}
loop_cat() { for _ in $(seq 1 "$N"); do cat "$1" >/dev/null; done; }
loop_echo() { for i in $(seq 1 "$N"); do sh -c 'echo "$1" > "$2"' sh "$i" "$1"; done; }
loop_curl_get() { for _ in $(seq 1 "$N"); do curl -sf --noproxy "*" "$U" >/dev/null; done; }
loop_curl_put() { for i in $(seq 1 "$N"); do curl -sf --noproxy "*" -X PUT --data-binary "$i" "$U" >/dev/null; done; }

calls() { # MODE: the system calls (or one keep-alive connection) in Python
  python3 - "$1" "$N" "$A" "$configfsd_port" "$H/hello" <<'EOF'
import http.client, os, sys, time
mode, n, attr, port, hello = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
path = "/api/v1/config/02-simple-children/bench/storeme"
c = http.client.HTTPConnection("127.0.0.1", port)
t0 = time.monotonic()
for i in range(n):
    if mode == "read":
        fd = os.open(attr, os.O_RDONLY); os.read(fd, 4096); os.close(fd)
    elif mode == "write":
        fd = os.open(attr, os.O_WRONLY | os.O_TRUNC); os.write(fd, b"%d\n" % i); os.close(fd)
    elif mode == "hello":
        fd = os.open(hello, os.O_RDONLY); os.read(fd, 4096); os.close(fd)
    elif mode == "get":
        c.request("GET", path); c.getresponse().read()
    elif mode == "put":
        c.request("PUT", path, body=b"%d" % i); c.getresponse().read()
print(time.monotonic() - t0)
EOF
}

echo "configfsd mount vs HTTP, $N operations per row, $(nproc) cores, $(date -u +%FT%TZ)"
echo
echo "| operation                                    |   per sec |"
echo "|---|---:|"
if mountpoint -q "$H"; then
  timeit "shell: cat hello (libfuse hello example)" loop_cat "$H/hello"
fi
timeit "shell: cat attribute (mount)" loop_cat "$A"
timeit "shell: curl GET attribute (HTTP)" loop_curl_get
timeit "shell: echo > attribute (mount, durable)" loop_echo "$A"
timeit "shell: curl PUT attribute (HTTP, durable)" loop_curl_put
if mountpoint -q "$H"; then
  rate "calls: open+read+close hello (libfuse hello)" "$(calls hello)"
fi
rate "calls: open+read+close attribute (mount)" "$(calls read)"
rate "calls: GET, one keep-alive connection (HTTP)" "$(calls get)"
rate "calls: open+write+close attribute (mount)" "$(calls write)"
rate "calls: PUT, one keep-alive connection (HTTP)" "$(calls put)"
# wrk, one connection and then 16, GET and durable PUT of the attribute:
# what an HTTP client that keeps its connections gets
command -v wrk >/dev/null || "$here/../../scripts/deps.sh" run wrk >&2
put_lua=$tmp/put.lua
printf 'wrk.method = "PUT"\nwrk.body = "7"\n' >"$put_lua"
wrk_rate() { # CONNECTIONS [wrk args...] -> requests/s (non-2xx: 0)
  local c=$1 out
  shift
  out=$(wrk -t1 -c"$c" -d3s "$@" "$U")
  if grep -q 'Non-2xx' <<<"$out"; then echo 0; return; fi
  awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$out"
}
for c in 1 16; do
  rate_row "wrk: GET attribute, $c conn. (HTTP)" "$(wrk_rate "$c")"
  rate_row "wrk: PUT attribute, $c conn. (HTTP, durable)" \
    "$(wrk_rate "$c" -s "$put_lua")"
done
