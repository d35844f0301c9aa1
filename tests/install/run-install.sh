#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `meson install` into a DESTDIR, then use what it laid out as a user would:
# the layout (docs/install.md), the built-in defaults following the prefix,
# a module built against the installed configfs.pc, and the installed
# binary serving that module on 127.0.0.1 (a port it picks). TAP output.
# usage: run-install.sh BUILD_ROOT SOURCE_ROOT PREFIX BINDIR LIBDIR INCLUDEDIR
#                       DATADIR MANDIR LOCALSTATEDIR UNITDIR STRIP
# (STRIP: true when meson's strip option is on, the default)
set -uo pipefail
build=$1 src=$2 prefix=$3 bindir=$4 libdir=$5 includedir=$6 datadir=$7
mandir=$8 statedir=$9 unitdir=${10} strip=${11:-true}
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
bindir=$(abs "$bindir") libdir=$(abs "$libdir") includedir=$(abs "$includedir")
datadir=$(abs "$datadir") mandir=$(abs "$mandir") statedir=$(abs "$statedir")

tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
D=$tmp/destdir
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # description, command...
  local d=$1; shift
  if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "$(echo "$out" | tail -5)"; fi
}
bail() { echo "Bail out! $*"; exit 1; }

if ! out=$(meson install -C "$build" --destdir "$D" --no-rebuild --quiet 2>&1); then
  echo "$out" | tail -20 | sed 's/^/# /'
  bail "meson install failed"
fi
ok "meson install --destdir"

# ---- the layout -------------------------------------------------------------
check "bin/configfsd is installed and runs" "$D$bindir/configfsd" --version
# installed stripped (-Dstrip=true, the project's default): no symbol table
symtab() { LC_ALL=C readelf -S "$1" 2>/dev/null | grep -c '\.symtab' || true; }
if [ "$strip" = true ]; then
  if [ "$(symtab "$D$bindir/configfsd")" = 0 ] && [ "$(symtab "$D$bindir/configfsctl")" = 0 ]; then
    ok "configfsd and configfsctl are installed stripped"
  else
    not_ok "configfsd and configfsctl are installed stripped" "$(LC_ALL=C readelf -S "$D$bindir/configfsd" | grep symtab)"
  fi
fi
check "public headers in include/configfs" test -f "$D$includedir/configfs/configfs.h" -a -f "$D$includedir/configfs/cfs.h"
check "compat headers in include/configfsd/compat/linux, not include/linux" \
  test -f "$D$includedir/configfsd/compat/linux/configfs.h" -a ! -e "$D$includedir/linux"
check "configfs.pc in libdir/pkgconfig" test -f "$D$libdir/pkgconfig/configfs.pc"
check "the shipped schemas in share/configfsd/schemas" \
  test -f "$D$datadir/configfsd/schemas/usb-gadget.json" -a ! -e "$D$datadir/configfsd/schemas/README.md"
check "the web UI in share/configfsd/static" test -f "$D$datadir/configfsd/static/index.html"
check "configfsctl's bash completion where bash-completion looks" \
  grep -q "complete -F _configfsctl configfsctl" "$D$datadir/bash-completion/completions/configfsctl"
check "configfsctl's zsh completion where zsh looks" \
  grep -qx "#compdef configfsctl" "$D$datadir/zsh/site-functions/_configfsctl"
check "configfsd(8)" test -f "$D$mandir/man8/configfsd.8"
if [ -f "$src/cli/configfsctl.1" ]; then
  check "configfsctl(1)" test -f "$D$mandir/man1/configfsctl.1"
fi
if [ -d "$src/cli" ]; then
  check "bin/configfsctl" test -x "$D$bindir/configfsctl"
fi
unit=$D$unitdir/configfsd.service
check "configfsd.service" test -f "$unit"
missing=
for line in Type=notify DynamicUser=yes StateDirectory=configfsd ProtectSystem=strict \
            NoNewPrivileges=yes "ExecStart=$bindir/configfsd\$" \
            "Environment=CONFIGFSD_DB=/var/lib/configfsd/configfsd.db"; do
  grep -q "^$line" "$unit" 2>/dev/null || missing="$missing $line"
done
if [ -z "$missing" ]; then ok "the unit is Type=notify and hardened"; else not_ok "the unit is Type=notify and hardened" "missing:$missing"; fi
if command -v systemd-analyze >/dev/null; then
  # the unit as systemd reads it, its ExecStart pointed into the DESTDIR
  mkdir -p "$tmp/unit"
  sed "s|^ExecStart=$bindir/|ExecStart=$D$bindir/|" "$unit" >"$tmp/unit/configfsd.service"
  check "systemd-analyze verify accepts the unit" \
    systemd-analyze verify --man=no "$tmp/unit/configfsd.service"
fi

# ---- defaults follow the prefix ---------------------------------------------
help=$("$D$bindir/configfsd" --help)
for want in "$statedir/lib/configfsd/configfsd.db" "$datadir/configfsd/schemas" "$datadir/configfsd/static"; do
  if grep -qF "$want" <<<"$help"; then ok "built-in default $want"; else not_ok "built-in default $want" "not in --help"; fi
done

# ---- a module built against the installed configfs.pc -----------------------
export PKG_CONFIG_PATH=$D$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
if cflags=$(pkg-config --cflags configfs) && [ -n "$cflags" ]; then
  ok "pkg-config --cflags configfs: $cflags"
else
  not_ok "pkg-config --cflags configfs" "$cflags"
fi
# shellcheck disable=SC2086 # cflags is a list of words
if out=$(cc $cflags -Wall -Wextra -Werror -shared -fPIC -o "$tmp/greeter.so" "$src/tests/install/greeter.c" 2>&1); then
  ok "cc \$(pkg-config --cflags configfs) -shared -fPIC builds a module"
else
  not_ok "cc \$(pkg-config --cflags configfs) -shared -fPIC builds a module" "$out"
  bail "no module to load"
fi
# and nothing but the installed headers: the source tree is not on the path
if grep -q -- "-I$src" <<<"$cflags"; then not_ok "cflags name only the DESTDIR" "$cflags"; else ok "cflags name only the DESTDIR"; fi

# ---- the installed binary serves it -----------------------------------------
log=$tmp/configfsd.log
"$D$bindir/configfsd" --listen 127.0.0.1:0 --db "$tmp/configfsd.db" \
  --module "$tmp/greeter.so" --schema-dir "$D$datadir/configfsd/schemas" \
  --static-dir "$D$datadir/configfsd/static" --log-file "$log" </dev/null &
pid=$!
port=
for _ in $(seq 1 100); do
  port=$(grep -o '(port [0-9]*)' "$log" 2>/dev/null | grep -o '[0-9]*')
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { sed 's/^/# /' "$log"; bail "the installed configfsd did not start"; }
ok "the installed configfsd starts with --module (port $port)"
api=http://127.0.0.1:$port/api/v1
if grep -q '"install-greeter"' <<<"$(curl -sf "$api/config/")"; then ok "the module's subsystem is served"; else not_ok "the module's subsystem is served" "$(curl -s "$api/config/")"; fi
curl -sf -X POST -H 'Content-Type: application/json' -d '{"name":"g1"}' "$api/config/install-greeter" >/dev/null
got=$(curl -sf "$api/config/install-greeter/g1/greeting")
if [ "$got" = hello ]; then ok "mkdir runs the module's make_item"; else not_ok "mkdir runs the module's make_item" "greeting: '$got'"; fi
curl -sf -X PUT --data-binary 'bonjour' "$api/config/install-greeter/g1/greeting" >/dev/null
got=$(curl -sf "$api/config/install-greeter/g1/greeting")
if [ "$got" = bonjour ]; then ok "store and show go through the module"; else not_ok "store and show go through the module" "greeting: '$got'"; fi
if grep -q '"usb_gadget"' <<<"$(curl -sf "$api/config/")"; then ok "the installed schemas are served"; else not_ok "the installed schemas are served"; fi
if grep -qi '<html' <<<"$(curl -sf "http://127.0.0.1:$port/")"; then ok "the installed web UI is served"; else not_ok "the installed web UI is served"; fi
kill -TERM "$pid"
status=
for _ in $(seq 1 100); do
  kill -0 "$pid" 2>/dev/null || { wait "$pid"; status=$?; break; }
  sleep 0.1
done
pid_left=$pid pid=
if [ "$status" = 0 ]; then ok "SIGTERM stops it with status 0"; else pid=$pid_left; not_ok "SIGTERM stops it with status 0" "status '$status'"; fi

echo "1..$n"
[ "$failed" -eq 0 ]
