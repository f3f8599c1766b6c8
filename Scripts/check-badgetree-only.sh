#!/usr/bin/env bash
# Builds a throwaway app that depends on this checkout by path and uses only the BadgeTree
# product, runs it, and checks with ldd that its binary links neither json-c nor mimalloc:
# the core an iOS app embeds must never grow a C dependency.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/badgetree-only.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/TreeOnly"
cat > "$work/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "TreeOnly",
    dependencies: [.package(path: "$repo")],
    targets: [
        .executableTarget(name: "TreeOnly", dependencies: [.product(name: "BadgeTree", package: "$(basename "$repo")")]),
    ]
)
MANIFEST
cat > "$work/Sources/TreeOnly/main.swift" <<'SWIFT'
import BadgeTree

let center = BadgeCenter()
_ = try center.increment("root.chat.alice", by: 2)
_ = try center.set("root.news")
let root = center.state(of: "root")
print("root count \(root.count) show \(root.show)")
guard root.count == 2, root.show else { fatalError("unexpected tree state") }
SWIFT
echo "check-badgetree-only: building a package that uses only the BadgeTree product"
swift build --package-path "$work" --scratch-path "$work/.build" 2>&1 | tail -n 3
bin="$work/.build/debug/TreeOnly"
"$bin"
echo "check-badgetree-only: ldd $bin"
ldd "$bin" | sed 's/^/  /'
if ldd "$bin" | grep -Eiq 'json-c|mimalloc'; then
  echo "check-badgetree-only: FAIL: the BadgeTree-only binary links json-c or mimalloc" >&2
  exit 1
fi
echo "check-badgetree-only: ok: no json-c, no mimalloc"
