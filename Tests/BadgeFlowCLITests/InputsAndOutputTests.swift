import BadgeFlowTestSupport
import Foundation
import Testing
@testable import BadgeFlowCLI

/// Many INPUTs, `--files-from`, unreadable INPUTs and `-o/--output`.
@Suite struct InputsAndOutputTests {
    private let tick = "{\"op\":\"tick\"}\n"

    /// `n` files of one tick each in a new folder, and their paths.
    private func files(_ n: Int, in dir: String) throws -> [String] {
        try (0..<n).map { i in
            let path = dir + "/\(i).ndjson"
            try tick.write(toFile: path, atomically: false, encoding: .utf8)
            return path
        }
    }

    private func seqs(_ r: CLI.Run) -> [Int] {
        r.lines.compactMap { line in
            guard let m = line.firstMatch(of: /^\{"seq":(\d+),/) else { return nil }
            return Int(m.1)
        }
    }

    @Test func thousandsOfInputsAreReadInOrderWithOptionsAnywhere() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let paths = try files(5000, in: dir)
        let bad = dir + "/bad.ndjson"
        try "nope\n".write(toFile: bad, atomically: false, encoding: .utf8)
        // Options before, between and after the INPUTs; `--opt=VALUE` and `--opt VALUE`.
        let r = try await CLI.run(
            ["filter", "--jobs", "2"] + paths[..<2500] + ["--max-line-bytes=4096", bad]
                + paths[2500...] + ["--strict"])
        #expect(r.status == 1)
        #expect(seqs(r) == Array(1...5001))
        #expect(r.lines[2500].contains("\"invalid-json\""))
    }

    @Test func everythingAfterDoubleDashIsAnInput() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let odd = dir + "/--strict"
        try "nope\n".write(toFile: odd, atomically: false, encoding: .utf8)
        let r = try await CLI.run(["filter", "--", odd], cwd: dir)
        #expect(r.status == 0, "--strict after -- is a file, not the flag")
        #expect(r.lines.count == 1)
    }

    @Test func dashIsStdinAmongFiles() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let paths = try files(2, in: dir)
        let r = try await CLI.run(["filter", paths[0], "-", paths[1]], input: "nope\n")
        #expect(seqs(r) == [1, 2, 3])
        #expect(r.lines[1].contains("\"invalid-json\""))
    }

    @Test func filesFromReadsOnePathALineAfterTheInputs() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let paths = try files(3, in: dir)
        let spaced = dir + "/with space.ndjson"
        try "nope\n".write(toFile: spaced, atomically: false, encoding: .utf8)
        let list = dir + "/list"
        try ([paths[1], "", spaced, paths[2]].joined(separator: "\n") + "\n").write(toFile: list, atomically: false, encoding: .utf8)
        let r = try await CLI.run(["filter", "--files-from", list, paths[0]])
        #expect(r.status == 0)
        #expect(seqs(r) == [1, 2, 3, 4])
        #expect(r.lines[2].contains("\"invalid-json\""), "the spaced path is read whole, in list order")
        let fromStdin = try await CLI.run(["filter", "--files-from", "-"], input: paths.joined(separator: "\n"))
        #expect(seqs(fromStdin) == [1, 2, 3])
        // An empty list means no input at all, not stdin.
        #expect(try await CLI.run(["filter", "--files-from", "-"], input: "").stdout.isEmpty)
    }

    @Test func anUnreadableListExitsFour() async throws {
        let r = try await CLI.run(["filter", "--files-from", "/nonexistent/list"])
        #expect(r.status == 4)
        #expect(r.stderr.contains("/nonexistent/list: cannot read the --files-from list"))
    }

    @Test func aMissingInputIsReportedAndTheRestIsRead() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let paths = try files(2, in: dir)
        let missing = dir + "/missing.ndjson"
        let r = try await CLI.run(["filter", paths[0], missing, dir, paths[1]])
        #expect(r.status == 4)
        // A file that cannot be read adds no lines: seq goes on from the last line read.
        #expect(seqs(r) == [1, 2])
        #expect(r.stderr.contains("badgeflow: \(missing): No such file or directory\n"))
        #expect(r.stderr.contains("badgeflow: \(dir): cannot read: Is a directory\n"))
    }

    @Test func aMissingFileInTheListIsReportedToo() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let paths = try files(1, in: dir)
        let r = try await CLI.run(["filter", "--files-from", "-"], input: "/nonexistent/a\n" + paths[0] + "\n")
        #expect(r.status == 4)
        #expect(seqs(r) == [1])
        #expect(r.stderr == "badgeflow: /nonexistent/a: No such file or directory\n")
    }

    @Test func validateGoesOnAfterAMissingFileToo() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let bad = dir + "/p.ndjson"
        try "{\"aps\":{\"badge\":-1}}\n".write(toFile: bad, atomically: false, encoding: .utf8)
        let r = try await CLI.run(["validate", "/nonexistent/x.ndjson", bad])
        #expect(r.status == 4)
        #expect(r.stderr.contains("badgeflow: /nonexistent/x.ndjson: No such file or directory"))
        #expect(r.stdout.contains("\(bad):1: error[out-of-range]"))
    }

    @Test func outputWritesTheFileAndNothingToStdout() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let out = dir + "/out.ndjson"
        let stdout = try await CLI.run(["filter"], input: tick + tick)
        let r = try await CLI.run(["filter", "-o", out], input: tick + tick)
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == stdout.stdout)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.ndjson"])
    }

    @Test func outputReplacesAnExistingFileKeepingItsMode() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let out = dir + "/out.ndjson"
        try "old\n".write(toFile: out, atomically: false, encoding: .utf8)
        chmod(out, 0o600)
        let r = try await CLI.run(["filter", "--output", out], input: tick)
        #expect(r.status == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8).hasPrefix("{\"seq\":1,\"op\":\"tick\""))
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// The test runner's own guard: a command that exits before reading its input (here
    /// exit 3 at start) leaves the runner's write to a closed pipe, which must fail with
    /// EPIPE, not kill the test process with SIGPIPE.
    @Test func aCommandThatExitsBeforeReadingItsInputLeavesTheTestsRunning() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        // About 1.2 MB: far more than a pipe holds.
        let input = String(repeating: #"{"aps":{"alert":"hi","thread-id":"alice"}}"# + "\n", count: 30_000)
        let r = try await CLI.run(["filter", "--state", dir + "/no/such/folder/s.json"], input: input)
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func onAnErrorTheOldOutputIsLeftIntact() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let out = dir + "/out.ndjson"
        try "old\n".write(toFile: out, atomically: false, encoding: .utf8)
        // The state cannot be saved (its folder does not exist): exit 3, old output kept.
        let r = try await CLI.run(["filter", "-o", out, "--state", dir + "/no/such/folder/s.json"], input: tick)
        #expect(r.status == 3)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.ndjson"], "no temporary file left")
    }

    @Test func aWriteErrorNamesTheOutputAndExitsFour() async throws {
        let r = try await CLI.run(["filter", "-o", "/dev/full"], input: tick)
        #expect(r.status == 4)
        #expect(r.stderr.contains("badgeflow: error: /dev/full: cannot write: No space left on device"))
        let v = try await CLI.run(["filter", "-o", "/nonexistent/dir/out.ndjson"], input: tick)
        #expect(v.status == 4)
        #expect(v.stderr.contains("/nonexistent/dir/out.ndjson: cannot create"))
    }

    @Test func validateWritesItsReportToOutput() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let out = dir + "/report.txt"
        let r = try await CLI.run(["validate", "-o", out], input: "{\"aps\":{\"badge\":-1}}\n")
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("1 payload: 0 valid, 1 invalid"))
        #expect(try String(contentsOfFile: out, encoding: .utf8).hasPrefix("<stdin>:1: error[out-of-range] /aps/badge"))
    }

    /// The argv splitter must know every option that takes a value, or it would take the
    /// value for an INPUT: checked against ArgumentParser's own description of each command.
    @Test(arguments: [
        ("filter", FilterCommand.optionsWithValues), ("report", ReportCommand.optionsWithValues),
        ("validate", ValidateCommand.optionsWithValues),
    ])
    func theSplitterKnowsEveryOptionWithAValue(_ command: String, _ table: [String: String]) async throws {
        let dump = try await CLI.run([command, "--experimental-dump-help"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let arguments = try #require((object["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
        var expected: [String: String] = [:]
        for a in arguments where a["kind"] as? String == "option" {
            let names = a["names"] as? [[String: Any]] ?? []
            let long = names.first { $0["kind"] as? String == "long" }?["name"] as? String ?? ""
            for n in names {
                let name = n["name"] as? String ?? ""
                expected[(n["kind"] as? String == "short" ? "-" : "--") + name] = long
            }
        }
        #expect(!expected.isEmpty)
        #expect(table == expected)
    }
}
