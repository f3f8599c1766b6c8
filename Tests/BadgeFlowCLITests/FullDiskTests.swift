import BadgeFlowTestSupport
import Foundation
import Testing

/// States and `-o` output on a full disk or a folder that turns read-only, on a real tmpfs
/// (the tests need root to mount one: where no tmpfs can be mounted they are reported as not
/// run; where one can, a mount that fails fails the test).
@Suite(.serialized, .tags(.requiresRoot, .requiresTmpfs), .requires(.tmpfs)) struct FullDiskTests {
    /// A running `badgeflow ARGS` with stdin from a socket we write to (a write after its
    /// exit fails with EPIPE, without the SIGPIPE a pipe would raise in the test process),
    /// stdout and stderr to files.
    final class Running {
        let process = Process()
        private var ours: Int32 = -1
        let stdoutPath: String, stderrPath: String

        init(_ arguments: [String], in dir: String) throws {
            stdoutPath = dir + "/run.out"
            stderrPath = dir + "/run.err"
            process.executableURL = URL(fileURLWithPath: CLI.executable)
            process.arguments = arguments
            _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
                throw TmpFS.Failure(description: "socketpair: \(String(cString: strerror(errno)))")
            }
            ours = pair[0]
            let theirs = FileHandle(fileDescriptor: pair[1], closeOnDealloc: true)
            process.standardInput = theirs
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
            try process.run()
            try theirs.close()
        }

        deinit { if ours >= 0 { close(ours) } }

        /// Writes `text` to the filter's stdin; false when it is gone.
        @discardableResult
        func feed(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            var done = 0
            while done < bytes.count {
                let n = bytes.withUnsafeBytes { b in b.baseAddress.map { send(ours, $0 + done, b.count - done, Int32(MSG_NOSIGNAL)) } ?? -1
                }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }

        /// Closes stdin and waits for the exit (holding no thread of the pool); the status,
        /// stdout and stderr.
        func finish() async throws -> CLI.Run {
            if ours >= 0 { close(ours) }
            ours = -1
            await process.exited()
            return CLI.Run(
                status: process.terminationStatus, stdout: try String(contentsOfFile: stdoutPath, encoding: .utf8),
                stderr: try String(contentsOfFile: stderrPath, encoding: .utf8))
        }
    }

    /// The `last seq` that `state info` prints for `state` (nil when it cannot be read).
    static func committedSeq(_ state: String) throws -> Int? {
        let info = try CLI.run(["state", "info", state])
        guard info.status == 0 else { return nil }
        return info.stdout.split(separator: "\n").first { $0.hasPrefix("last seq: ") }.flatMap { Int($0.dropFirst(10)) }
    }

    /// Waits until `state` has a checkpoint of at least `seq`; fails after 60 seconds.
    static func waitForCheckpoint(_ state: String, atLeast seq: Int) throws {
        if try waitUntil(deadline: 60, poll: 0.05, { try committedSeq(state).map { $0 >= seq } ?? false }) { return }
        throw TmpFS.Failure(description: "no checkpoint of seq \(seq) in \(state) after 60 s")
    }

    /// The results of `output` whose seq is above `seq`.
    static func results(_ output: String, after seq: Int) -> String {
        output.split(separator: "\n").filter { line in
            guard line.hasPrefix("{\"seq\":") else { return false }
            return (Int(line.dropFirst(7).prefix { $0.isNumber }) ?? 0) > seq
        }.map { $0 + "\n" }.joined()
    }

    /// The state converted to JSON text (for comparing two states).
    static func asJSON(_ state: String, in dir: String) throws -> String {
        let out = dir + "/converted-\(UUID().uuidString).json"
        let run = try CLI.run(["state", "convert", state, out])
        #expect(run.status == 0, "\(run.stderr)")
        // Without the inputs applied: a run cut short records none, and each has its time.
        return CLI.withoutInputRecords(try String(contentsOfFile: out, encoding: .utf8))
    }

    @Test(arguments: Formats.checkpointing)
    func aCheckpointOnAFullDiskIsExit3AndKeepsTheLastCommittedState(_ format: String) async throws {
        let disk = try TmpFS.scratch(size: "16m"), dir = disk.folder
        defer { disk.release() }
        let lines = StateStoreTests.fleet(lines: 40_000, accounts: 20_000, seed: 21)
        let all = lines.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0 + "\n" }
        let head = all.prefix(16_000).joined(), rest = all.dropFirst(16_000).joined()
        let reference = try await CLI.run(["filter", "--state", dir + "/ref.sqlite"], input: lines)
        #expect(reference.status == 0, "\(reference.stderr)")

        let state = disk.path + "/s." + format
        let run = try Running(["filter", "--state", state, "--checkpoint", "0.05"], in: dir)
        run.feed(head)
        // A batch is 2,048 lines: some are answered and checkpointed.
        try Self.waitForCheckpoint(state, atLeast: 2048)
        try disk.fill()
        run.feed(rest)
        let failed = try await run.finish()
        #expect(failed.status == 3, "\(failed.stderr)")
        #expect(failed.stderr.hasPrefix("badgeflow: error: state file \(state): cannot commit a checkpoint: "), "\(failed.stderr)")
        #expect(
            failed.stderr.contains("database or disk is full") || failed.stderr.contains("No space left on device"), "\(failed.stderr)")
        #expect(failed.stderr.split(separator: "\n").count == 1, "one message line: \(failed.stderr)")
        // The results written are those of the uninterrupted run, as far as they go.
        #expect(reference.stdout.hasPrefix(failed.stdout))

        // The last committed state opens, even on the full disk.
        let committed = try #require(try Self.committedSeq(state))
        #expect(committed >= 2048 && committed < 40_000)
        #expect(FileManager.default.fileExists(atPath: state + ".lock") == false)

        // On a bigger disk, --resume gives what the uninterrupted run gave after it, and
        // the same state.
        try disk.remount("size=256m")
        let resumed = try await CLI.run(["filter", "--state", state, "--resume"], input: lines)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("skipping the first \(committed) lines"))
        #expect(resumed.stdout == Self.results(reference.stdout, after: committed))
        #expect(try Self.asJSON(state, in: dir) == Self.asJSON(dir + "/ref.sqlite", in: dir))
    }

    @Test(arguments: Formats.checkpointing)
    func aNewStateOnAFullDiskIsExit3BeforeAnyLine(_ format: String) async throws {
        let disk = try TmpFS.scratch(size: "1m")
        defer { disk.release() }
        try disk.fill()
        let state = disk.path + "/s." + format
        let input = StateStoreTests.fleet(lines: 500, accounts: 50, seed: 5)
        let run = try await CLI.run(["filter", "--state", state], input: input)
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("badgeflow: error: state file \(state): "), "\(run.stderr)")
        #expect(run.stderr.contains("database or disk is full") || run.stderr.contains("No space left on device"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "one message line: \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state + ".lock"))

        // With room, the same command runs as on any disk.
        try disk.remount("size=64m")
        let again = try await CLI.run(["filter", "--state", state], input: input)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == (try await CLI.run(["filter"], input: input)).stdout)
        #expect(try Self.committedSeq(state) == 500)
    }

    /// `state convert` into a full disk: exit 3, and nothing of TO left behind, whether the
    /// new database failed as it was created (its schema and meta) or as accounts went in.
    @Test(arguments: Formats.checkpointing)
    func aConvertOnAFullDiskIsExit3AndLeavesNothing(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let source = dir + "/s.json"
        let made = try await CLI.run(["filter", "--state", source], input: StateStoreTests.fleet(lines: 500, accounts: 50, seed: 5))
        #expect(made.status == 0, "\(made.stderr)")
        let disk = try TmpFS(in: dir, size: "1m")
        defer { disk.unmount() }
        try disk.fill()
        let target = disk.path + "/s." + format
        let run = try await CLI.run(["state", "convert", source, target])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("badgeflow: error: "), "\(run.stderr)")
        #expect(try disk.names() == ["filler"])
    }

    @Test func aJSONSaveOnAFullDiskIsExit3AndLeavesTheOldFileAlone() async throws {
        let disk = try TmpFS.scratch(size: "2m")
        defer { disk.release() }
        let state = disk.path + "/state.json"
        let first = try await CLI.run(["filter", "--state", state], input: StateStoreTests.fleet(lines: 200, accounts: 20, seed: 1))
        #expect(first.status == 0, "\(first.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: state))
        try disk.fill()
        // Thousands of accounts: a file far bigger than anything left.
        let run = try await CLI.run(["filter", "--state", state], input: StateStoreTests.fleet(lines: 20_000, accounts: 5000, seed: 2))
        #expect(run.status == 3, "\(run.stderr)")
        #expect(
            run.stderr.hasPrefix("badgeflow: error: state file \(state): cannot save (it keeps its previous content): "), "\(run.stderr)")
        #expect(run.stderr.contains("No space left on device"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "one message line: \(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
        // No temporary file, no lock file: the folder holds what it held.
        #expect(try disk.names() == ["filler", "state.json"])
    }

    @Test func outputToAFullDiskIsExit4AndLeavesTheOldFileAlone() async throws {
        let disk = try TmpFS.scratch(size: "1m"), dir = disk.folder
        defer { disk.release() }
        let out = disk.path + "/out.ndjson"
        try "old\n".write(toFile: out, atomically: false, encoding: .utf8)
        try disk.fill()
        // The input from a file: the filter stops reading at the first failed write.
        let input = dir + "/in.ndjson"
        try StateStoreTests.fleet(lines: 20_000, accounts: 500, seed: 3).write(toFile: input, atomically: false, encoding: .utf8)
        let run = try await CLI.run(["filter", "-o", out, input])
        #expect(run.status == 4, "\(run.stderr)")
        #expect(run.stderr.contains(out), "\(run.stderr)")
        #expect(run.stderr.contains("No space left on device"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "one message line: \(run.stderr)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old\n")
        #expect(try disk.names() == ["filler", "out.ndjson"])
    }
}

extension FullDiskTests {
    @Test func outputToAFullDiskSavesNoJSONState() async throws {
        let disk = try TmpFS.scratch(size: "1m"), dir = disk.folder
        defer { disk.release() }
        let state = dir + "/state.json", out = disk.path + "/out.ndjson", input = dir + "/in.ndjson"
        #expect(
            try await CLI.run(["filter", "--state", state], input: StateStoreTests.fleet(lines: 200, accounts: 20, seed: 1)).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: state))
        try disk.fill()
        try StateStoreTests.fleet(lines: 20_000, accounts: 500, seed: 3).write(toFile: input, atomically: false, encoding: .utf8)
        let run = try await CLI.run(["filter", "--state", state, "-o", out, input])
        #expect(run.status == 4, "\(run.stderr)")
        #expect(
            run.stderr
                == "badgeflow: error: \(out): cannot write: No space left on device (\(out) and the state file \(state) keep their previous content)\n"
        )
        // No result reached FILE, so no line's effect reaches the state: run again, and the
        // same lines are answered once.
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try disk.names() == ["filler"])
    }
}

extension FullDiskTests {
    @Test func stdoutToAFullDiskIsExit4AndTheSQLiteStateIsNeverAheadOfIt() async throws {
        let disk = try TmpFS.scratch(size: "2m"), dir = disk.folder
        defer { disk.release() }
        let input = dir + "/in.ndjson", state = dir + "/s.sqlite", out = disk.path + "/out.ndjson"
        try StateStoreTests.fleet(lines: 40_000, accounts: 2000, seed: 41).write(toFile: input, atomically: false, encoding: .utf8)
        let reference = try await CLI.run(["filter", input])
        // Stdout is a file on the small disk: the results fill it well before the end.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.executable)
        p.arguments = ["filter", "--state", state, "--checkpoint", "0.01", input]
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        let err = Pipe()
        p.standardError = err
        try p.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        await p.exited()
        #expect(p.terminationStatus == 4, "\(stderr)")
        #expect(stderr == "badgeflow: error: stdout: cannot write: No space left on device\n")
        // The results that reached the file, up to the last whole line.
        let written = try String(contentsOfFile: out, encoding: .utf8)
        let whole = String(written[..<(written.lastIndex(of: "\n").map { written.index(after: $0) } ?? written.startIndex)])
        #expect(reference.stdout.hasPrefix(whole))
        let committed = try #require(try Self.committedSeq(state))
        // Every result up to the committed seq is in the file.
        #expect(
            whole.hasPrefix(
                reference.stdout.split(separator: "\n").filter { line in
                    (Int(line.dropFirst(7).prefix { $0.isNumber }) ?? 0) <= committed
                }.map { $0 + "\n" }.joined()))
        #expect(committed < 40_000)
        let resumed = try await CLI.run(["filter", "--state", state, "--resume", input])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout == Self.results(reference.stdout, after: committed))
    }
}
