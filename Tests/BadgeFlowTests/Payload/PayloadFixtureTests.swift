import Testing
@testable import BadgeFlow

/// Every file under Fixtures/payloads/ gets the verdict recorded for it: `verdicts.tsv` for the
/// hand-written fixtures, `corpus/SOURCES.tsv` for the payloads copied from other APNs
/// libraries' test suites and Apple's documentation (which also names where each came from).
@Suite struct PayloadFixtureTests {
    struct Verdict: Sendable, CustomTestStringConvertible {
        let file: String
        let kind: String
        let diagnostics: Set<String>
        /// Where a corpus payload came from; nil for the hand-written fixtures.
        let source: String?
        var testDescription: String { file }
    }

    /// The rows of a manifest: `file kind diagnostics [source example]`, tab-separated, one header line.
    static func manifest(_ relative: String, sourced: Bool) -> [Verdict] {
        guard let text = try? Fixtures.text(relative) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cols.count == (sourced ? 5 : 3) else { return nil }
            let diags = cols[2] == "-" ? [] : cols[2].split(separator: " ").map(String.init)
            return Verdict(file: cols[0], kind: cols[1], diagnostics: Set(diags), source: sourced ? cols[3] : nil)
        }
    }

    static let handWritten = manifest("payloads/verdicts.tsv", sourced: false)
    static let corpus = manifest("payloads/corpus/SOURCES.tsv", sourced: true)
    static let verdicts = handWritten + corpus

    @Test func theManifestsCoverEveryFixture() throws {
        #expect(Self.handWritten.count >= 30)
        #expect(Self.corpus.count >= 60)
        let listed = Set(Self.verdicts.map(\.file))
        #expect(listed.count == Self.verdicts.count, "a file is listed twice")
        for folder in ["valid", "invalid", "voip", "corpus/valid", "corpus/invalid"] {
            // Expectations and batch sidecars (`batch.json`, `NAME.batch.json`) are not payloads.
            for name in try FixtureFolder.list(Fixtures.path("payloads/" + folder))
            where !name.hasSuffix(".expected.ndjson") && !name.hasSuffix("batch.json") {
                #expect(listed.contains(folder + "/" + name), "\(folder)/\(name) has no verdict")
            }
        }
    }

    @Test func everyCorpusPayloadNamesItsSource() {
        for v in Self.corpus {
            let source = v.source ?? ""
            #expect(
                source.hasPrefix("github.com/") || source.hasPrefix("https://developer.apple.com/"),
                "\(v.file): \(source)")
        }
    }

    @Test(arguments: verdicts)
    func fixtureGetsItsRecordedVerdict(_ v: Verdict) throws {
        let report = try #require(try Self.reports(v.file).first)
        let got = Set(report.diagnostics.map { "\($0.severity.rawValue):\($0.code.rawValue)@\($0.at)" })
        #expect(got == v.diagnostics)
        #expect((report.kind?.rawValue ?? "invalid") == v.kind)
        // The folder says the verdict too: valid/ holds usable payloads, invalid/ the others.
        if v.file.contains("invalid/") { #expect(!report.isValid) } else if v.file.contains("valid/") { #expect(report.isValid) }
    }

    /// What `badgeflow validate` checks for a file: a valid corpus payload passes (exit 0) and
    /// no key in it is called unknown — every key they use is one Apple documents.
    @Test(arguments: corpus.filter { $0.file.hasPrefix("corpus/valid/") })
    func realPayloadsPassWithoutUnknownKeyWarnings(_ v: Verdict) throws {
        for report in try Self.reports(v.file) {
            #expect(report.isValid)
            #expect(!report.diagnostics.contains { $0.code == .unknownApsKey }, "\(report.diagnostics)")
        }
    }

    /// The reports for a fixture file, as `badgeflow validate` makes them: one for a `.json`
    /// file, one per line for an `.ndjson` file.
    static func reports(_ file: String) throws -> [PayloadReport] {
        let bytes = try Fixtures.bytes("payloads/" + file)
        let validator = PayloadValidator()
        if file.hasSuffix(".ndjson") {
            return bytes.split(separator: 0x0A).filter { !$0.isEmpty }.map { line in
                Array(line).withUnsafeBytes { validator.validateLine($0) }
            }
        }
        return [bytes.withUnsafeBytes { validator.validateLine($0) }]
    }
}
