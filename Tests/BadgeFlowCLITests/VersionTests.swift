import BadgeFlowTestSupport
import Foundation
import Testing

/// `badgeflow --version` prints the release README tells packages to depend on.
@Suite struct VersionTests {
    /// The `from:` version on README's `.package(url: …BadgeFlow…, from: "X")` line.
    private func readmeVersion() throws -> String? {
        let readme = try String(contentsOfFile: CLI.packageRoot + "/README.md", encoding: .utf8)
        for line in readme.split(separator: "\n") where line.contains(".package(url:") && line.contains("BadgeFlow") {
            guard let from = line.range(of: #"from: ""#) else { continue }
            let rest = line[from.upperBound...]
            if let quote = rest.firstIndex(of: "\"") { return String(rest[..<quote]) }
        }
        return nil
    }

    @Test func versionFlagPrintsTheReadmeRelease() async throws {
        let version = try #require(try readmeVersion())
        let r = try await CLI.run(["--version"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("badgeflow \(version) ("), "got \(r.stdout)")
    }
}
