import BadgeFlowTestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

@Suite struct BatchCommandTests {
    /// Fills `dir` (a temporary folder) with one passing, one failing, one new and one
    /// unreadable input; returns it.
    @discardableResult
    private func makeFolder(_ dir: String) throws -> String {
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
        try "{\"op\":\"tick\"}\n".write(toFile: dir + "/pass.ndjson", atomically: true, encoding: .utf8)
        try "{\"seq\":1,\"op\":\"tick\",\"device\":\"\",\"changes\":[],\"icon\":0}\n"
            .write(toFile: dir + "/pass.expected.ndjson", atomically: true, encoding: .utf8)
        try "{\"op\":\"login\"}\n{\"op\":\"tick\"}\n".write(toFile: dir + "/sub/fail.ndjson", atomically: true, encoding: .utf8)
        try
            "{\"seq\":1,\"op\":\"login\",\"device\":\"\",\"changes\":[],\"icon\":0}\n{\"seq\":2,\"op\":\"tick\",\"device\":\"\",\"changes\":[],\"icon\":9}\n"
            .write(toFile: dir + "/sub/fail.expected.ndjson", atomically: true, encoding: .utf8)
        try "{\n  \"aps\": {\"alert\": \"hi\", \"thread-id\": \"a\"}\n}\n".write(
            toFile: dir + "/sub/new.json", atomically: true, encoding: .utf8)
        return dir
    }

    @Test func reportsPassFailAndNewWithADiffAndExitsOne() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try makeFolder(dir)
        let r = try await CLI.run(["batch", dir])
        #expect(r.status == 1)
        #expect(r.stdout.contains("PASS  \(dir)/pass.ndjson"))
        #expect(r.stdout.contains("FAIL  \(dir)/sub/fail.ndjson"))
        #expect(r.stdout.contains("@@ -2 +2 @@"))
        #expect(r.stdout.contains("-{\"seq\":2,\"op\":\"tick\",\"device\":\"\",\"changes\":[],\"icon\":9}"))
        #expect(r.stdout.contains("+{\"seq\":2,\"op\":\"tick\",\"device\":\"\",\"changes\":[],\"icon\":0}"))
        #expect(r.stdout.contains("NEW   \(dir)/sub/new.json"))
        #expect(r.stdout.hasSuffix("3 files: 1 passed, 1 failed, 1 new\n"))
        #expect(!r.stdout.contains("expected.ndjson  "), "expectations are never inputs")
    }

    @Test func newFilesAloneDoNotFail() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try "{\"op\":\"tick\"}\n".write(toFile: dir + "/a.ndjson", atomically: true, encoding: .utf8)
        #expect(try await CLI.run(["batch", dir]).status == 0)
    }

    @Test func updateWritesExpectationsThatThenPass() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try makeFolder(dir)
        let u = try await CLI.run(["batch", "--update", dir])
        #expect(u.status == 0)
        #expect(u.stdout.contains("UPDATED"))
        let expected = try String(contentsOfFile: dir + "/sub/new.expected.ndjson", encoding: .utf8)
        #expect(
            expected.hasPrefix("{\"seq\":1,\"op\":\"push\",\"device\":\"\",\"kind\":\"alert\",\"rule\":\"chat\",\"path\":\"root.chat.a\""))
        let again = try await CLI.run(["batch", dir])
        #expect(again.status == 0)
        #expect(again.stdout.hasSuffix("3 files: 3 passed, 0 failed\n"))
    }

    @Test func batchOutputIsWhatFilterWrites() async throws {
        let stream = CLI.fixture("scenarios/chat-read-elsewhere.ndjson")
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try FileManager.default.copyItem(atPath: stream, toPath: dir + "/s.ndjson")
        _ = try await CLI.run(["batch", "--update", dir])
        let filtered = try await CLI.run(["filter", stream])
        #expect(try String(contentsOfFile: dir + "/s.expected.ndjson", encoding: .utf8) == filtered.stdout)
    }

    /// Root reads anything: skipped as root (the missing-path case below still runs).
    @Test(.enabled(if: getuid() != 0, "root reads an unreadable file"))
    func anUnreadableInputIsAnError() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try "{}".write(toFile: dir + "/x.ndjson", atomically: true, encoding: .utf8)
        chmod(dir + "/x.ndjson", 0)
        defer { chmod(dir + "/x.ndjson", 0o644) }
        let r = try await CLI.run(["batch", dir])
        #expect(r.status == 1)
        #expect(r.stdout.contains("ERROR"))
    }

    @Test func aMissingPathExitsFour() async throws {
        #expect(try await CLI.run(["batch", "/nonexistent/fixtures"]).status == 4)
    }

    @Test func jsonReportHasEveryFileAndTheCounts() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["batch", "--report", "json", try makeFolder(dir)])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["pass", "fail", "new"])
        let summary = try #require(object["summary"] as? [String: Any])
        #expect(summary["failed"] as? Int == 1)
        #expect(summary["passed"] as? Int == 1)
        #expect(files[1]["line"] as? Int == 2)
    }

    @Test func junitReportParsesAndHasTheRightCounts() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["batch", "--report", "junit", try makeFolder(dir)])
        #expect(r.status == 1)
        let doc = try XMLDocument(data: Data(r.stdout.utf8))
        let suite = try #require(try doc.nodes(forXPath: "/testsuites").first as? XMLElement)
        #expect(suite.attribute(forName: "tests")?.stringValue == "3")
        #expect(suite.attribute(forName: "failures")?.stringValue == "1")
        #expect(suite.attribute(forName: "errors")?.stringValue == "0")
        #expect(try doc.nodes(forXPath: "//testcase").count == 3)
        let failure = try #require(try doc.nodes(forXPath: "//testcase/failure").first)
        #expect(failure.stringValue?.contains("@@ -2 +2 @@") == true)
        #expect(try doc.nodes(forXPath: "//testcase/skipped").count == 1)
    }

    @Test func noProgressBarWhenStderrIsNotATerminal() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["batch", try makeFolder(dir)])
        #expect(r.stderr.isEmpty)
        #expect(!r.stdout.contains("\r"))
    }

    @Test func outWritesEachActualOutput() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try makeFolder(dir)
        let out = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(out) }
        _ = try await CLI.run(["batch", "--out", out, dir])
        let actual = try String(contentsOfFile: out + dir + "/sub/fail.actual.ndjson", encoding: .utf8)
        #expect(actual.hasSuffix("\"icon\":0}\n"))
    }

    @Test func aFileOwnRulesApply() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try "{\"aps\":{\"alert\":\"x\"},\"k\":\"v\"}\n".write(toFile: dir + "/s.ndjson", atomically: true, encoding: .utf8)
        try #"{"version":1,"rules":[{"name":"k","match":{"/k":"v"},"path":"root.k","action":"dot"}]}"#
            .write(toFile: dir + "/s.rules.json", atomically: true, encoding: .utf8)
        _ = try await CLI.run(["batch", "--update", dir])
        let expected = try String(contentsOfFile: dir + "/s.expected.ndjson", encoding: .utf8)
        #expect(expected.contains("\"rule\":\"k\",\"path\":\"root.k\""))
    }
}
