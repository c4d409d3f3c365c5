#!/usr/bin/env bash
# Regenerates Shared/Contracts/Generated/*.pb.swift from Shared/Proto with
# Debian's protoc and swift-protobuf's protoc-gen-swift. The output is
# committed, so builds and CI need neither (swift-protobuf's build plugin
# would add ~7 minutes to every clean build).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v protoc >/dev/null || { echo "protoc missing: apt-get install -y protobuf-compiler" >&2; exit 1; }
swift build --product protoc-gen-swift
plugin="$(swift build --show-bin-path)/protoc-gen-swift"
out=Shared/Contracts/Generated
rm -f "$out"/*.pb.swift
protoc --plugin=protoc-gen-swift="$plugin" --swift_out="$out" \
  --swift_opt=Visibility=Public --swift_opt=FileNaming=DropPath \
  -I Shared/Proto Shared/Proto/storekeeper/v1/*.proto
echo "generated: $(ls "$out" | tr '\n' ' ')"
