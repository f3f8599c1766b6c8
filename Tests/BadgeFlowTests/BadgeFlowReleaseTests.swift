import Testing
import BadgeFlow

/// README's "Add to your package" line names the release `BadgeFlowRelease.version` says.
@Suite struct BadgeFlowReleaseTests {
    /// The `from:` versions of README's `.package(url: …BadgeFlow…, from: "X")` lines.
    static func readmeVersions() throws -> [String] {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        // …/Tests/BadgeFlowTests/BadgeFlowReleaseTests.swift → …/README.md
        parts.removeLast(3)
        let readme = try FileIO.readString(parts.joined(separator: "/") + "/README.md")
        var versions: [String] = []
        for line in readme.split(separator: "\n") where line.contains(".package(url:") && line.contains("BadgeFlow") {
            guard let from = line.range(of: #"from: ""#) else { continue }
            let rest = line[from.upperBound...]
            if let quote = rest.firstIndex(of: "\"") { versions.append(String(rest[..<quote])) }
        }
        return versions
    }

    @Test func versionIsSemanticVersion() {
        let parts = BadgeFlowRelease.version.split(separator: ".")
        #expect(parts.count == 3)
        #expect(parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) })
    }

    @Test func readmePackageLineNamesThisVersion() throws {
        let versions = try Self.readmeVersions()
        #expect(!versions.isEmpty, "README has no .package(url: …BadgeFlow…, from: \"X\") line")
        for v in versions { #expect(v == BadgeFlowRelease.version) }
    }
}
