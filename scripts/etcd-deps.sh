#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install Debian's etcd (etcd-server 3.4), the engine of the cluster suite
# (tests/cluster, docs/cluster.md), if it is missing. Idempotent and
# serialised with flock. The tests start their own members on free
# loopback ports; the package's system service is not wanted, so it is
# stopped and disabled where systemd runs.
set -euo pipefail
if command -v etcd >/dev/null 2>&1; then
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
exec 9>"${TMPDIR:-/tmp}/configfsd-etcd-deps.lock"
flock 9
if command -v etcd >/dev/null 2>&1; then
  exit 0
fi
echo "etcd-deps: installing etcd-server" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
if [ -d /run/systemd/system ]; then
  "${sudo_cmd[@]}" systemctl disable --now etcd >/dev/null 2>&1 || true
fi
command -v etcd >/dev/null
