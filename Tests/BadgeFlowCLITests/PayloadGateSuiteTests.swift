import BadgeFlowTestSupport
import Foundation
import Testing

/// The payload gate on a template suite of every push type (Fixtures/gate-suite), the
/// `validate.json` sidecar, and JUnit files that are never empty when a run fails, read back
/// by a real consumer (Python's junitparser, which `make test` installs when missing).
@Suite struct PayloadGateSuiteTests {
    /// Runs a program (not badgeflow) and returns its status and stdout.
    private func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [program] + arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    @Test func theSuiteCountsNoMissedDefectAndNoFalseError() throws {
        let r = try run("python3", [CLI.packageRoot + "/Scripts/gate-suite.py", CLI.executable])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        // At least 60 valid payloads over every push type and 40 planted defects.
        let numbers = r.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count >= 6, "\(r.stdout)")
        if numbers.count >= 6 {
            #expect(numbers[0] >= 60 && numbers[1] == 10 && numbers[2] == 0, "\(r.stdout)")
            #expect(numbers[3] >= 40 && numbers[4] == numbers[3] && numbers[5] == 0, "\(r.stdout)")
        }
    }

    @Test func theSuitePassesStrictWithItsSidecars() async throws {
        let r = try await CLI.run(["validate", "--strict", CLI.fixture("gate-suite/valid")])
        #expect(r.status == 0, "\(r.stdout)")
        // The allowed warning is shown, and says who allowed it.
        #expect(r.stdout.contains("warning[unknown-aps-key]") && r.stdout.contains("(allowed by "), "\(r.stdout)")
    }

    @Test func aSidecarDeclaresPushTypesAndAllowancesNearestWins() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(
                #"{"push-types":{"voip-*.json":"voip","*":"alert"},"allowed-warnings":{"*":["empty-alert"]}}"#, dir + "/validate.json")
            try writeFile(#"{"push-types":{"*.json":"background"}}"#, dir + "/silent/validate.json")
            // 4.6 KB VoIP payload: valid under voip, too large under alert.
            let big = #"{"aps":{},"caller":""# + String(repeating: "x", count: 4600) + "\"}"
            try writeFile(big, dir + "/calls/voip-big.json")
            try writeFile(#"{"aps":{"content-available":1}}"#, dir + "/silent/sync.json")
            try writeFile(#"{"aps":{"alert":""}}"#, dir + "/empty.json")
            let r = try await CLI.run(["validate", "--strict", "--json", "--push-type", "alert", dir])
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
            let rows = r.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let byName = Dictionary(
                rows.map { ((($0["file"] as? String) ?? "") as NSString).lastPathComponent }.enumerated().map {
                    ($0.element, rows[$0.offset])
                },
                uniquingKeysWith: { a, _ in a })
            #expect(byName["voip-big.json"]?["push-type"] as? String == "voip")
            #expect(byName["sync.json"]?["push-type"] as? String == "background")
            #expect(byName["sync.json"]?["push-type-from"] as? String == dir + "/silent/validate.json")
            #expect(byName["empty.json"]?["allowed-warnings"] as? [String] == ["empty-alert"])
            // Without the sidecar the 4.6 KB VoIP payload fails as too large.
            try FileManager.default.removeItem(atPath: dir + "/validate.json")
            let without = try await CLI.run(["validate", "--strict", dir + "/calls"])
            #expect(without.status == 1 && without.stdout.contains("payload-too-large"))
        }
    }

    @Test func aBrokenSidecarIsAnError() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"push-types":{"*":"banana"}}"#, dir + "/validate.json")
            try writeFile(#"{"aps":{"alert":"a"}}"#, dir + "/a.json")
            let r = try await CLI.run(["validate", "--junit", dir + "/v.xml", dir])
            #expect(r.status == 4)
            #expect(r.stderr.contains("\"banana\" is not an apns-push-type"))
        }
    }

    // MARK: JUnit read back by junitparser

    /// junitparser's reading of `file`: totals, then one line per case:
    /// `NAME|passed or failure message`.
    private func junitparser(_ file: String) throws -> [String] {
        let script = """
            import sys
            from junitparser import JUnitXml
            xml = JUnitXml.fromfile(sys.argv[1])
            cases = [c for s in xml for c in s]
            print(f"tests={len(cases)} failures={sum(1 for c in cases if not c.is_passed)}")
            for s in xml:
                props = {p.name: p.value for p in s.properties()}
                for c in s:
                    why = "passed" if c.is_passed else " ".join((r.message or "") for r in c.result)
                    print(f"{c.name}|{why}|{props.get('push-type', '')}")
            """
        let r = try run("python3", ["-c", script, file])
        #expect(r.status == 0, "junitparser could not read \(file): \(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test func validateWritesJUnitForEveryFailureMode() async throws {
        try await TemporaryFolder.with { dir in
            // A mistyped folder.
            let missing = try await CLI.run(["validate", "--junit", dir + "/m.xml", dir + "/templtes"])
            #expect(missing.status == 4)
            let m = try junitparser(dir + "/m.xml")
            #expect(m.first == "tests=1 failures=1", "\(m)")
            #expect(m.dropFirst().first?.contains("No such file") == true, "\(m)")
            // An empty folder (hidden files only), with --strict.
            try writeFile("{}", dir + "/empty/.hidden.json")
            let empty = try await CLI.run(["validate", "--strict", "--junit", dir + "/e.xml", dir + "/empty"])
            #expect(empty.status == 1)
            let e = try junitparser(dir + "/e.xml")
            #expect(e.first == "tests=1 failures=1" && e.dropFirst().first?.contains("holds no") == true, "\(e)")
            // Nothing on stdin, with --strict.
            let none = try await CLI.run(["validate", "--strict", "--junit", dir + "/n.xml"], input: "")
            #expect(none.status == 1)
            #expect(try junitparser(dir + "/n.xml").dropFirst().first?.contains("no payloads checked") == true)
            // A missing file among good ones: every file named is present.
            try writeFile(#"{"aps":{"alert":"a"}}"#, dir + "/ok.json")
            let some = try await CLI.run(["validate", "--junit", dir + "/s.xml", dir + "/ok.json", dir + "/gone.json"])
            #expect(some.status == 4)
            let s = try junitparser(dir + "/s.xml")
            #expect(s.first == "tests=2 failures=1", "\(s)")
            #expect(s.contains { $0.hasPrefix(dir + "/ok.json:1|passed") }, "\(s)")
            #expect(s.contains { $0.hasPrefix(dir + "/gone.json|") && $0.contains("No such file") }, "\(s)")
            // An invalid payload and, with --strict, a warning not allowed; the push type shown.
            try writeFile(#"{"push-types":{"*":"voip"}}"#, dir + "/t/validate.json")
            try writeFile(#"{"aps":{"alert":"ring"}}"#, dir + "/t/call.json")
            try writeFile(#"{"aps":{"badge":"9"}}"#, dir + "/t/bad.json")
            let t = try await CLI.run(["validate", "--strict", "--junit", dir + "/t.xml", dir + "/t"])
            #expect(t.status == 1)
            let tx = try junitparser(dir + "/t.xml")
            #expect(tx.first == "tests=2 failures=2", "\(tx)")
            #expect(tx.contains { $0.contains("call.json:1|push-type-mismatch") && $0.hasSuffix("|voip") }, "\(tx)")
            #expect(tx.contains { $0.contains("bad.json:1|wrong-type") }, "\(tx)")
        }
    }

    @Test func batchWritesJUnitWhenThereIsNothingToRun() async throws {
        try await TemporaryFolder.with { dir in
            let missing = try await CLI.run(["batch", "--strict", "--junit", dir + "/m.xml", dir + "/fixtres"])
            #expect(missing.status != 0)
            let m = try junitparser(dir + "/m.xml")
            #expect(m.first == "tests=1 failures=1" && m.dropFirst().first?.contains("no such file") == true, "\(m)")
            try writeFile("{}", dir + "/hidden/.x.json")
            let hidden = try await CLI.run(["batch", "--strict", "--junit", dir + "/h.xml", dir + "/hidden"])
            #expect(hidden.status == 1)
            let h = try junitparser(dir + "/h.xml")
            #expect(h.first == "tests=1 failures=1" && h.dropFirst().first?.contains("no inputs") == true, "\(h)")
        }
    }

    // MARK: batch

    @Test func folderSettingsApplyToSubfoldersAndFailuresNameTheRules() async throws {
        try await TemporaryFolder.with { dir in
            let rules = try String(contentsOfFile: CLI.fixture("rules/default.json"), encoding: .utf8)
            try writeFile(rules, dir + "/suite/rules.json")
            try writeFile(#"{"expected-errors":["wrong-type"]}"#, dir + "/suite/batch.json")
            let line = #"{"op":"push","account":"a","payload":{"aps":{"badge":"x"}}}"# + "\n"
            try writeFile(line, dir + "/suite/deep/sub/x.ndjson")
            // Inherited expected-errors: the undeclared-error check passes in the subfolder.
            let created = try await CLI.run(["batch", "--strict", "--update", dir + "/suite"])
            #expect(created.status == 0, "\(created.stdout)\(created.stderr)")
            try writeFile(#"{"seq":1}"# + "\n", dir + "/suite/deep/sub/x.expected.ndjson")
            let r = try await CLI.run(["batch", "--strict", "--junit", dir + "/b.xml", dir + "/suite"])
            #expect(r.status == 1)
            #expect(r.stdout.contains("rules: \(dir)/suite/rules.json"), "\(r.stdout)")
            let j = try junitparser(dir + "/b.xml")
            #expect(j.first == "tests=1 failures=1", "\(j)")
            let xml = try String(contentsOfFile: dir + "/b.xml", encoding: .utf8)
            #expect(xml.contains(#"<property name="rules" value="\#(dir)/suite/rules.json"/>"#), "\(xml)")
        }
    }

    @Test func aSidecarNamingAMissingStateIsAnError() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"state":"start.state.json"}"#, dir + "/f/x.batch.json")
            try writeFile(#"{"op":"push","account":"a","payload":{"aps":{"badge":1}}}"# + "\n", dir + "/f/x.ndjson")
            let r = try await CLI.run(["batch", "--update", dir + "/f"])
            #expect(r.status == 1)
            #expect(r.stdout.contains("start.state.json does not exist"), "\(r.stdout)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/f/x.expected.ndjson"))
        }
    }

    @Test func aCRLFExpectationIsComparedAsLFAndSaysSo() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"op":"push","account":"a","payload":{"aps":{"badge":1}}}"# + "\n", dir + "/f/x.ndjson")
            #expect(try await CLI.run(["batch", "--update", dir + "/f"]).status == 0)
            let lf = try String(contentsOfFile: dir + "/f/x.expected.ndjson", encoding: .utf8)
            try writeFile(lf.replacing("\n", with: "\r\n"), dir + "/f/x.expected.ndjson")
            let r = try await CLI.run(["batch", "--strict", dir + "/f"])
            #expect(r.status == 0, "\(r.stdout)")
            #expect(r.stdout.contains("has CRLF line endings; compared as LF"), "\(r.stdout)")
        }
    }

    @Test func aJSONFileThatIsNoFixtureIsNamedAsSuch() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"title":"Templates","owner":"qa"}"#, dir + "/f/README.json")
            let r = try await CLI.run(["batch", "--strict", dir + "/f"])
            #expect(r.status == 1)
            #expect(r.stdout.contains("README.json: not a fixture"), "\(r.stdout)")
            #expect(!r.stdout.contains("expected-errors"), "\(r.stdout)")
        }
    }
}
