import BadgeFlowTestSupport
import Foundation
import Testing

/// Behaviour that depends on a real terminal: the filter's progress bar and colour.
@Suite struct TerminalTests {
    /// A stream of `n` lines in `dir` (a temporary folder).
    private func stream(_ n: Int, in dir: String) throws -> String {
        let path = dir + "/in.ndjson"
        let lines = (0..<n).map { i in "{\"aps\":{\"alert\":\"m\",\"thread-id\":\"t\(i % 40)\"}}" }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test func aProgressBarGoesToAStderrTerminalAndIsClearedAtTheEnd() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = try stream(60_000, in: dir)
        let out = dir + "/out.ndjson"
        let r = try CLI.runOnTerminal(["filter", input], onTerminal: [2], stdoutFile: out)
        #expect(r.status == 0)
        #expect(r.terminal.hasPrefix("\r["))
        #expect(r.terminal.contains("lines/s"))
        #expect(r.terminal.contains("ETA"))
        #expect(r.terminal.contains(" / "))
        #expect(r.terminal.hasSuffix("\r\u{1B}[K"), "the bar is erased at the end")
        // The redraws are rate-limited: far fewer than one per line or per check.
        let frames = r.terminal.components(separatedBy: "\r[").count - 1
        #expect(frames >= 1 && frames < 60_000 / 1024 + 2)
        // The results are what a run without the bar writes.
        let plain = try await CLI.run(["filter", input])
        #expect(try String(contentsOfFile: out, encoding: .utf8) == plain.stdout)
    }

    @Test func noProgressTurnsItOff() throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = try stream(2000, in: dir)
        let r = try CLI.runOnTerminal(
            ["filter", "--no-progress", input], onTerminal: [2],
            stdoutFile: dir + "/out")
        #expect(r.status == 0)
        #expect(r.terminal.isEmpty)
    }

    @Test func noProgressBarWhenStdoutIsATerminalToo() throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try CLI.runOnTerminal(["filter", try stream(50, in: dir)], onTerminal: [1, 2])
        #expect(r.status == 0)
        #expect(r.terminal.contains("{\"seq\":50,"))
        #expect(!r.terminal.contains("ETA"))
    }

    @Test func noProgressBarWhenStderrIsNotATerminal() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["filter", "--progress", try stream(3000, in: dir)])
        #expect(r.stderr.isEmpty)
    }

    private func state(in dir: String) throws -> String {
        let state = dir + "/s.json"
        _ = try CLI.run(["filter", "--state", state, CLI.fixture("scenarios/demo.ndjson")])
        return state
    }

    @Test func treeColoursATerminalUnlessNoColorIsSet() throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let s = try state(in: dir)
        // The environment the tests run in may set NO_COLOR itself.
        #expect(
            try CLI.runOnTerminal(["tree", "--state", s], onTerminal: [1], environment: ["NO_COLOR": nil]).terminal.contains("\u{1B}["))
        let noColor = try CLI.runOnTerminal(["tree", "--state", s], onTerminal: [1], environment: ["NO_COLOR": "1"])
        #expect(noColor.status == 0)
        #expect(noColor.terminal.contains("root"))
        #expect(!noColor.terminal.contains("\u{1B}["))
        // An empty NO_COLOR does not count; --color wins over NO_COLOR.
        #expect(try CLI.runOnTerminal(["tree", "--state", s], onTerminal: [1], environment: ["NO_COLOR": ""]).terminal.contains("\u{1B}["))
        #expect(
            try CLI.runOnTerminal(["tree", "--state", s, "--color"], onTerminal: [1], environment: ["NO_COLOR": "1"]).terminal.contains(
                "\u{1B}["))
    }

    @Test func batchHasColorAndNoColorAndHonoursNoColor() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try "{\"op\":\"tick\"}\n".write(toFile: dir + "/a.ndjson", atomically: false, encoding: .utf8)
        _ = try await CLI.run(["batch", "--update", dir])
        #expect(try CLI.runOnTerminal(["batch", dir], onTerminal: [1], environment: ["NO_COLOR": nil]).terminal.contains("\u{1B}[32mPASS"))
        #expect(!(try CLI.runOnTerminal(["batch", "--no-color", dir], onTerminal: [1]).terminal.contains("\u{1B}[")))
        #expect(!(try CLI.runOnTerminal(["batch", dir], onTerminal: [1], environment: ["NO_COLOR": "yes"]).terminal.contains("\u{1B}[")))
        let piped = try await CLI.run(["batch", "--color", dir])
        #expect(piped.stdout.contains("\u{1B}[32mPASS"))
        #expect(!(try await CLI.run(["batch", dir]).stdout.contains("\u{1B}[")))
    }
}
