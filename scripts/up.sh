#!/usr/bin/env bash
# The README's run command: installs missing system packages, builds in
# release mode, and runs a whole local stack (ledger, two verifiers, gateway)
# against the local App Store simulator. Extra arguments go to `storekeeper up`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-system-packages.sh
swift build -c release
exec .build/release/storekeeper up --sim "$@"
