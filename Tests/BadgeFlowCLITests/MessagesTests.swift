import BadgeFlowTestSupport
import Foundation
import Testing

/// What the command line says when something is wrong, and how it ends.
@Suite struct MessagesTests {
    @Test func aRulesSyntaxErrorGivesLineAndColumn() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let rules = dir + "/rules.json"
        try "{\n  \"version\": 1,\n  \"rules\": [x]\n}\n".write(toFile: rules, atomically: false, encoding: .utf8)
        let r = try await CLI.run(["filter", "--rules", rules], input: "")
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(rules): (document): not valid JSON: "))
        #expect(r.stderr.contains("at line 3, column 13 (byte 30)"))
    }

    @Test func aStateSyntaxErrorGivesLineAndColumn() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s.json"
        try "{\n  \"format\": \"badgeflow-state\",\n  \"devices\": {,\n}".write(toFile: state, atomically: false, encoding: .utf8)
        let r = try await CLI.run(["filter", "--state", state], input: "")
        #expect(r.status == 3)
        #expect(r.stderr.contains("at line 3, column 15"))
    }

    @Test(arguments: ["-5", "100"])
    func aTooSmallMaxLineBytesSaysWhy(_ value: String) async throws {
        let r = try await CLI.run(["filter", "--max-line-bytes", value], input: "")
        #expect(r.status == 2)
        #expect(r.stderr.contains("--max-line-bytes must be a number of bytes of at least 1024"))
        #expect(r.stderr.contains("got \(value)"))
        #expect(!r.stderr.contains("Missing value"))
    }

    @Test func strictSaysHowManyLinesWereRejectedAndTheFirst() async throws {
        let r = try await CLI.run(["filter", "--strict"], input: "{\"op\":\"tick\"}\n\nnope\n{\"op\":\"clear\"}\n{\"op\":\"tick\"}\n")
        #expect(r.status == 1)
        #expect(r.lines.count == 4)
        #expect(r.stderr == "badgeflow: --strict: 2 lines rejected; the first at seq 3\n")
        #expect(try await CLI.run(["filter", "--strict"], input: "{\"op\":\"tick\"}\n").stderr.isEmpty)
    }

    @Test func aClosedPipeEndsQuietlyWithStatus141() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.executable)
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = dir + "/in.ndjson"
        try String(repeating: "{\"op\":\"tick\"}\n", count: 200_000).write(toFile: input, atomically: false, encoding: .utf8)
        process.arguments = ["filter", "--state", dir + "/s.json", input]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read one chunk, as `head -1` would, then go away.
        _ = out.fileHandleForReading.availableData
        try out.fileHandleForReading.close()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        await process.exited()
        #expect(process.terminationStatus == 141)
        #expect(stderr.isEmpty, "\(String(decoding: stderr, as: UTF8.self))")
        #expect(FileManager.default.fileExists(atPath: dir + "/s.json"), "the state is still saved")
    }

    /// StateFileFormat: a 0-byte state file is exit 3, never a new empty state.
    @Test func anEmptyStateFileIsNotAState() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s.json"
        #expect(FileManager.default.createFile(atPath: state, contents: Data()))
        let r = try await CLI.run(["filter", "--state", state], input: "{\"aps\":{\"alert\":\"a\",\"thread-id\":\"x\"}}\n")
        #expect(r.status == 3 && r.stdout.isEmpty, "\(r.stderr)")
        #expect(r.stderr.contains("not a BadgeFlow state: empty file"), "\(r.stderr)")
    }
}
