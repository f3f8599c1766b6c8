import BadgeFlowTestSupport
import Foundation
import Testing

@testable import BadgeFlow

/// The owner of a filter run's resources (``FilterPipeline``), in process on real states:
/// its phases, one close in one order on every way out (finished, dropped, refused at
/// open), no thread left behind, the lock released last.
@Suite struct FilterPipelineTests {
    /// A push to `account`.
    static func push(_ account: String) -> String {
        #"{"op":"push","account":"\#(account)","device":"d","at":1732269700,"payload":{"aps":{"alert":"hi","thread-id":"t"}}}"#
    }

    static var stdout: StateSession.Results {
        StateSession.Results(name: "stdout", isFile: false, replacesAtomically: false, commit: { nil }, discard: {})
    }

    static func pipeline(
        _ state: String?, input: String = "in.ndjson", ticking: Ticking? = nil, _ change: (inout StateSession.Options) -> Void = { _ in }
    ) throws(StateSession.Failure) -> FilterPipeline {
        var options = StateSession.Options()
        change(&options)
        return try FilterPipeline(
            state: state, rules: .builtIn, rulesGiven: false, input: input, options: options,
            clock: ticking.map { clock in { clock.read() } } ?? StateSession.monotonic)
    }

    /// A clock that moves a second at each reading: every batch finds a checkpoint due.
    final class Ticking: @unchecked Sendable {
        var now = 0.0
        func read() -> Double {
            now += 1
            return now
        }
    }

    /// Feeds `count` pushes to distinct accounts, each batch "written" and the pipeline told.
    static func feed(_ pipeline: FilterPipeline, count: Int, from first: Int = 0) {
        for i in first..<(first + count) {
            var line = push("a\(i)")
            line.withUTF8 { bytes in pipeline.filter.feed(.text(UnsafeRawBufferPointer(bytes))) { _ in pipeline.batchWritten() } }
        }
        pipeline.filter.finish { _ in pipeline.batchWritten() }
    }

    /// Whether another writer can take the state's lock now (it opens and closes at once);
    /// false only when it is refused as in use.
    static func lockIsFree(_ state: String) throws -> Bool {
        do throws(StateSession.Failure) {
            try pipeline(state, input: "other").close()
            return true
        } catch {
            guard error.message.contains("in use by pid") else { throw error }
            return false
        }
    }

    @Test(arguments: Formats.all)
    func aRunGoesThroughItsPhasesAndClosesEverythingInOrder(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let pipeline = try Self.pipeline(state)
        #expect(pipeline.phase == .opened)
        try pipeline.start(jobs: 2, linesPerBatch: 64)
        #expect(pipeline.phase == .running)
        Self.feed(pipeline, count: 1000)
        let ended = pipeline.threadsEnded
        // Two jobs and more than one batch: the scanners ran (and, with a database, the
        // readers and the committer).
        #expect(!ended())
        #expect(try pipeline.finish(Self.stdout, writeError: nil, outputClosed: false) == false)
        // The last save is in, every thread has ended and the store is closed; the lock is
        // still held, for the owner to put its results in place.
        #expect(pipeline.phase == .finished)
        #expect(ended())
        #expect(try Self.lockIsFree(state) == false)
        if format == "sqlite" {
            // The last connection closed removed the WAL: the read-only readers closed first.
            #expect(!FileIO.exists(state + "-wal"))
        }
        pipeline.close()
        #expect(pipeline.phase == .closed)
        #expect(try Self.lockIsFree(state))
        // Once only.
        pipeline.close()
        #expect(pipeline.phase == .closed)
        let reopened = try StateFormat.open(path: state, readOnly: true)
        defer { reopened.close() }
        #expect(try reopened.info().accounts == 1000)
        #expect(reopened.resumePoint.map(\.seq) ?? 1000 == 1000)
    }

    /// A run that goes away without its last save (an error path of the command) leaves no
    /// thread and no lock behind, and commits nothing more than its checkpoints did.
    @Test(arguments: Formats.checkpointing)
    func aDroppedPipelineEndsItsThreadsAndReleasesTheLock(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        var pipeline: FilterPipeline? = try Self.pipeline(state) { $0.checkpointInterval = 3600 }
        try pipeline?.start(jobs: 2, linesPerBatch: 64)
        if let pipeline { Self.feed(pipeline, count: 500) }
        let ended = pipeline?.threadsEnded ?? { false }
        #expect(!ended())
        pipeline = nil
        #expect(ended())
        #expect(try Self.lockIsFree(state))
        let reopened = try StateFormat.open(path: state, readOnly: true)
        defer { reopened.close() }
        // No checkpoint was due: the state holds none of the run's lines.
        #expect(reopened.resumePoint?.seq == 0)
    }

    /// Refused at open (the input its last checkpoint read): nothing is left open, so the
    /// next run takes the lock.
    @Test(arguments: Formats.checkpointing)
    func aPipelineRefusedAtOpenLeavesNothingOpen(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let first = try Self.pipeline(state, input: "day1")
        try first.start(jobs: 1, linesPerBatch: 1)
        Self.feed(first, count: 3)
        _ = try first.finish(Self.stdout, writeError: nil, outputClosed: false)
        first.close()
        let refused = #expect(throws: StateSession.Failure.self) { try Self.pipeline(state, input: "day1") }
        #expect(refused?.kind == .usage)
        #expect(try Self.lockIsFree(state))
        let resumed = try Self.pipeline(state, input: "day1") { $0.resume = .resume }
        #expect(resumed.skipLines == 3)
        resumed.close()
        #expect(resumed.phase == .closed)
    }

    /// A last save that fails ends the run as failed, with everything closed all the same.
    @Test func aFailedLastSaveEndsTheRunAsFailed() throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s.sqlite")
        let pipeline = try Self.pipeline(state)
        try pipeline.start(jobs: 1, linesPerBatch: 1)
        Self.feed(pipeline, count: 2)
        let failing = StateSession.Results(
            name: "out.ndjson", isFile: true, replacesAtomically: true, commit: { "out.ndjson: cannot rename: test" }, discard: {})
        let failure = #expect(throws: StateSession.Failure.self) {
            try pipeline.finish(failing, writeError: nil, outputClosed: false)
        }
        #expect(failure?.kind == .io)
        #expect(pipeline.threadsEnded())
        pipeline.close()
        #expect(pipeline.phase == .failed)
        #expect(try Self.lockIsFree(state))
    }

    /// The state's store opens connections and starts no thread: before `start` the
    /// pipeline has none, and one job starts none but the committer's.
    @Test(arguments: Formats.checkpointing)
    func oneJobRunsNoScannerAndNoReader(_ format: String) throws {
        let folder = try TemporaryFolder()
        let pipeline = try Self.pipeline(folder.file("s." + format))
        #expect(pipeline.threadsEnded())
        try pipeline.start(jobs: 1, linesPerBatch: 8)
        Self.feed(pipeline, count: 100)
        // The committer's thread runs; no reader was made.
        #expect(!pipeline.threadsEnded())
        #expect(pipeline.filter.prefetcher == nil)
        #expect(try pipeline.finish(Self.stdout, writeError: nil, outputClosed: false) == false)
        #expect(pipeline.threadsEnded())
        pipeline.close()
    }

    /// Dropped with a commit under way (a checkpoint is due at every batch): the commit
    /// ends before the connection and the store it writes through close, so the state opens
    /// again holding exactly the lines its last checkpoint covers (one new account a line).
    @Test(arguments: Formats.checkpointing)
    func aPipelineDroppedMidCommitLeavesAConsistentState(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Ticking()
        var pipeline: FilterPipeline? = try Self.pipeline(state, ticking: clock) { $0.checkpointInterval = 0.5 }
        try pipeline?.start(jobs: 2, linesPerBatch: 64)
        if let pipeline {
            for i in 0..<3000 {
                var line = Self.push("a\(i)")
                line.withUTF8 { bytes in pipeline.filter.feed(.text(UnsafeRawBufferPointer(bytes))) { _ in pipeline.batchWritten() } }
            }
            #expect(pipeline.currentStats.checkpoints > 10)
        }
        let ended = pipeline?.threadsEnded ?? { false }
        pipeline = nil
        #expect(ended())
        #expect(try Self.lockIsFree(state))
        let reopened = try StateFormat.open(path: state, readOnly: true)
        defer { reopened.close() }
        let seq = try #require(reopened.resumePoint?.seq)
        #expect(seq > 0 && seq <= 3000)
        #expect(try reopened.info().accounts == seq)
    }

    /// The results' target is the pipeline's: closing it drops results never put in place
    /// (`-o FILE` keeps its old content, no temporary file is left), and results put in
    /// place stay.
    @Test func theResultsTargetIsDroppedAtCloseUnlessPutInPlace() throws {
        let folder = try TemporaryFolder()
        let target = folder.file("out.ndjson")
        try FileIO.writeAtomically(Array("old\n".utf8), to: target)
        for commit in [false, true] {
            let pipeline = try Self.pipeline(folder.file("s.sqlite"))
            let file = try ResultsFile(target)
            pipeline.own(file)
            #expect(file.replacesAtomically)
            try pipeline.start(jobs: 1, linesPerBatch: 16)
            var line = Self.push("a")
            line.withUTF8 { bytes in
                pipeline.filter.feed(.text(UnsafeRawBufferPointer(bytes))) { w in
                    _ = w.bytes.withUnsafeBytes { System.write(file.fd, $0.baseAddress.unsafelyUnwrapped, $0.count) }
                }
            }
            pipeline.filter.finish { w in
                _ = w.bytes.withUnsafeBytes { System.write(file.fd, $0.baseAddress.unsafelyUnwrapped, $0.count) }
            }
            if commit { try pipeline.commitResults() }
            pipeline.close()
            let text = try FileIO.readString(target)
            #expect(commit ? text.hasPrefix(#"{"seq":1,"op":"push""#) : text == "old\n", "commit \(commit)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp.") }.isEmpty)
            // Put in place or dropped once: a second call does nothing.
            file.discard()
            try file.commit()
        }
    }
}
