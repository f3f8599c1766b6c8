import BadgeFlowTestSupport
import Foundation
import Testing

/// A state whose folder turns unwritable, on a real tmpfs (root: chmod would not stop it).
///
/// `mount -o remount,ro` cannot do it mid-run: Linux refuses it (EBUSY) while a file on the
/// mount is open for writing, as the database and the lock file are for the whole run. The
/// folder is made immutable instead (`chattr +i`), which stops root from creating or
/// removing entries in it, as a read-only folder would. Not run where no tmpfs can be mounted.
@Suite(.serialized, .tags(.requiresRoot, .requiresTmpfs), .requires(.tmpfs)) struct ReadOnlyFolderTests {
    @Test(arguments: Formats.checkpointing)
    func aStoreWhoseFolderTurnsUnwritableMidRunStillCommitsEveryCheckpoint(_ format: String) async throws {
        let disk = try TmpFS.scratch(size: "64m"), dir = disk.folder
        defer { disk.release() }
        let folder = disk.path + "/state", state = folder + "/s." + format
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let lines = StateStoreTests.fleet(lines: 40_000, accounts: 5000, seed: 31)
        let all = lines.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0 + "\n" }
        let reference = try await CLI.run(["filter", "--state", dir + "/ref.sqlite"], input: lines)
        #expect(reference.status == 0, "\(reference.stderr)")

        let run = try FullDiskTests.Running(["filter", "--state", state, "--checkpoint", "0.05"], in: dir)
        run.feed(all.prefix(16_000).joined())
        try FullDiskTests.waitForCheckpoint(state, atLeast: 2048)
        try TmpFS.setImmutable(folder, true)
        defer { try? TmpFS.setImmutable(folder, false) }
        #expect(!FileManager.default.createFile(atPath: folder + "/probe", contents: nil), "the folder should take no new file")
        run.feed(all.dropFirst(16_000).joined())
        let done = try await run.finish()
        // The checkpoints write to the database and its WAL, open since the start: they
        // all commit, up to the last line.
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout == reference.stdout)
        #expect(try FullDiskTests.committedSeq(state) == 40_000)
        #expect(try FullDiskTests.asJSON(state, in: dir) == FullDiskTests.asJSON(dir + "/ref.sqlite", in: dir))

        // The lock file could not be removed; the next writer takes it over.
        try TmpFS.setImmutable(folder, false)
        let next = try await CLI.run(["filter", "--state", state], input: StateStoreTests.fleet(lines: 100, accounts: 10, seed: 32))
        #expect(next.status == 0, "\(next.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state + ".lock"))
        #expect(try FullDiskTests.committedSeq(state) == 100)
    }

    @Test func aJSONStateWhoseFolderTurnsUnwritableMidRunIsExit3AndKeepsTheOldFile() async throws {
        let disk = try TmpFS.scratch(size: "64m"), dir = disk.folder
        defer { disk.release() }
        let folder = disk.path + "/state", state = folder + "/state.json"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let first = try await CLI.run(["filter", "--state", state], input: StateStoreTests.fleet(lines: 200, accounts: 20, seed: 1))
        #expect(first.status == 0, "\(first.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: state))

        let second = StateStoreTests.fleet(lines: 3000, accounts: 300, seed: 2),
            third = StateStoreTests.fleet(lines: 3000, accounts: 300, seed: 3)
        let run = try FullDiskTests.Running(["filter", "--state", state], in: dir)
        run.feed(second)
        // The lock is taken and the state loaded before any line is read: once the results
        // of `second` are out (flushed while no more input comes), both are done.
        let answered = second.split(separator: "\n").count
        #expect(
            waitUntil(deadline: 60) {
                ((try? String(contentsOfFile: run.stdoutPath, encoding: .utf8)) ?? "").split(separator: "\n").count >= answered
            })
        try TmpFS.setImmutable(folder, true)
        defer { try? TmpFS.setImmutable(folder, false) }
        run.feed(third)
        let done = try await run.finish()
        #expect(done.status == 3, "\(done.stderr)")
        #expect(
            done.stderr.hasPrefix("badgeflow: error: state file \(state): cannot save (it keeps its previous content): "), "\(done.stderr)")
        #expect(done.stderr.contains("Operation not permitted"), "\(done.stderr)")
        #expect(done.stderr.split(separator: "\n").count == 1, "one message line: \(done.stderr)")
        // Every line was answered; only the save failed.
        #expect(done.stdout.split(separator: "\n").count == (second + third).split(separator: "\n").count)
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
        // No temporary file; the lock file could not be removed (the next writer takes it over).
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["state.json", "state.json.lock"])

        try TmpFS.setImmutable(folder, false)
        let next = try await CLI.run(["filter", "--state", state], input: StateStoreTests.fleet(lines: 10, accounts: 5, seed: 4))
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["state.json"])
    }

    @Test(arguments: Formats.files("s"))
    func aStateOnAReadOnlyMountIsExit3BeforeAnyLine(_ name: String) async throws {
        let disk = try TmpFS.scratch(size: "8m")
        defer { disk.release() }
        let state = disk.path + "/" + name
        let input = StateStoreTests.fleet(lines: 300, accounts: 30, seed: 6)
        #expect(try await CLI.run(["filter", "--state", state], input: input).status == 0)
        try disk.remount("ro")
        let run = try await CLI.run(["filter", "--state", state], input: input)
        #expect(run.status == 3)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("\(state).lock: cannot create the lock file: Read-only file system"), "\(run.stderr)")
    }

    /// A state on read-only media (a backup, a read-only mount) can still be inspected:
    /// without its `-shm` file (a clean close removes it) SQLite could not open it, so it
    /// is read as an immutable file.
    @Test func anSQLiteStateOnAReadOnlyMountCanBeInspected() async throws {
        let disk = try TmpFS.scratch(size: "8m"), dir = disk.folder
        defer { disk.release() }
        let state = disk.path + "/s (1).sqlite"
        let input = StateStoreTests.fleet(lines: 3000, accounts: 30, seed: 6)
        #expect(try await CLI.run(["filter", "--jobs", "2", "--state", state], input: input).status == 0)
        #expect(!FileManager.default.fileExists(atPath: state + "-shm"))
        let before = try await CLI.run(["tree", "--state", state, "--account", "a3", "--json"])
        #expect(before.status == 0)
        // A reading connection leaves `-shm` (and an empty `-wal`) behind, which it cannot
        // remove; a copy of the database alone has neither.
        for suffix in ["-shm", "-wal"] { unlink(state + suffix) }
        try disk.remount("ro")
        let info = try await CLI.run(["state", "info", state])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("accounts: 30\n") && info.stdout.contains("last seq: 3000\n"), "\(info.stdout)")
        let tree = try await CLI.run(["tree", "--state", state, "--account", "a3", "--json"])
        #expect(tree.status == 0 && tree.stdout == before.stdout, "\(tree.stderr)")
        #expect(try await CLI.run(["state", "convert", state, dir + "/copy.json"]).status == 0)
    }
}

extension ReadOnlyFolderTests {
    /// `-o FILE` is put in place before a JSON state is: when FILE cannot be (its folder
    /// turned unwritable), the state keeps its previous content and is not ahead of it.
    @Test func aJSONStateIsNotSavedWhenOutputFileCannotBePutInPlace() async throws {
        let disk = try TmpFS.scratch(size: "16m"), dir = disk.folder
        defer { disk.release() }
        let folder = disk.path + "/out", out = folder + "/out.ndjson", state = dir + "/state.json"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try "old\n".write(toFile: out, atomically: false, encoding: .utf8)
        #expect(
            try await CLI.run(["filter", "--state", state], input: StateStoreTests.fleet(lines: 200, accounts: 20, seed: 1)).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: state))

        let run = try FullDiskTests.Running(["filter", "--state", state, "-o", out], in: dir)
        // The temporary FILE is made at start; once it exists, the folder turns unwritable,
        // so that the rename at the end fails.
        #expect(try waitUntil(deadline: 60) { try FileManager.default.contentsOfDirectory(atPath: folder).count >= 2 })
        try TmpFS.setImmutable(folder, true)
        defer { try? TmpFS.setImmutable(folder, false) }
        run.feed(StateStoreTests.fleet(lines: 2000, accounts: 200, seed: 2))
        let done = try await run.finish()
        #expect(done.status == 4, "\(done.stderr)")
        #expect(done.stderr.contains("(the state file \(state) keeps its previous content)"), "\(done.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("state.json.tmp") }.isEmpty)
    }
}
