import Testing
@testable import BadgeFlow

/// Every file under Fixtures/payloads/ gets the verdict `verdicts.tsv` records for it.
@Suite struct PayloadFixtureTests {
    struct Verdict: Sendable, CustomTestStringConvertible {
        let file: String
        let kind: String
        let diagnostics: Set<String>
        var testDescription: String { file }
    }

    static let verdicts: [Verdict] = {
        guard let text = try? Fixtures.text("payloads/verdicts.tsv") else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cols.count == 3 else { return nil }
            let diags = cols[2] == "-" ? [] : cols[2].split(separator: " ").map(String.init)
            return Verdict(file: cols[0], kind: cols[1], diagnostics: Set(diags))
        }
    }()

    @Test func theManifestCoversEveryFixture() throws {
        #expect(Self.verdicts.count >= 30)
        let listed = Set(Self.verdicts.map(\.file))
        for folder in ["valid", "invalid", "voip"] {
            for name in try FixtureFolder.list(Fixtures.path("payloads/" + folder)) where !name.hasSuffix(".expected.ndjson") {
                #expect(listed.contains(folder + "/" + name), "\(folder)/\(name) has no verdict")
            }
        }
    }

    @Test(arguments: verdicts)
    func fixtureGetsItsRecordedVerdict(_ v: Verdict) throws {
        let bytes = try Fixtures.bytes("payloads/" + v.file)
        let validator = PayloadValidator()
        var reports: [PayloadReport] = []
        if v.file.hasSuffix(".ndjson") {
            for line in bytes.split(separator: 0x0A) where !line.isEmpty {
                reports.append(Array(line).withUnsafeBytes { validator.validateLine($0) })
            }
        } else {
            reports.append(bytes.withUnsafeBytes { validator.validateLine($0) })
        }
        let report = try #require(reports.first)
        let got = Set(report.diagnostics.map { "\($0.severity.rawValue):\($0.code.rawValue)@\($0.at)" })
        #expect(got == v.diagnostics)
        #expect((report.kind?.rawValue ?? "invalid") == v.kind)
    }
}
