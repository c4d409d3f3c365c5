#!/usr/bin/env bash
# Fuzzes the two parsers of hostile input with libFuzzer: Apple's answers
# (JSONValueParser) and clients' receipts (ReceiptDataNormalizer). Each is
# built with swiftc from its own source files (they are pure), with
# AddressSanitizer, and runs for SECONDS (default 30) from the corpus in
# Fuzz/corpus; a crash, a hang over 5 s or more than 1 GiB of memory fails.
# New inputs go to a scratch folder: the corpus in the repository changes only
# when someone merges them in (-merge=1).
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

build() {  # name, sources...
  local name="$1"; shift
  swiftc -sanitize=fuzzer,address -parse-as-library -O -I "$work" "$@" "Fuzz/$name/main.swift" -o "$work/fuzz-$name" 2>&1 \
    | { grep -v "ld.gold: warning: Cannot export local symbol" || true; }
}

# The gateway's intake errors carry a FailureCode: the one file of Contracts they need, as a module of its own.
swiftc -sanitize=address -parse-as-library -O -module-name Contracts -emit-module -emit-module-path "$work/Contracts.swiftmodule" \
  -emit-library -static -o "$work/libContracts.a" Shared/Contracts/FailureCode.swift

build JSONValueParser Shared/AppleFormats/JSON/JSONValueParser.swift Shared/AppleFormats/JSON/JSONValue.swift \
  Shared/AppleFormats/JSON/JSONObject.swift \
  Shared/AppleFormats/JSON/JSONPlainRun.swift
build ReceiptDataNormalizer Services/Gateway/Sources/Intake/ReceiptDataNormalizer.swift Services/Gateway/Sources/Intake/ReceiptEnds.swift \
  Services/Gateway/Sources/Intake/Base64AlphabetScan.swift \
  Services/Gateway/Sources/Intake/IntakeError.swift -L "$work" -lContracts

for target in JSONValueParser:json ReceiptDataNormalizer:receipt; do
  name="${target%%:*}"; corpus="Fuzz/corpus/${target##*:}"
  mkdir -p "$work/new-$name"
  echo "== fuzzing $name for ${seconds}s"
  "$work/fuzz-$name" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 -max_len=65536 \
    -artifact_prefix="$work/" -print_final_stats=1 "$work/new-$name" "$corpus" 2>&1 | tail -40
done
