import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The filter's state policy (``StateSession``), in process on real states in a temporary
/// folder, with a clock the test moves: when a checkpoint is due, idle checkpoints,
/// eviction under `--max-resident`, compaction, resume by count and by N, the same input
/// refused, and rules over time.
@Suite struct StateSessionTests {
    /// A clock that moves only when the test says so.
    final class Clock: @unchecked Sendable {
        var now = 0.0
    }

    /// The notices a session gave.
    final class Notices {
        var lines: [String] = []
    }

    /// A push to `account` (device "d", thread "t") at a fixed time.
    static func push(_ account: String) -> String {
        #"{"op":"push","account":"\#(account)","device":"d","at":1732269700,"payload":{"aps":{"alert":"hi","thread-id":"t"}}}"#
    }

    /// A session over `state` with batches of one line on one thread, timed by `clock`.
    static func session(
        _ state: String?, clock: Clock, input: String = "in.ndjson", rules: RuleSet = .builtIn, rulesGiven: Bool = false,
        notices: Notices? = nil, _ change: (inout StateSession.Options) -> Void = { _ in }
    ) throws(StateSession.Failure) -> FilterPipeline {
        var options = StateSession.Options()
        change(&options)
        let session = try FilterPipeline(
            state: state, rules: rules, rulesGiven: rulesGiven, input: input, options: options, clock: { clock.now },
            notice: { notices?.lines.append($0) })
        _ = try session.start(jobs: 1, linesPerBatch: 1)
        return session
    }

    /// Feeds `line`; its result (when its batch is applied) is "written" and the session told.
    @discardableResult
    static func feed(_ session: FilterPipeline, _ line: String) -> String {
        var out: [UInt8] = []
        var line = line
        line.withUTF8 { bytes in
            session.filter.feed(.text(UnsafeRawBufferPointer(bytes))) { w in
                out += w.bytes
                session.batchWritten()
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Ends the session as a run to stdout does.
    static func close(_ session: FilterPipeline) throws(StateSession.Failure) {
        session.filter.finish { _ in session.batchWritten() }
        let results = StateSession.Results(name: "stdout", isFile: false, replacesAtomically: false, commit: { nil }, discard: {})
        _ = try session.finish(results, writeError: nil, outputClosed: false)
        session.close()
    }

    /// What the state at `path` recorded last: its seq and input.
    static func committed(_ path: String) throws -> ResumePoint? {
        let store = try StateFormat.open(path: path, readOnly: true)
        defer { store.close() }
        return store.resumePoint
    }

    /// Accounts that left memory wait for the next read-ahead to free them; once the input
    /// is idle none comes, so `idle()` frees them (else they stay beside `--max-resident`).
    @Test(arguments: Formats.checkpointing)
    func accountsThatLeftMemoryAreFreedWhenTheInputIsIdle(_ format: String) throws {
        let folder = try TemporaryFolder()
        var options = StateSession.Options()
        options.maxResident = 1000
        let clock = Clock()
        let session = try FilterPipeline(
            state: folder.file("s." + format), rules: .builtIn, rulesGiven: false, input: "in.ndjson", options: options,
            clock: { clock.now }, notice: { _ in })
        _ = try session.start(jobs: 2, linesPerBatch: 512)
        for i in 0..<6000 {
            var line = Self.push("a\(i)")
            line.withUTF8 { bytes in session.filter.feed(.text(UnsafeRawBufferPointer(bytes))) { _ in session.batchWritten() } }
        }
        session.filter.finish { _ in session.batchWritten() }
        // Left memory and kept for the readers.
        #expect(session.filter.withStream { $0.table.releasedCount } > 0)
        clock.now += 10
        _ = session.idle()
        #expect(session.filter.withStream { $0.table.releasedCount } == 0)
        #expect(session.filter.withStream { $0.residentCount } <= 1000)
        try Self.close(session)
    }

    @Test(arguments: Formats.checkpointing)
    func aCheckpointIsDueWhenTheIntervalHasPassedNotBefore(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let session = try Self.session(state, clock: clock) { $0.checkpointInterval = 1 }
        Self.feed(session, Self.push("a"))
        clock.now = 0.999
        Self.feed(session, Self.push("b"))
        #expect(session.currentStats.checkpoints == 0)
        #expect(try Self.committed(state)?.seq == 0)
        clock.now = 1.0
        Self.feed(session, Self.push("c"))
        // Begun; its seq counts as committed once the commit is waited for.
        #expect(session.currentStats.checkpoints == 1 && session.currentStats.committedSeq == 0)
        // The next one is due a full interval after this one, not after the start.
        clock.now = 1.5
        Self.feed(session, Self.push("d"))
        #expect(session.currentStats.checkpoints == 1)
        clock.now = 2.0
        Self.feed(session, Self.push("e"))
        #expect(session.currentStats.checkpoints == 2 && session.currentStats.committedSeq == 3)
        try Self.close(session)
        #expect(session.currentStats.committedSeq == 5)
        #expect(try Self.committed(state) == ResumePoint(seq: 5, input: "in.ndjson"))
        #expect(session.currentStats.storedAccounts == 5 && session.currentStats.residentAccounts == 5)
    }

    @Test(arguments: Formats.checkpointing)
    func anIdleStreamCommitsOnceDueAndOnlyWhenResultsWentOutSince(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let session = try Self.session(state, clock: clock) { $0.checkpointInterval = 1 }
        // Nothing written yet: no timer.
        #expect(session.idle() == -1)
        Self.feed(session, Self.push("a"))
        clock.now = 0.25
        // Not due: wait the rest of the interval (750 ms, and one to be past it).
        #expect(session.idle() == 751)
        #expect(session.currentStats.checkpoints == 0)
        clock.now = 1.0
        #expect(session.idle() == -1)
        // Committed and waited for: the stats are what a reader of the state sees.
        #expect(session.currentStats.checkpoints == 1 && session.currentStats.committedSeq == 1)
        #expect(try Self.committed(state)?.seq == 1)
        #expect(session.currentStats.storedAccounts == 1)
        // Nothing new since: no second commit, however long it stays idle.
        clock.now = 60
        #expect(session.idle() == -1 && session.currentStats.checkpoints == 1)
        try Self.close(session)
        #expect(try Self.committed(state)?.seq == 1)
    }

    /// A commit begun under load (after a batch) counts once waited for; going idle waits for
    /// it, so an idle filter's stats are what `state info` shows.
    @Test(arguments: Formats.checkpointing)
    func goingIdleWaitsForTheCommitUnderWaySoTheStatsAreFresh(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let session = try Self.session(state, clock: clock) { $0.checkpointInterval = 1 }
        Self.feed(session, Self.push("a"))
        clock.now = 1
        Self.feed(session, Self.push("b"))
        #expect(session.currentStats.checkpoints == 1 && session.currentStats.committedSeq == 0)
        // Nothing written since it began: no new checkpoint, and the one under way is finished.
        clock.now = 1.5
        #expect(session.idle() == -1)
        let stats = session.currentStats
        #expect(stats.checkpoints == 1 && stats.committedSeq == 2 && stats.storedAccounts == 2)
        #expect(try Self.committed(state)?.seq == 2)
        try Self.close(session)
    }

    @Test(arguments: Formats.checkpointing)
    func resultsToAFileCommittedAtTheEndGetNoCheckpointOnTheWay(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let session = try Self.session(state, clock: clock) { $0.resultsAtEnd = true }
        Self.feed(session, Self.push("a"))
        clock.now = 10
        Self.feed(session, Self.push("b"))
        #expect(session.idle() == -1)
        #expect(session.currentStats.checkpoints == 0)
        var order: [String] = []
        let results = StateSession.Results(
            name: "out", isFile: true, replacesAtomically: true,
            commit: {
                // The state is not ahead of the results: nothing committed yet.
                order.append("results at seq \(((try? Self.committed(state)) ?? nil)?.seq ?? -1)")
                return nil
            }, discard: { order.append("discarded") })
        #expect(try session.finish(results, writeError: nil, outputClosed: false))
        #expect(order == ["results at seq 0"])
        #expect(try Self.committed(state)?.seq == 2)
    }

    @Test(arguments: Formats.checkpointing)
    func overMaxResidentCommittedAccountsLeaveDownTo15Of16AndLoadAgainTheSame(_ format: String) throws {
        let folder = try TemporaryFolder()
        let clock = Clock()
        let bounded = try Self.session(folder.file("bounded." + format), clock: clock) {
            $0.maxResident = 32
            $0.checkpointInterval = 1000
        }
        let unbounded = try Self.session(folder.file("unbounded." + format), clock: clock) { $0.checkpointInterval = 1000 }
        var resident: [Int] = []
        var same = true
        for round in 0..<3 {
            for i in 0..<40 {
                let line = Self.push("account-\(i)")
                same = same && Self.feed(bounded, line) == Self.feed(unbounded, line)
                resident.append(bounded.currentStats.residentAccounts)
            }
            _ = round
        }
        #expect(same, "evicted accounts load again as they were")
        // Growing to 32, then never over it, and evictions keep 32 - 32/16 = 30: the next
        // ones wait a while.
        #expect(Array(resident.prefix(32)) == Array(1...32))
        #expect(resident.dropFirst(32).allSatisfy { (30...32).contains($0) } && resident.dropFirst(32).contains(30), "\(resident)")
        // Half of --max-resident changed: committed early, before the interval.
        #expect(bounded.currentStats.checkpoints > 0 && unbounded.currentStats.checkpoints == 0)
        try Self.close(bounded)
        try Self.close(unbounded)
    }

    /// A JSON state, or no state at all (a stateless run over a fleet holds every account too).
    @Test(arguments: ["s.json", nil])
    func withoutCheckpointsIdleAccountsGoCompactPastAQuarterOverTheLimit(_ name: String?) throws {
        let folder = try TemporaryFolder()
        let clock = Clock()
        let session = try Self.session(name.map(folder.file), clock: clock) { $0.expandedAccounts = 8 }
        var expanded: [Int] = []
        for i in 0..<11 {
            Self.feed(session, Self.push("account-\(i)"))
            expanded.append(session.filter.stream.accounts.count)
        }
        // 8 + 8/4 = 10 may stay expanded; the 11th sends the least recently used compact.
        #expect(Array(expanded.prefix(10)) == Array(1...10))
        #expect(expanded[10] <= 8, "\(expanded)")
        #expect(session.filter.stream.accountCount == 11 && session.currentStats.checkpoints == 0)
        try Self.close(session)
        guard let name else { return }
        let saved = try StateFormat.open(path: folder.file(name), readOnly: true)
        #expect(try saved.info().accounts == 11)
    }

    @Test(arguments: Formats.checkpointing)
    func resumeByCountSkipsTheCheckpointedLinesOfTheSameInputOnly(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let first = try Self.session(state, clock: clock, input: "file A")
        for id in ["a", "b", "c"] { Self.feed(first, Self.push(id)) }
        try Self.close(first)

        let notices = Notices()
        let again = try Self.session(state, clock: clock, input: "file A", notices: notices) { $0.resume = .resume }
        #expect(again.skipLines == 3)
        #expect(notices.lines == ["badgeflow: --resume: skipping the first 3 lines of file A (answered before the last checkpoint)"])
        // The next line read is line 4.
        #expect(Self.feed(again, Self.push("d")).hasPrefix(#"{"seq":4,"#))
        try Self.close(again)

        let other = #expect(throws: StateSession.Failure.self) {
            try Self.session(state, clock: clock, input: "file B") { $0.resume = .resume }
        }
        #expect(other?.kind == .state)
        #expect(other?.message == "--resume: \(state) was checkpointed reading file A, not file B")
    }

    @Test(arguments: Formats.checkpointing)
    func resumeByNSkipsTheNumbersAtOrBelowTheCheckpointFromAnyInput(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let first = try Self.session(state, clock: clock, input: "stdin") { $0.numbered = true }
        Self.feed(first, "1040959\t" + Self.push("a"))
        Self.feed(first, "1040960\t" + Self.push("b"))
        try Self.close(first)
        #expect(try Self.committed(state)?.seq == 1_040_960)

        let notices = Notices()
        let later = try Self.session(state, clock: clock, input: "offset 1000000", notices: notices) {
            $0.numbered = true
            $0.resume = .resume
        }
        #expect(later.skipLines == 0)
        #expect(
            notices.lines == ["badgeflow: --resume: skipping the lines numbered 1040960 or below (answered before the last checkpoint)"])
        #expect(Self.feed(later, "1040960\t" + Self.push("b")).isEmpty)
        #expect(Self.feed(later, "1040961\t" + Self.push("c")).hasPrefix(#"{"seq":1040961,"#))
        try Self.close(later)
        #expect(try Self.committed(state)?.seq == 1_040_961)
    }

    @Test(arguments: Formats.checkpointing)
    func theInputOfTheLastCheckpointIsRefusedWithoutResumeOrNoResume(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let first = try Self.session(state, clock: clock, input: "file A")
        Self.feed(first, Self.push("a"))
        try Self.close(first)

        let refused = #expect(throws: StateSession.Failure.self) { try Self.session(state, clock: clock, input: "file A") }
        #expect(refused?.kind == .usage)
        #expect(refused?.message.contains("its last checkpoint (seq 1) was committed reading this input (file A)") == true)
        // Applied again on purpose: the account's count goes on.
        let again = try Self.session(state, clock: clock, input: "file A") { $0.resume = .noResume }
        #expect(again.skipLines == 0)
        #expect(Self.feed(again, Self.push("a")).contains(#""icon":2"#))
        try Self.close(again)
        // Another file, or stdin (which has no identity), is not refused.
        try Self.close(try Self.session(state, clock: clock, input: "file B"))
        try Self.close(try Self.session(state, clock: clock, input: "stdin"))
    }

    /// The default rules with `change` applied to their text.
    static func rules(_ change: (String) -> String) throws -> RuleSet {
        try RuleSet.parse(change(try Fixtures.text("rules/default.json")), file: "rules.json")
    }

    @Test(arguments: Formats.files("s"))
    func rulesThatFitAreTakenAndRecordedRulesThatDoNotAreRefused(_ name: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file(name)
        let clock = Clock()
        let original = try Self.rules { $0 }
        let first = try Self.session(state, clock: clock, input: "stdin", rules: original, rulesGiven: true)
        Self.feed(first, Self.push("a"))
        try Self.close(first)

        let more = try Self.rules {
            $0.replacing(
                #""rules": ["#,
                with: #""rules": [{ "name": "vip", "match": { "/vip": { "exists": true } }, "path": "root.vip", "action": "increment" },"#)
        }
        #expect(more.fingerprint != original.fingerprint)
        let fits = try Self.session(state, clock: clock, input: "stdin", rules: more, rulesGiven: true)
        #expect(fits.session.rules.fingerprint == more.fingerprint)
        let vip = #"{"op":"push","account":"a","device":"d","at":1732269800,"payload":{"vip":1,"aps":{"alert":"v"}}}"#
        #expect(Self.feed(fits, vip).contains(#""rule":"vip""#))
        try Self.close(fits)
        // Recorded with the run: a session without rules takes them.
        let store = try StateFormat.open(path: state, readOnly: true)
        #expect(try store.recordedRules()?.fingerprint == more.fingerprint)
        store.close()
        let recorded = try Self.session(state, clock: clock, input: "stdin")
        #expect(recorded.session.rules.fingerprint == more.fingerprint)
        try Self.close(recorded)

        let top = try Self.rules {
            $0.replacing(#""root": "root""#, with: #""root": "top""#).replacing(#""path": "root""#, with: #""path": "top""#)
                .replacing("root.", with: "top.")
        }
        let refused = #expect(throws: StateSession.Failure.self) {
            try Self.session(state, clock: clock, input: "stdin", rules: top, rulesGiven: true)
        }
        #expect(refused?.kind == .state)
        #expect(refused?.message.contains(#"root "top""#) == true, "\(refused?.message ?? "")")
    }

    /// A second writer is refused, under the same name or another one for the same state (a
    /// symbolic link made before or after the state exists; the path through `./`): all
    /// take the same lock, which the first releases when it ends.
    @Test(arguments: Formats.files("s"), ["same", "link", "link-first", "dot"])
    func aSecondWriterIsRefusedNamingTheFirst(_ name: String, _ how: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file(name)
        let clock = Clock()
        var other = how == "dot" ? folder.path + "/./" + name : state
        if how.hasPrefix("link") {
            other = folder.file("other-" + name)
            // "link-first": a link to a state that is not there yet (a JSON state is only
            // written at the end).
            if how == "link" { try Self.close(try Self.session(state, clock: clock)) }
            #expect(symlink(name, other) == 0)
        }
        let first = try Self.session(state, clock: clock)
        let refused = #expect(throws: StateSession.Failure.self) { try Self.session(other, clock: clock) }
        #expect(refused?.kind == .state)
        #expect(refused?.message.hasSuffix(": in use by pid \(getpid())") == true, "\(refused?.message ?? "")")
        try Self.close(first)
        try Self.close(try Self.session(other, clock: clock))
    }

    @Test(arguments: Formats.checkpointing)
    func aClosedOutputCommitsNothingPastTheLastCheckpoint(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format)
        let clock = Clock()
        let session = try Self.session(state, clock: clock)
        Self.feed(session, Self.push("a"))
        clock.now = 1
        Self.feed(session, Self.push("b"))
        #expect(session.currentStats.checkpoints == 1)
        Self.feed(session, Self.push("c"))
        // The reader went away while line 4 was written.
        var line = Self.push("d")
        line.withUTF8 { bytes in session.filter.feed(.text(UnsafeRawBufferPointer(bytes))) { _ in session.outputFailed() } }
        clock.now = 10
        let results = StateSession.Results(name: "stdout", isFile: false, replacesAtomically: false, commit: { nil }, discard: {})
        #expect(try session.finish(results, writeError: nil, outputClosed: true) == false)
        #expect(try Self.committed(state)?.seq == 2)
        #expect(session.currentStats.committedSeq == 2)
    }

    @Test func aStateSavedAtTheEndHoldsNoLineOfABatchWhoseResultsWereNotWritten() throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s.json")
        let clock = Clock()
        let session = try Self.session(state, clock: clock)
        #expect(Self.feed(session, Self.push("a")).contains(#""icon":1"#))
        var line = Self.push("a")
        line.withUTF8 { bytes in session.filter.feed(.text(UnsafeRawBufferPointer(bytes))) { _ in session.outputFailed() } }
        let results = StateSession.Results(name: "stdout", isFile: false, replacesAtomically: false, commit: { nil }, discard: {})
        #expect(try session.finish(results, writeError: nil, outputClosed: true) == false)
        let saved = try StateFormat.open(path: state, readOnly: true)
        #expect(try saved.account("a", rules: .builtIn)?.tree.total == 1)
    }

    /// The stats `--checkpoint-stats` and `--metrics` read: pauses are measured on the
    /// session's clock (here one that moves 0.25 s at each reading).
    @Test func pausesAreMeasuredOnTheSessionsClock() throws {
        let folder = try TemporaryFolder()
        let clock = Clock()
        var options = StateSession.Options()
        options.checkpointInterval = 1
        let session = try FilterPipeline(
            state: folder.file("s.sqlite"), rules: .builtIn, rulesGiven: false, input: "stdin", options: options,
            clock: {
                clock.now += 0.25
                return clock.now
            })
        _ = try session.start(jobs: 1, linesPerBatch: 1)
        for id in ["a", "b", "c", "d"] { Self.feed(session, Self.push(id)) }
        let stats = session.currentStats
        // Each batch reads the clock once; the checkpoint (due at the fourth) twice more.
        #expect(stats.checkpoints == 1 && stats.committedSeq == 0)
        #expect(stats.longestPause == 0.25 && stats.pauseTime == 0.25)
        #expect(stats.residentAccounts == 4)
        try Self.close(session)
    }
}
