import BadgeFlowTestSupport
import Foundation
import Testing

/// SQLite states (checkpoints, `--resume`, `--max-resident`), the one-writer lock, and the
/// JSON state's durability, through the built executable.
@Suite(.serialized) struct StateStoreTests {
    /// A stream over `accounts` accounts with up to three devices each: pushes, clears,
    /// sets, logins and ticks, with rising `at`.
    static func fleet(lines: Int, accounts: Int, seed: UInt64) -> String {
        var rng = seed
        func next(_ n: Int) -> Int {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            return Int((rng >> 33) % UInt64(n))
        }
        var out = ""
        for i in 0..<lines {
            let a = next(accounts), d = next(3), at = 1_732_269_600 + i / 100
            let head = "{\"account\":\"a\(a)\",\"device\":\"d\(d)\",\"at\":\(at),"
            switch next(10) {
            case 0..<4: out += head + "\"op\":\"push\",\"payload\":{\"aps\":{\"alert\":\"hi\",\"thread-id\":\"t\(next(5))\"}}}\n"
            case 4: out += head + "\"op\":\"push\",\"payload\":{\"aps\":{\"alert\":\"m\",\"category\":\"mail\"}}}\n"
            case 5, 6: out += head + "\"op\":\"clear\",\"path\":\"root.chat.t\(next(5))\"}\n"
            case 7: out += head + "\"op\":\"set\",\"path\":\"root.inbox\",\"count\":\(1 + next(9))}\n"
            case 8: out += head + "\"op\":\"login\"}\n"
            default: out += i % 50 == 0 ? "\n" : head + "\"op\":\"tick\"}\n"
            }
        }
        return out
    }

    /// Starts `badgeflow ARGS` with stdout to `stdout` (a file) and stdin from `stdin`
    /// (a file), or from a pipe we keep open when nil.
    private func start(_ arguments: [String], stdout: String, stdin: String? = nil) throws -> (Process, FileHandle?) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.executable)
        p.arguments = arguments
        // Only a missing file is created: createFile replaces what is there by renaming a
        // temporary file over it, which as root turned /dev/null into a regular file.
        if !FileManager.default.fileExists(atPath: stdout) {
            _ = FileManager.default.createFile(atPath: stdout, contents: nil)
        }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
        p.standardError = FileHandle.nullDevice
        var writer: FileHandle? = nil
        if let stdin {
            p.standardInput = FileHandle(forReadingAtPath: stdin)
        } else {
            let pipe = Pipe()
            p.standardInput = pipe
            writer = pipe.fileHandleForWriting
        }
        try p.run()
        return (p, writer)
    }

    /// The seq of a result line.
    private static func seq(_ line: Substring) -> Int? {
        guard line.hasPrefix("{\"seq\":") else { return nil }
        return Int(line.dropFirst(7).prefix { $0.isNumber })
    }

    /// `--block-cache SIZE` sizes a RocksDB state's block cache and changes no result (a
    /// cache of 1M makes most reads go through the OS); without a RocksDB state, or with a
    /// size that is not one of at least 1M, the run stops before any line with a usage error.
    @Test func blockCacheSizesARocksDBStateAndNothingElse() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = dir + "/in.ndjson"
        try Self.fleet(lines: 6000, accounts: 2000, seed: 3).write(toFile: input, atomically: true, encoding: .utf8)
        let plain = try await CLI.run(["filter", "--state", dir + "/a.rocksdb", "--max-resident", "100", input])
        #expect(plain.status == 0, "\(plain.stderr)")
        for size in ["1M", "256M"] {
            let sized = try await CLI.run([
                "filter", "--state", dir + "/\(size).rocksdb", "--max-resident", "100", "--block-cache", size, input,
            ])
            #expect(sized.status == 0, "\(sized.stderr)")
            #expect(sized.stdout == plain.stdout)
        }
        let refused: [([String], String)] = [
            (["--state", dir + "/c.sqlite", "--block-cache", "64M"], "--block-cache needs --state FILE.rocksdb"),
            (["--state", dir + "/c.json", "--block-cache", "64M"], "--block-cache needs --state FILE.rocksdb"),
            (["--block-cache", "64M"], "--block-cache needs --state FILE.rocksdb"),
            (["--state", dir + "/d.rocksdb", "--block-cache", "512K"], "--block-cache must be a size of at least 1M"),
            (["--state", dir + "/d.rocksdb", "--block-cache", "lots"], "got lots"),
        ]
        for (arguments, message) in refused {
            let run = try await CLI.run(["filter"] + arguments + [input])
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.contains(message), "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/c.sqlite") && !FileManager.default.fileExists(atPath: dir + "/d.rocksdb"))
    }

    /// The kill -9 smoke test of an SQLite or RocksDB state (the checkpoint policy itself is
    /// tested in process, `StateSessionTests`): each round is killed once a random share of
    /// the results is out, and the rounds resumed in turn give the results of one run.
    @Test(arguments: Formats.checkpointing)
    func killNineAtRandomMomentsThenResumeGivesTheOutputOfOneRun(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = dir + "/in.ndjson", more = dir + "/more.ndjson"
        try Self.fleet(lines: 80_000, accounts: 1500, seed: 7).write(toFile: input, atomically: true, encoding: .utf8)
        try Self.fleet(lines: 3000, accounts: 1500, seed: 8).write(toFile: more, atomically: true, encoding: .utf8)
        let reference = try await CLI.run(["filter", "--state", dir + "/ref.sqlite", input])
        #expect(reference.status == 0, "\(reference.stderr)")

        let state = dir + "/x." + format
        var rng = SystemRandomNumberGenerator()
        var answers: [Int: Substring] = [:]
        var killedMidway = 0
        let rounds = 8
        for round in 0...rounds {
            let out = dir + "/out.\(round)"
            let (p, _) = try start(
                ["filter", "--state", state, "--checkpoint", "0.05", "--resume", input], stdout: out, stdin: "/dev/null")
            if round < rounds {
                // Killed once this round wrote a random number of result bytes (not after a
                // sleep, which a loaded machine can outlast); the last round runs to the end.
                let target = UInt64.random(in: 64 << 10...1 << 20, using: &rng)
                _ = waitUntil(deadline: 600, poll: 0.002) {
                    !p.isRunning || (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? UInt64) ?? 0 >= target
                }
                kill(p.processIdentifier, SIGKILL)
            }
            await p.exited()
            if p.terminationReason == .uncaughtSignal { killedMidway += 1 }
            if round == rounds { #expect(p.terminationStatus == 0) }
            let text = try String(contentsOfFile: out, encoding: .utf8)
            // A line cut by the kill (no newline yet) is not an answer.
            let complete =
                text.hasSuffix("\n")
                ? Substring(text) : text[..<(text.lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex)]
            for line in complete.split(separator: "\n") {
                guard let s = Self.seq(line) else { continue }
                answers[s] = line
            }
            if FileManager.default.fileExists(atPath: state) {
                let info = try await CLI.run(["state", "info", state])
                #expect(info.status == 0, "round \(round): the store does not open: \(info.stderr)")
            }
        }
        #expect(killedMidway >= rounds / 2, "rounds should be killed before the end")
        let merged = answers.keys.sorted().map { String(answers[$0] ?? "") + "\n" }.joined()
        #expect(merged == reference.stdout)

        // The final state answers a further stream as the uninterrupted run's does.
        let a = try await CLI.run(["filter", "--state", state, more])
        let b = try await CLI.run(["filter", "--state", dir + "/ref.sqlite", more])
        #expect(a.status == 0 && b.status == 0)
        #expect(a.stdout == b.stdout)
    }

    /// `-o -` is stdout: results go out as they are made, so checkpoints and
    /// `--max-resident` work as without `-o` (a results FILE is put in place only at the end).
    @Test func dashOutputIsStdoutForCheckpointsAndMaxResident() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = Self.fleet(lines: 2000, accounts: 300, seed: 4)
        let plain = try await CLI.run(["filter"], input: input)
        let dash = try await CLI.run(["filter", "--state", dir + "/s.sqlite", "--max-resident", "16", "-o", "-"], input: input)
        #expect(dash.status == 0, "\(dash.stderr)")
        #expect(dash.stdout == plain.stdout)
        let file = try await CLI.run(
            ["filter", "--state", dir + "/t.sqlite", "--max-resident", "16", "-o", dir + "/out.ndjson"], input: input)
        #expect(file.status == 2, "\(file.stderr)")
    }

    @Test(arguments: Formats.checkpointing)
    func maxResidentGivesTheSameResultsAndState(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = Self.fleet(lines: 8000, accounts: 700, seed: 3)
        let plain = try await CLI.run(["filter", "--state", dir + "/plain.json"], input: input)
        let bounded = try await CLI.run(
            ["filter", "--state", dir + "/b." + format, "--max-resident", "16", "--checkpoint", "0.01"], input: input)
        #expect(bounded.status == 0, "\(bounded.stderr)")
        #expect(bounded.stdout == plain.stdout)
        // The same accounts, devices and marks: converted back, the state is the JSON one.
        #expect(try await CLI.run(["state", "convert", dir + "/b." + format, dir + "/back.json"]).status == 0)
        // The same input applied, recorded by each run with its own time.
        #expect(
            CLI.withoutInputRecords(try String(contentsOfFile: dir + "/back.json", encoding: .utf8))
                == CLI.withoutInputRecords(try String(contentsOfFile: dir + "/plain.json", encoding: .utf8)))
        // And JSON -> store -> JSON (both held compactly by convert) gives the file back.
        #expect(try await CLI.run(["state", "convert", dir + "/plain.json", dir + "/c." + format]).status == 0)
        #expect(try await CLI.run(["state", "convert", dir + "/c." + format, dir + "/again.json"]).status == 0)
        #expect(
            try String(contentsOfFile: dir + "/again.json", encoding: .utf8) == String(contentsOfFile: dir + "/plain.json", encoding: .utf8)
        )
        #expect(try await CLI.run(["state", "info", dir + "/c." + format]).stdout.contains("accounts: 700\n"))
        let info = try await CLI.run(["state", "info", dir + "/b." + format])
        #expect(info.stdout.contains("accounts: 700\n"))
        #expect(info.stdout.contains("last seq: 8000\n"))
        let tree = try await CLI.run(["tree", "--state", dir + "/b." + format, "--account", "a5", "--json"])
        let treeJSON = try await CLI.run(["tree", "--state", dir + "/plain.json", "--account", "a5", "--json"])
        #expect(tree.status == 0 && tree.stdout == treeJSON.stdout)
    }

    /// Many batches with accounts read ahead on the prefetch thread, committed on the
    /// checkpoint thread and evicted after almost every batch: the same results and state as
    /// a run that keeps everything in memory.
    @Test(arguments: [
        (8, "0.001", "sqlite"), (64, "0.001", "sqlite"), (1000, "1", "sqlite"), (8, "0.001", "rocksdb"), (1000, "1", "rocksdb"),
    ])
    func readAheadAndBackgroundCommitsGiveTheSameResultsAndState(_ resident: Int, _ checkpoint: String, _ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = dir + "/in.ndjson"
        try Self.fleet(lines: 30000, accounts: 300, seed: 11).write(toFile: input, atomically: true, encoding: .utf8)
        let plain = try await CLI.run(["filter", "--jobs", "1", "--state", dir + "/plain.json", input])
        let bounded = try await CLI.run([
            "filter", "--jobs", "2", "--state", dir + "/b." + format, "--max-resident", String(resident), "--checkpoint", checkpoint,
            input,
        ])
        #expect(plain.status == 0 && bounded.status == 0, "\(bounded.stderr)")
        #expect(bounded.stdout == plain.stdout)
        // Every connection closed in order: the last one removed the WAL files.
        #expect(!FileManager.default.fileExists(atPath: dir + "/b.sqlite-wal"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/b.sqlite-shm"))
        #expect(try await CLI.run(["state", "convert", dir + "/b." + format, dir + "/back.json"]).status == 0)
        // The records of the input applied hold when: the rest byte for byte.
        #expect(
            CLI.withoutInputRecords(try String(contentsOfFile: dir + "/back.json", encoding: .utf8))
                == CLI.withoutInputRecords(try String(contentsOfFile: dir + "/plain.json", encoding: .utf8)))
        guard format == "sqlite" else { return }
        // Readers leave no WAL files behind either.
        #expect(try await CLI.run(["state", "info", dir + "/b.sqlite"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: dir + "/b.sqlite-wal"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/b.sqlite-shm"))
    }

    /// A second filter on a state in use is refused, under the same name or another one
    /// for the same state (a symbolic link to it, made before or after the state exists;
    /// the path through `./`): all take the same lock.
    /// The names that reach one state take one lock: in process, `StateSessionTests`.
    @Test(arguments: Formats.files("s"))
    func aSecondWriterExits3NamingTheFirst(_ name: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/" + name
        let (first, stdin) = try start(["filter", "--state", state], stdout: dir + "/first.out")
        defer {
            try? stdin?.close()
            first.waitUntilExit()
        }
        // The lock file holds the first filter's pid once it is taken.
        let lock = URL(fileURLWithPath: state).resolvingSymlinksInPath().path + ".lock"
        #expect(
            waitUntil(deadline: 60, poll: 0.005) { (try? String(contentsOfFile: lock, encoding: .utf8)) == "\(first.processIdentifier)\n" })
        let second = try await CLI.run(["filter", "--state", state], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(second.status == 3)
        #expect(second.stderr.contains("in use by pid \(first.processIdentifier)"), "\(second.stderr)")
        #expect(second.stdout.isEmpty)
    }

    /// A database with another hard link is refused for writing (SQLite would keep a log per
    /// name, and writers through the two names would not see each other); it still reads.
    @Test func anSQLiteStateWithAnotherHardLinkIsNotWritten() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s.sqlite"
        #expect(try await CLI.run(["filter", "--state", state], input: "{\"aps\":{\"alert\":\"x\",\"thread-id\":\"a\"}}\n").status == 0)
        #expect(link(state, dir + "/other.sqlite") == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: state))
        for name in ["s.sqlite", "other.sqlite"] {
            let run = try await CLI.run(
                ["filter", "--state", dir + "/" + name], input: "{\"aps\":{\"alert\":\"x\",\"thread-id\":\"b\"}}\n")
            #expect(run.status == 3)
            #expect(run.stderr.contains("the database has 2 hard links"), "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
        let info = try await CLI.run(["state", "info", dir + "/other.sqlite"])
        #expect(info.status == 0 && info.stdout.contains("accounts: 1"), "\(info.stderr)")
    }

    /// A save through a link to a state not written yet writes the state, and the link stays.
    @Test func aJSONSaveThroughALinkToAMissingStateWritesItsTarget() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let link = dir + "/link.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "state.json")
        #expect(try await CLI.run(["filter", "--state", link], input: "{\"aps\":{\"alert\":\"x\",\"thread-id\":\"a\"}}\n").status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: link)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try String(contentsOfFile: dir + "/state.json", encoding: .utf8).contains("root.chat.a"))
    }

    @Test func aLockLeftByADeadProcessIsTakenOver() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try "99999999\n".write(toFile: dir + "/s.sqlite.lock", atomically: true, encoding: .utf8)
        let run = try await CLI.run(["filter", "--state", dir + "/s.sqlite"], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/s.sqlite.lock"))
    }

    /// /proc takes no new files, even from root (a chmod'ed folder would not stop root).
    @Test(arguments: Formats.files("/proc/badgeflow-state"))
    func anUnwritableFolderIsExit3BeforeAnyLine(_ state: String) async throws {
        let run = try await CLI.run(["filter", "--state", state], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(run.status == 3)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("cannot create the lock file"))
    }

    @Test func jsonSavesKeepModeAndSymlink() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try FileManager.default.createDirectory(atPath: dir + "/real", withIntermediateDirectories: true)
        let target = dir + "/real/state.json", link = dir + "/link.json"
        #expect(try await CLI.run(["filter", "--state", target], input: "{\"aps\":{\"alert\":\"x\",\"thread-id\":\"a\"}}\n").status == 0)
        chmod(target, 0o640)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try await CLI.run(["filter", "--state", link], input: "{\"aps\":{\"alert\":\"x\",\"thread-id\":\"b\"}}\n").status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: link)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        var st = stat()
        #expect(stat(target, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o640)
        let text = try String(contentsOfFile: target, encoding: .utf8)
        #expect(text.contains("root.chat.a") && text.contains("root.chat.b"))
    }

    @Test func staleTemporaryFilesOfDeadProcessesAreRemoved() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/state.json"
        try "partial".write(toFile: state + ".tmp.99999999", atomically: true, encoding: .utf8)
        let live = state + ".tmp.\(getpid())"
        try "ours".write(toFile: live, atomically: true, encoding: .utf8)
        #expect(try await CLI.run(["filter", "--state", state], input: "{\"aps\":{\"alert\":\"x\"}}\n").status == 0)
        #expect(!FileManager.default.fileExists(atPath: state + ".tmp.99999999"))
        #expect(FileManager.default.fileExists(atPath: live))
    }

    /// A hang would fail at the time limit (no wall-clock bound of its own).
    // The limit catches a hang, not slowness: on a 2-core machine Swift Testing's cooperative
    // pool has 2 threads, and the end-to-end tests that wait on processes hold them for
    // minutes, so a test (and its limit's timer) may wait that long before it runs.
    @Test(.timeLimit(.minutes(30)))
    func headOneExitsPromptlyAndResumeContinues() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = dir + "/in.ndjson"
        try Self.fleet(lines: 30_000, accounts: 500, seed: 11).write(toFile: input, atomically: true, encoding: .utf8)
        let reference = try await CLI.run(["filter", input])
        let state = dir + "/h.sqlite"
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c", "'\(CLI.executable)' filter --state '\(state)' --checkpoint 0.01 '\(input)' | head -1 > '\(dir)/head.out'",
        ]
        try shell.run()
        await shell.exited()
        let first = try String(contentsOfFile: dir + "/head.out", encoding: .utf8)
        #expect(first == String(reference.stdout.prefix { $0 != "\n" }) + "\n")
        // The committed seq is never ahead of what the pipe took; --resume goes on from it.
        let info = try await CLI.run(["state", "info", state])
        let committed = info.stdout.split(separator: "\n").first { $0.hasPrefix("last seq: ") }.flatMap { Int($0.dropFirst(10)) } ?? -1
        #expect(committed >= 0 && committed < 30_000)
        let resumed = try await CLI.run(["filter", "--state", state, "--resume", input])
        #expect(resumed.status == 0)
        let tail = reference.stdout.split(separator: "\n").filter { (Self.seq($0) ?? 0) > committed }.map { $0 + "\n" }.joined()
        #expect(resumed.stdout == tail)
    }

    /// The reader takes `readBytes` of the results, then goes away.
    @Test(arguments: [4096, 900_000])
    func aBrokenPipeSavesAJSONStateWithOnlyTheBatchesWhoseResultsWereWritten(_ readBytes: Int) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = dir + "/in.ndjson", state = dir + "/s.json"
        // Line i marks root.chat.t<i>: the saved marks tell which lines were applied.
        let lines = (0..<100_000).map { "{\"aps\":{\"alert\":\"x\",\"thread-id\":\"t\($0)\"}}\n" }
        try lines.joined().write(toFile: input, atomically: false, encoding: .utf8)
        // Four threads keep up to ten batches in flight when the reader goes away.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.executable)
        p.arguments = ["filter", "--jobs", "4", "--state", state, input]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        var buffer = [UInt8](repeating: 0, count: readBytes)
        var n = 0
        while n < readBytes {
            let got = buffer.withUnsafeMutableBytes {
                read(pipe.fileHandleForReading.fileDescriptor, $0.baseAddress.map { $0 + n }, readBytes - n)
            }
            if got <= 0 { break }
            n += got
        }
        try pipe.fileHandleForReading.close()
        await p.exited()
        #expect(p.terminationStatus == 141)
        let received = buffer.prefix(n).filter { $0 == UInt8(ascii: "\n") }.count
        #expect(received > 0)
        let text = try String(contentsOfFile: state, encoding: .utf8)
        let applied = Set(text.components(separatedBy: "\"root.chat.t").dropFirst().map { $0.prefix { $0.isNumber } }).count
        // Only whole batches (2,048 lines) whose results were all written are in the state:
        // the batch whose write failed is taken back, though some of its results reached
        // the reader (the state may be behind what was delivered, never ahead of it). The
        // results written but not read are at most a 64 KiB pipe's worth (~500 lines).
        #expect(applied % 2048 == 0, "\(applied) lines applied")
        #expect(applied > received - 2048 && applied <= received + 600, "\(applied) lines applied, \(received) received")
        if readBytes > 500_000 { #expect(applied > 0) }
        let reference = try await CLI.run(["filter", "--state", dir + "/ref.json"], input: lines.prefix(applied).joined())
        #expect(reference.status == 0)
        // The reference read its stdin to the end and records it; the cut run records nothing.
        #expect(CLI.withoutInputRecords(try String(contentsOfFile: dir + "/ref.json", encoding: .utf8)) == text)
    }

    @Test func resumeRejectsAnotherInputFile() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let a = dir + "/a.ndjson", b = dir + "/b.ndjson"
        try Self.fleet(lines: 100, accounts: 10, seed: 1).write(toFile: a, atomically: true, encoding: .utf8)
        try Self.fleet(lines: 100, accounts: 10, seed: 2).write(toFile: b, atomically: true, encoding: .utf8)
        #expect(try await CLI.run(["filter", "--state", dir + "/s.db", a]).status == 0)
        let run = try await CLI.run(["filter", "--state", dir + "/s.db", "--resume", b])
        #expect(run.status == 3)
        #expect(run.stderr.contains("--resume"))
        // stdin: the committed number of lines is skipped, and stderr says so.
        let c = dir + "/c.db"
        let lines = Self.fleet(lines: 100, accounts: 10, seed: 1)
        #expect(
            try await CLI.run(
                ["filter", "--state", c],
                input: String(lines.split(separator: "\n", omittingEmptySubsequences: false).prefix(40).joined(separator: "\n")) + "\n"
            ).status == 0)
        let resumed = try await CLI.run(["filter", "--state", c, "--resume"], input: lines)
        #expect(resumed.stderr.contains("skipping the first 40 lines of stdin"))
        let whole = try await CLI.run(["filter"], input: lines)
        #expect(resumed.stdout == whole.stdout.split(separator: "\n").filter { (Self.seq($0) ?? 0) > 40 }.map { $0 + "\n" }.joined())
    }

    @Test func aCorruptOrForeignDatabaseIsExit3AndLeftUntouched() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let junk = dir + "/junk.sqlite"
        let bytes = String(repeating: "not a database at all\n", count: 300)
        try bytes.write(toFile: junk, atomically: true, encoding: .utf8)
        let run = try await CLI.run(["filter", "--state", junk], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(run.status == 3)
        #expect(run.stdout.isEmpty)
        #expect(try String(contentsOfFile: junk, encoding: .utf8) == bytes)
        // An SQLite database of something else.
        let foreign = dir + "/other.db"
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        make.arguments = [foreign, "CREATE TABLE t(x); INSERT INTO t VALUES (1);"]
        try make.run()
        await make.exited()
        let other = try await CLI.run(["filter", "--state", foreign], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(other.status == 3)
        #expect(other.stderr.contains("not a BadgeFlow state"))
        #expect(try await CLI.run(["state", "info", foreign]).status == 3)
        // An empty file is not a state (StateFileFormat: BadgeFlow's own saves never leave one; a
        // new database is renamed into place once it has its tables): exit 3, untouched.
        let empty = dir + "/empty.sqlite"
        _ = FileManager.default.createFile(atPath: empty, contents: nil)
        let info = try await CLI.run(["state", "info", empty])
        #expect(info.status == 3 && info.stderr.contains("not a BadgeFlow state: empty file"), "\(info.stderr)")
        let first = try await CLI.run(["filter", "--state", empty], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(first.status == 3 && first.stdout.isEmpty)
        #expect(try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int == 0)
        // A .rocksdb state is a folder: a file of that name, or a folder of other files, is
        // refused and left as it is.
        let file = dir + "/file.rocksdb"
        try bytes.write(toFile: file, atomically: true, encoding: .utf8)
        let asFile = try await CLI.run(["filter", "--state", file], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(asFile.status == 3 && asFile.stdout.isEmpty && asFile.stderr.contains("not a RocksDB state"), "\(asFile.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == bytes)
        let folder = dir + "/folder.rocksdb"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try bytes.write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        let asFolder = try await CLI.run(["filter", "--state", folder], input: "{\"aps\":{\"alert\":\"x\"}}\n")
        #expect(asFolder.status == 3 && asFolder.stderr.contains("not a RocksDB database"), "\(asFolder.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["notes.txt"])
        #expect(try await CLI.run(["state", "info", folder]).status == 3)
    }

    @Test func aJSONStateWithAKeyHoldingNULIsRefusedWithItsPlaceNotMerged() async throws {
        // json-c cuts keys at U+0000: "a\u0000b" would have loaded as a second "a".
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s.json"
        let events = ["a", "ab"].map { #"{"op":"push","account":"\#($0)","device":"d","payload":{"aps":{"alert":"hi"}}}"# }
        #expect(try await CLI.run(["filter", "--state", state], input: events.joined(separator: "\n") + "\n").status == 0)
        let saved = try String(contentsOfFile: state, encoding: .utf8)
        #expect(saved.contains(#""ab": {"#))
        let edited = saved.replacingOccurrences(of: #""ab": {"#, with: #""a\u0000b": {"#)
        try edited.write(toFile: state, atomically: true, encoding: .utf8)
        for arguments in [["state", "info", state], ["filter", "--state", state]] {
            let run = try await CLI.run(arguments, input: "")
            #expect(run.status == 3, "\(arguments)")
            #expect(run.stderr.contains("U+0000") && run.stderr.contains("line "), "\(run.stderr)")
        }
        #expect(try String(contentsOfFile: state, encoding: .utf8) == edited)
        // An SQLite row whose id holds U+0000 (written by hand, or by an earlier build) is
        // refused by a full read, not read as "a" over a's own row.
        let db = dir + "/s.sqlite"
        #expect(try await CLI.run(["filter", "--state", db], input: events.joined(separator: "\n") + "\n").status == 0)
        let edit = Process()
        edit.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        edit.arguments = [db, "UPDATE accounts SET id = 'a' || char(0) || 'b' WHERE id = 'ab'"]
        try edit.run()
        await edit.exited()
        #expect(edit.terminationStatus == 0)
        let convert = try await CLI.run(["state", "convert", db, dir + "/out.json"])
        #expect(convert.status == 3 && convert.stderr.contains(#"account id "a\u0000b" holds U+0000"#), "\(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.json"))
        // The filter refuses such an id, so it never writes one.
        let refused = try await CLI.run(
            ["filter"], input: #"{"op":"push","account":"a\u0000b","device":"d","payload":{"aps":{"alert":"hi"}}}"# + "\n")
        #expect(refused.stdout.contains(#""code":"invalid-value""#) && refused.stdout.contains(#""at":"/account""#))
    }

    @Test func anUnreadableAccountRowIsExit3AndNotOverwritten() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s.sqlite"
        let push = "{\"op\":\"push\",\"account\":\"a1\",\"payload\":{\"aps\":{\"alert\":\"x\",\"thread-id\":\"t\"}}}\n"
        #expect(try await CLI.run(["filter", "--state", state], input: push).status == 0)
        let damage = Process()
        damage.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        damage.arguments = [state, "UPDATE accounts SET data = '{\"clock\": 0, \"marks\": 7}' WHERE id = 'a1'"]
        try damage.run()
        await damage.exited()
        let run = try await CLI.run(["filter", "--state", state], input: push)
        #expect(run.status == 3)
        #expect(run.stderr.contains("marks must be an object"), "\(run.stderr)")
        let read = Process()
        let pipe = Pipe()
        read.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        read.arguments = [state, "SELECT data FROM accounts WHERE id = 'a1'"]
        read.standardOutput = pipe
        try read.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        await read.exited()
        #expect(String(decoding: data, as: UTF8.self) == "{\"clock\": 0, \"marks\": 7}\n")
    }
}
