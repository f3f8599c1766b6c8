import BadgeFlowTestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `batch` as a release gate (the RunningBatchGoldens article): `--strict`, colliding inputs, `--out` containment,
/// sidecar options, reviewable failures and `--junit FILE`.
@Suite struct BatchGateTests {
    private let push = #"{"aps":{"alert":"hi","thread-id":"a"}}"# + "\n"

    /// A folder with `ok.ndjson` and its up-to-date expectation.
    private func passingFolder(_ dir: String) throws {
        try writeFile(push, dir + "/ok.ndjson")
        #expect(try CLI.run(["batch", "--update", dir]).status == 0)
    }

    @Test func aDeletedExpectationFailsOnlyInStrictMode() async throws {
        try await TemporaryFolder.with { dir in
            try passingFolder(dir)
            try writeFile(push, dir + "/expiry.ndjson")
            #expect(try await CLI.run(["batch", dir]).status == 0)
            let r = try await CLI.run(["batch", "--strict", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("NEW   \(dir)/expiry.ndjson  (no \(dir)/expiry.expected.ndjson; --strict needs one)"))
        }
    }

    @Test func aLeftoverExpectationFailsOnlyInStrictMode() async throws {
        try await TemporaryFolder.with { dir in
            try passingFolder(dir)
            try FileManager.default.copyItem(atPath: dir + "/ok.expected.ndjson", toPath: dir + "/gone.expected.ndjson")
            let loose = try await CLI.run(["batch", dir])
            #expect(loose.status == 0)
            #expect(loose.stdout.contains("ORPHAN \(dir)/gone.expected.ndjson: no input"))
            let r = try await CLI.run(["batch", "--strict", dir])
            #expect(r.status == 1)
            #expect(r.stdout.hasSuffix("1 file: 1 passed, 0 failed, 1 expectation without input\n"))
        }
    }

    @Test func anEmptyFolderFailsInStrictMode() async throws {
        try await TemporaryFolder.with { dir in
            #expect(try await CLI.run(["batch", dir]).status == 0)
            let r = try await CLI.run(["batch", "--strict", dir])
            #expect(r.status == 1)
            #expect(r.stderr.contains("no inputs"))
        }
    }

    @Test func aTypoFrozenIntoAGoldenFailsInStrictModeUnlessDeclared() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"aps":{"alert":"hi","thread-id":"a"}"# + "\n", dir + "/typo.ndjson")
            #expect(try await CLI.run(["batch", "--update", dir]).status == 0)
            let golden = try String(contentsOfFile: dir + "/typo.expected.ndjson", encoding: .utf8)
            #expect(golden.contains("\"invalid-json\""))
            let r = try await CLI.run(["batch", "--strict", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("result line 1: error \"invalid-json\" not declared"))
            // --update --strict never freezes an undeclared error.
            try FileManager.default.removeItem(atPath: dir + "/typo.expected.ndjson")
            #expect(try await CLI.run(["batch", "--strict", "--update", dir]).status == 1)
            #expect(!FileManager.default.fileExists(atPath: dir + "/typo.expected.ndjson"))
            // Declared: the error is what the fixture is about.
            try writeFile(#"{"expected-errors": ["invalid-json"]}"#, dir + "/typo.batch.json")
            #expect(try await CLI.run(["batch", "--strict", "--update", dir]).status == 0)
            #expect(try await CLI.run(["batch", "--strict", dir]).status == 0)
        }
    }

    @Test func aFixtureThatProducesNothingFailsInStrictMode() async throws {
        try await TemporaryFolder.with { dir in
            try passingFolder(dir)
            // Only blank lines: no result line, so a golden of it would test nothing.
            try writeFile("\n\n   \n", dir + "/blank.ndjson")
            let loose = try await CLI.run(["batch", "--update", dir])
            #expect(loose.status == 0)
            #expect(loose.stdout.contains("(created, 0 lines: the output is empty, so it tests nothing; --strict fails it)"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/blank.expected.ndjson")).isEmpty)
            // The 0-byte golden matches, but --strict fails the fixture and says why.
            let r = try await CLI.run(["batch", "--strict", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("FAIL  \(dir)/blank.ndjson\n"))
            #expect(r.stdout.contains("the output is empty (the input holds no event, only blank lines)"))
            #expect(r.stdout.hasSuffix("2 files: 1 passed, 1 failed\n"))
            // --update --strict does not write a 0-byte expectation, and says so.
            try FileManager.default.removeItem(atPath: dir + "/blank.expected.ndjson")
            let u = try await CLI.run(["batch", "--strict", "--update", dir])
            #expect(u.status == 1)
            #expect(u.stdout.contains("--update --strict does not write a 0-byte expectation"))
            #expect(!FileManager.default.fileExists(atPath: dir + "/blank.expected.ndjson"))
            // JUnit names the reason.
            let j = try await CLI.run(["batch", "--strict", "--report", "junit", dir])
            #expect(j.stdout.contains(#"<failure message="the output is empty"#))
            // One event is enough.
            try writeFile(push, dir + "/blank.ndjson")
            #expect(try await CLI.run(["batch", "--strict", "--update", dir]).status == 0)
            #expect(try await CLI.run(["batch", "--strict", dir]).status == 0)
        }
    }

    @Test func collidingInputsAreAnErrorInAnyMode() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(push, dir + "/order.json")
            try writeFile(push, dir + "/order.ndjson")
            let r = try await CLI.run(["batch", "--update", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("ERROR \(dir)/order.json: shares \(dir)/order.expected.ndjson with \(dir)/order.ndjson"))
            #expect(r.stdout.contains("ERROR \(dir)/order.ndjson: shares"))
            #expect(!FileManager.default.fileExists(atPath: dir + "/order.expected.ndjson"))
            #expect(try await CLI.run(["batch", "--strict", dir]).status == 1)
        }
    }

    @Test func outNeverWritesOutsideItsFolder() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(push, dir + "/orders/a.ndjson")
            try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
            let r = try await CLI.run(["batch", "--out", "OUT", "../orders"], cwd: dir + "/sub")
            #expect(r.status == 0)
            let inside = try FileManager.default.subpathsOfDirectory(atPath: dir + "/sub/OUT")
            #expect(inside.contains { $0.hasSuffix("orders/a.actual.ndjson") }, "\(inside)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/orders/a.actual.ndjson"))
            #expect(!FileManager.default.fileExists(atPath: dir + "/sub/orders/a.actual.ndjson"))
            let top = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            #expect(top == ["orders", "sub"])
        }
    }

    @Test func folderSidecarsGiveRulesAndOptionsAndAreNeverInputs() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"version":1,"rules":[{"name":"k","match":{"/k":"v"},"path":"root.k","action":"dot"}]}"#, dir + "/rules.json")
            try writeFile(#"{"stamp": true}"#, dir + "/batch.json")
            try writeFile(#"{"aps":{"alert":"x"},"k":"v"}"# + "\n", dir + "/a.ndjson")
            try writeFile("1\t" + #"{"aps":{"alert":"x"},"k":"v"}"# + "\n", dir + "/b.ndjson")
            try writeFile(#"{"numbered": true}"#, dir + "/b.batch.json")
            let r = try await CLI.run(["batch", "--update", dir])
            #expect(r.status == 0)
            #expect(r.stdout.hasSuffix("2 files: 0 passed, 0 failed, 2 updated (2 created, 0 changed)\n"))
            let a = try String(contentsOfFile: dir + "/a.expected.ndjson", encoding: .utf8)
            let b = try String(contentsOfFile: dir + "/b.expected.ndjson", encoding: .utf8)
            let filtered = try await CLI.run(["filter", "--stamp", "--rules", dir + "/rules.json", dir + "/a.ndjson"])
            #expect(a == filtered.stdout)
            #expect(a.contains("\"rule\":\"k\""))
            #expect(b.hasPrefix("{\"seq\":1,") && b.contains("\"rule\":\"k\""))
            #expect(!b.contains("invalid-line-number"))
            #expect(!FileManager.default.fileExists(atPath: dir + "/rules.expected.ndjson"))
            #expect(!FileManager.default.fileExists(atPath: dir + "/batch.expected.ndjson"))
        }
    }

    @Test func aStartingStateSidecarSeedsTheRun() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(push, dir + "/seed.ndjson")
            _ = try await CLI.run(["filter", "--state", dir + "/start.state.json", dir + "/seed.ndjson"])
            try FileManager.default.removeItem(atPath: dir + "/seed.ndjson")
            try writeFile(push, dir + "/second.ndjson")
            try writeFile(#"{"state": "start.state.json"}"#, dir + "/second.batch.json")
            let r = try await CLI.run(["batch", "--update", dir])
            #expect(r.status == 0, "\(r.stdout)")
            let out = try String(contentsOfFile: dir + "/second.expected.ndjson", encoding: .utf8)
            #expect(out.contains("\"icon\":2"), "\(out)")
        }
    }

    @Test func aBadSidecarIsAnErrorNamingFileAndPointer() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(push, dir + "/a.ndjson")
            try writeFile(#"{"stamp": "yes"}"#, dir + "/a.batch.json")
            try writeFile(push, dir + "/b.ndjson")
            try writeFile(#"{"state": "start.json"}"#, dir + "/b.batch.json")
            let r = try await CLI.run(["batch", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("ERROR \(dir)/a.ndjson: \(dir)/a.batch.json: at /stamp: must be true or false, got string"))
            #expect(r.stdout.contains("\(dir)/b.batch.json: at /state: a starting state must be named *.state.json"))
        }
    }

    @Test func aFailureShowsEveryDifferingLineAndTheFieldsThatDiffer() async throws {
        try await TemporaryFolder.with { dir in
            let lines = (1...30).map { #"{"aps":{"alert":"hi","thread-id":"t\#($0)"}}"# }.joined(separator: "\n") + "\n"
            try writeFile(lines, dir + "/many.ndjson")
            _ = try await CLI.run(["batch", "--update", dir])
            let golden = try String(contentsOfFile: dir + "/many.expected.ndjson", encoding: .utf8)
            let edited = golden.replacingOccurrences(of: "\"path\":\"root\",\"count\":", with: "\"path\":\"root\",\"count\":9")
            try edited.write(toFile: dir + "/many.expected.ndjson", atomically: true, encoding: .utf8)
            let r = try await CLI.run(["batch", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("@@ -1 +1 @@"))
            #expect(r.stdout.contains("@@ -20 +20 @@"))
            #expect(!r.stdout.contains("@@ -21 +21 @@"))
            #expect(r.stdout.contains("… 10 more differing lines (30 in all)"))
            #expect(r.stdout.contains("/changes/2/count: 91 → 1"))
            let u = try await CLI.run(["batch", "--update", dir])
            #expect(u.stdout.contains("UPDATED \(dir)/many.ndjson  → \(dir)/many.expected.ndjson (30 lines changed)"))
            #expect(u.stdout.contains("/changes/2/count: 91 → 1"))
        }
    }

    @Test func junitFileBesideTheTextReport() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(push, dir + "/a/x.ndjson")
            try writeFile(push, dir + "/b/y.ndjson")
            _ = try await CLI.run(["batch", "--update", dir])
            try writeFile(push + push, dir + "/b/y.ndjson")
            let r = try await CLI.run(["batch", "--junit", dir + "/report.xml", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("FAIL  \(dir)/b/y.ndjson"))
            let doc = try XMLDocument(data: Data(contentsOf: URL(fileURLWithPath: dir + "/report.xml")))
            let suites = try doc.nodes(forXPath: "/testsuites/testsuite").compactMap { $0 as? XMLElement }
            #expect(suites.map { $0.attribute(forName: "name")?.stringValue } == [dir + "/a", dir + "/b"])
            #expect(suites.map { $0.attribute(forName: "failures")?.stringValue } == ["0", "1"])
            let cases = try doc.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
            #expect(cases.count == 2)
            #expect(cases.allSatisfy { Double($0.attribute(forName: "time")?.stringValue ?? "") != nil })
        }
    }
}
