#!/usr/bin/env bash
# Installs the Debian packages Storekeeper builds and runs against, when any
# is missing: libzmq (ZeroMQ), libsqlite3 (the ledger), libcurl (Apple calls),
# PostgreSQL (the ledger on PostgreSQL; its tests start a throw-away server),
# iproute2 (`ss`: a test reads the gateway's listen queue from the kernel).
set -euo pipefail
packages=(libzmq3-dev libsqlite3-dev libcurl4-openssl-dev postgresql iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
