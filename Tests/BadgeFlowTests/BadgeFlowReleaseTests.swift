import Testing
import BadgeFlow

/// README's and the docs' "add to your package" lines name the release
/// `BadgeFlowRelease.version` says.
@Suite struct BadgeFlowReleaseTests {
    /// The repository root, found from this file's location.
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        // …/Tests/BadgeFlowTests/BadgeFlowReleaseTests.swift → …
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// The `from:` versions of the `.package(url: …BadgeFlow…, from: "X")` lines in `text`.
    static func packageLineVersions(in text: String) -> [String] {
        let marker = Array(#"from: ""#.utf8)
        var versions: [String] = []
        for line in text.split(separator: "\n") where line.contains(".package(url:") && line.contains("BadgeFlow") {
            let bytes = Array(line.utf8)
            guard bytes.count > marker.count else { continue }
            for i in 0...(bytes.count - marker.count) where Array(bytes[i..<(i + marker.count)]) == marker {
                let rest = bytes[(i + marker.count)...]
                if let quote = rest.firstIndex(of: UInt8(ascii: "\"")) {
                    versions.append(String(decoding: bytes[(i + marker.count)..<quote], as: UTF8.self))
                }
                break
            }
        }
        return versions
    }

    @Test func versionIsASemanticVersion() {
        let parts = BadgeFlowRelease.version.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) })
    }

    @Test func readmePackageLineNamesThisRelease() throws {
        let versions = Self.packageLineVersions(in: try FileIO.readString(Self.root + "/README.md"))
        #expect(!versions.isEmpty, "README has no .package(url: …BadgeFlow…, from: \"X\") line")
        for v in versions { #expect(v == BadgeFlowRelease.version) }
    }

    @Test func embeddingArticleNamesThisRelease() throws {
        let article = Self.root + "/Sources/BadgeTree/BadgeTree.docc/EmbeddingTheTree.md"
        let versions = Self.packageLineVersions(in: try FileIO.readString(article))
        #expect(!versions.isEmpty)
        for v in versions { #expect(v == BadgeFlowRelease.version) }
    }
}
