#!/usr/bin/env bash
# Builds a throwaway app that depends on this checkout by path and uses only the BadgeTree
# product, runs it, and checks with ldd that its binary links neither json-c, SQLite, RocksDB nor mimalloc:
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
import Foundation

/// An app type named like one of the library's: `BadgeTree::Outcome` still names the library's.
struct Outcome { var note = "the app's own" }

let center = BadgeCenter()
let first: BadgeTree::Outcome = try center.increment("root.chat.alice", by: 120)
_ = try center.set("root.news")
let root = center.state(of: "root")
print("root count \(root.count) show \(root.show) badge \(root.badgeValue ?? "nil") (\(Outcome().note) Outcome beside \(first.changes.count) changes)")
guard root.count == 120, center.state(of: "root.chat").badgeValue == "99+", center.state(of: "root.news").badgeValue == "" else {
    fatalError("unexpected badge values")
}

// A node: a path checked once, whose changes take no `try`.
let carol = try center.root.child("chat").child("carol")
carol.increment()
guard center.state(of: "root.chat.carol").count == 1, carol.clear().decrement?.by == 1 else {
    fatalError("a node's changes did not reach the center")
}

// The app and its extension share a file under a lock.
let dir = FileManager.default.temporaryDirectory.appendingPathComponent("treeonly-\(getpid())")
try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: dir) }
let file = dir.appendingPathComponent("badges.json")
let total = try BadgeCenter.withSharedFile(file) { shared in
    try shared.increment(BadgePath.root.child("chat").child("bob@mail.com").rawValue)
    return shared.total
}
guard total == 1 else { fatalError("withSharedFile: total \(total), not 1") }

// An @Observable model follows the center on the main actor.
let model = try center.model(for: "root.chat")
_ = try center.clear("root.chat.alice")
for _ in 0..<1000 where model.state.badgeValue != nil { await Task.yield() }
guard model.state.badgeValue == nil else { fatalError("the model did not follow the center") }
try await checkSnippets(center: center, badgesURL: file)
print("badgeValue, withSharedFile and a model: ok")
SWIFT
# Every Swift snippet of the app articles that imports no Apple UI framework, compiled as the
# body of a function (the names the articles take as given are its parameters).
articles=("$repo/Sources/BadgeTree/BadgeTree.docc/EmbeddingTheTree.md" "$repo/Sources/BadgeTree/BadgeTree.docc/SharedFileFormat.md")
awk '
  BEGIN { n = 0 }
  /^```swift$/ { inside = 1; body = ""; next }
  /^```$/ && inside {
    inside = 0
    if (body ~ /import (UIKit|SwiftUI)/ || body ~ /Package.swift/) next
    n++
    printf "@MainActor func snippet%d(center: BadgeCenter, badgesURL: URL, settings: BadgeTree.Configuration, api: ServerAPI) async throws {\n%s}\n", n, body
    next
  }
  inside { body = body $0 "\n" }
  END { print "// snippets: " n }
' "${articles[@]}" > "$work/Sources/TreeOnly/Snippets.swift"
cat >> "$work/Sources/TreeOnly/Snippets.swift" <<'SWIFT'
import BadgeTree
import Foundation

/// The server the article's snippets call.
struct ServerAPI: Sendable {
    func decrementBadge(by: Int, requestID: UInt64) async throws {}
    func decrementBadge(by: Int, requestID: String) async throws {}
    func send(_ line: String) async throws {}
}

/// Runs nothing: the snippets only have to compile.
@MainActor func checkSnippets(center: BadgeCenter, badgesURL: URL) async throws {}
SWIFT
echo "check-badgetree-only: $(grep -c '^@MainActor func snippet' "$work/Sources/TreeOnly/Snippets.swift") snippets of EmbeddingTheTree.md and SharedFileFormat.md compiled"
echo "check-badgetree-only: building a package that uses only the BadgeTree product"
swift build --package-path "$work" --scratch-path "$work/.build" 2>&1 | tail -n 3
bin="$work/.build/debug/TreeOnly"
"$bin"
echo "check-badgetree-only: ldd $bin"
ldd "$bin" | sed 's/^/  /'
if ldd "$bin" | grep -Eiq 'json-c|sqlite|rocksdb|mimalloc'; then
  echo "check-badgetree-only: FAIL: the BadgeTree-only binary links json-c, SQLite, RocksDB or mimalloc" >&2
  exit 1
fi
# The server (Integrations/serve, a package of its own) must add nothing an app resolves.
deps=$(swift package --package-path "$work" --scratch-path "$work/.build" show-dependencies --format flatlist 2>/dev/null)
echo "check-badgetree-only: resolved packages: $(echo $deps)"
if echo "$deps" | grep -Eiq 'hummingbird|swift-nio|service-lifecycle'; then
  echo "check-badgetree-only: FAIL: a BadgeTree-only app resolves a server package" >&2
  exit 1
fi
echo "check-badgetree-only: ok: no json-c, no SQLite, no RocksDB, no mimalloc, no server package"
