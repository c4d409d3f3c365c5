#!/usr/bin/env bash
# The benchmark of the whole stack (issue: performance) in one command:
# builds in release mode, then runs the stack scenarios (ceiling, a, b, d)
# and the ledger alone (c). Prints figures; asserts nothing. Extra arguments
# go to storekeeper-bench-stack (e.g. --rate 2000 --seconds 10).
#
# --peers (issue 20): instead, Storekeeper against the servers people write
# instead (bench/peers: an asyncio server and Flask + InAppPy), set up in a
# virtual environment (.build/peers-venv) from PyPI, alternating, three rounds.
#
# --instructions (issue 20): instead, the instructions each verification costs,
# counted by callgrind (bench/instructions/count.py; it takes the other flags).
set -euo pipefail
cd "$(dirname "$0")/.."
peers=false
instructions=false
arguments=()
for argument in "$@"; do
    case "$argument" in
        --peers) peers=true ;;
        --instructions) instructions=true ;;
        *) arguments+=("$argument") ;;
    esac
done
scripts/install-system-packages.sh
swift build -c release
if $instructions; then
    command -v valgrind >/dev/null || { apt-get update && apt-get install -y valgrind; }
    exec python3 bench/instructions/count.py ${arguments[@]+"${arguments[@]}"}
fi
if $peers; then
    venv=.build/peers-venv
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r bench/peers/requirements.txt
    echo "== Storekeeper against the peers (issue 20) =="
    PATH="$PWD/$venv/bin:$PATH" .build/release/storekeeper-bench-stack --peers "$PWD/bench/peers" ${arguments[@]+"${arguments[@]}"}
    exit 0
fi
echo "== the stack: ceiling, (a), (b), (d) =="
.build/release/storekeeper-bench-stack ${arguments[@]+"${arguments[@]}"}
echo
echo "== (c) the ledger alone: recorded transactions per second =="
.build/release/storekeeper-bench-ledger --requests 20000 --transactions 10
