#!/usr/bin/env bash
# The benchmark of the whole stack (issue: performance) in one command:
# builds in release mode, then runs the stack scenarios (ceiling, a, b, d)
# and the ledger alone (c). Prints figures; asserts nothing. Extra arguments
# go to storekeeper-bench-stack (e.g. --rate 2000 --seconds 10).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-system-packages.sh
swift build -c release
echo "== the stack: ceiling, (a), (b), (d) =="
.build/release/storekeeper-bench-stack "$@"
echo
echo "== (c) the ledger alone: recorded transactions per second =="
.build/release/storekeeper-bench-ledger --requests 20000 --transactions 10
