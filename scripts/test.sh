#!/usr/bin/env bash
# The README's test command: installs missing system packages, builds
# everything (tests and executables), and runs every test. Exits non-zero when
# any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-system-packages.sh
swift build --build-tests
swift test --skip-build "$@"
