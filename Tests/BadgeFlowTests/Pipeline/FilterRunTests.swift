import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The filter's run loop (``FilterRun``) in process: real files, pipes and states in a
/// temporary folder, the results taken by a closure, and a clock the test moves (the
/// session's and the metrics'), so idle flushes and idle checkpoints happen exactly when the
/// test says.
@Suite struct FilterRunTests {
    /// A clock that moves only when the test says so.
    final class Clock {
        var now = 0.0
    }

    /// What a run wrote and said.
    final class Sink {
        /// The result lines, as written.
        var lines: [String] = []
        /// The number of output calls (one per batch written).
        var writes = 0
        /// The lines for stderr.
        var messages: [String] = []
        /// Called with each batch after it is recorded; returns 0 or an errno.
        var onWrite: (Sink) -> Int32 = { _ in 0 }

        /// The run's output: records a batch's lines.
        func output(_ bytes: UnsafeRawBufferPointer) -> Int32 {
            writes += 1
            lines += String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            return onWrite(self)
        }
    }

    /// What a run told its progress.
    final class Calls: FilterProgress {
        var calls: [String] = []
        func begin(fd: Int32, lines: Int) { calls.append("begin \(lines)") }
        func check(lines: Int) { calls.append("check \(lines)") }
        func end() { calls.append("end") }
        func clear() { calls.append("clear") }
    }

    /// A push to `account` (device "d") at a fixed time.
    static func push(_ account: String) -> String {
        #"{"op":"push","account":"\#(account)","device":"d","at":1732269700,"payload":{"aps":{"alert":"hi","thread-id":"t"}}}"#
    }

    /// Pushes to `a1`…`aN`, one a line.
    static func pushes(_ range: ClosedRange<Int>) -> String {
        range.map { push("a\($0)") + "\n" }.joined()
    }

    /// Writes `text` to `path` in place (the same inode): `O_APPEND` or `O_TRUNC`.
    static func put(_ text: String, to path: String, flags: Int32) {
        let fd = open(path, O_WRONLY | O_CREAT | flags, 0o644)
        #expect(fd >= 0)
        send(text, to: fd)
        close(fd)
    }

    /// Writes `text` to `fd`.
    static func send(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count)
    }

    /// A started session over `state` (nil: none) reading `sources`, timed by `clock`, and a
    /// run of it writing to `sink` (and `metrics` every `metricsPeriod` seconds, by default
    /// the checkpoint interval as `filter` does).
    static func run(
        _ state: String?, sources: [String], clock: Clock, sink: Sink, metrics: String? = nil, metricsPeriod: Double? = nil,
        stdin: Int32 = 0,
        jobs: Int = 1, linesPerBatch: Int = 2048, _ change: (inout StateSession.Options) -> Void = { _ in }
    ) throws -> FilterRun {
        var options = StateSession.Options()
        change(&options)
        let session = try FilterPipeline(
            state: state, rules: .builtIn, rulesGiven: false, input: StateSession.identity(of: sources), options: options,
            clock: { clock.now }, notice: { sink.messages.append($0) })
        let run = FilterRun(
            pipeline: session, output: sink.output, outputName: "stdout",
            metrics: metrics.map {
                MetricsFile(path: $0, period: metricsPeriod ?? options.checkpointInterval, warning: { sink.messages.append($0) })
            },
            stdin: stdin, clock: { clock.now }, message: { sink.messages.append($0) })
        try run.writeInitialMetrics()
        _ = try session.start(jobs: jobs, linesPerBatch: linesPerBatch)
        return run
    }

    /// Runs `run` over `sources` to stdout and releases the state.
    static func finish(_ run: FilterRun, _ sources: [String], progress: Calls? = nil) throws -> FilterRun.Outcome {
        defer { run.pipeline.close() }
        let results = StateSession.Results(name: "stdout", isFile: false, replacesAtomically: false, commit: { nil }, discard: {})
        return try run.run(sources, progress: progress, results: results)
    }

    /// What the state at `path` recorded last: its seq and accounts.
    static func committed(_ path: String) throws -> (seq: Int, accounts: Int) {
        let store = try StateFormat.open(path: path, readOnly: true)
        defer { store.close() }
        let info = try store.info()
        return (info.resume?.seq ?? -1, info.accounts)
    }

    /// The samples of the metrics file at `path`, by name.
    static func metrics(_ path: String) throws -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in try FileIO.readString(path).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { samples[String(parts[0])] = value }
        }
        return samples
    }

    /// The seq of each result line (`{"seq":N,…`).
    static func seqs(_ lines: [String]) -> [Int] {
        lines.compactMap { line in
            guard line.hasPrefix(#"{"seq":"#) else { return nil }
            return Int(line.dropFirst(7).prefix { $0.isNumber })
        }
    }

    @Test(arguments: Formats.checkpointing)
    func resumeSkipsTheCheckpointedLinesAndSaysWhenTheInputEndedBeforeThem(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format), input = folder.file("in.ndjson")
        Self.put(Self.pushes(1...5), to: input, flags: O_TRUNC)
        let clock = Clock()
        let first = Sink()
        #expect(try Self.finish(try Self.run(state, sources: [input], clock: clock, sink: first), [input]) == FilterRun.Outcome())
        #expect(Self.seqs(first.lines) == [1, 2, 3, 4, 5] && first.messages.isEmpty)
        #expect(try Self.committed(state).seq == 5)

        // Two more lines in the same file: the first five are passed over, unread.
        Self.put(Self.pushes(6...7), to: input, flags: O_APPEND)
        let second = Sink()
        let resumed = try Self.run(state, sources: [input], clock: clock, sink: second) { $0.resume = .resume }
        #expect(try Self.finish(resumed, [input]) == FilterRun.Outcome())
        #expect(Self.seqs(second.lines) == [6, 7])
        #expect(second.messages.count == 1 && second.messages[0].hasPrefix("badgeflow: --resume: skipping the first 5 lines of "))
        #expect(try Self.committed(state).seq == 7)

        // The same file cut to three lines: nothing is answered, and the run says why.
        Self.put(Self.pushes(1...3), to: input, flags: O_TRUNC)
        let third = Sink()
        let short = try Self.run(state, sources: [input], clock: clock, sink: third) { $0.resume = .resume }
        #expect(try Self.finish(short, [input]) == FilterRun.Outcome())
        #expect(third.lines.isEmpty)
        #expect(third.messages.last == "badgeflow: --resume: the input ended 4 lines before the checkpointed seq 7")
        #expect(try Self.committed(state).seq == 7)
    }

    @Test func anInputThatCannotBeReadOrIsCompressedIsReportedAndTheOthersAreRead() throws {
        let folder = try TemporaryFolder()
        let a = folder.file("a.ndjson"), gz = folder.file("b.ndjson.gz"), missing = folder.file("none.ndjson")
        Self.put(Self.pushes(1...2), to: a, flags: O_TRUNC)
        try folder.write("b.ndjson.gz", [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00])
        let sink = Sink()
        let sources = [a, missing, gz, a]
        let outcome = try Self.finish(try Self.run(nil, sources: sources, clock: Clock(), sink: sink), sources)
        var expected = FilterRun.Outcome()
        expected.inputFailed = true
        #expect(outcome == expected)
        #expect(Self.seqs(sink.lines) == [1, 2, 3, 4])
        #expect(
            sink.messages == [
                "badgeflow: \(missing): No such file or directory", "badgeflow: \(gz): gzip-compressed input; pipe it through zcat",
            ])
    }

    /// The reader went away (`EPIPE`), or the output failed otherwise: no further line is
    /// read (the progress, told every 1,024 lines read, hears of none), and the outcome
    /// tells the two apart.
    @Test(arguments: [EPIPE, EIO])
    func aClosedOutputStopsReading(_ failure: Int32) throws {
        let folder = try TemporaryFolder()
        let input = folder.file("in.ndjson")
        Self.put(Self.pushes(1...3000), to: input, flags: O_TRUNC)
        let sink = Sink()
        sink.onWrite = { $0.writes == 3 ? failure : 0 }
        let run = try Self.run(nil, sources: [input], clock: Clock(), sink: sink, linesPerBatch: 1)
        let progress = Calls()
        let outcome = try Self.finish(run, [input], progress: progress)
        #expect(progress.calls == ["begin 0", "end", "clear"])
        #expect(outcome.brokenPipe == (failure == EPIPE))
        #expect(outcome.writeError == (failure == EPIPE ? nil : "stdout: cannot write: \(String(cString: strerror(EIO)))"))
        #expect(sink.writes == 3)
        // Lines past the one whose result could not be written are not even read.
        #expect(run.pipeline.filter.seq == 3)
    }

    /// A live stream on a pipe that stays open: the results held back go out once no input is
    /// ready, a checkpoint is committed while idle once the (injected) clock says it is due,
    /// and the metrics are written at once (their own period is a minute) and show it as
    /// `state info` does: the commit was waited for.
    @Test(arguments: Formats.checkpointing)
    func anIdleStreamFlushesCommitsAndWritesFreshMetrics(_ format: String) throws {
        let folder = try TemporaryFolder()
        let state = folder.file("s." + format), metrics = folder.file("m.prom")
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        Self.send(Self.pushes(1...3), to: fds[1])
        let clock = Clock()
        let sink = Sink()
        let run = try Self.run(
            state, sources: ["-"], clock: clock, sink: sink, metrics: metrics, metricsPeriod: 60, stdin: fds[0], linesPerBatch: 2048
        ) { $0.checkpointInterval = 0.05 }
        var seen: [String] = []
        sink.onWrite = { sink in
            do {
                let m = try Self.metrics(metrics)
                let stored = try Self.committed(state)
                let stats = run.pipeline.currentStats
                let (seq, accounts) = (Int(m["badgeflow_committed_seq"] ?? -1), Int(m["badgeflow_accounts_stored"] ?? -1))
                seen.append(
                    "\(sink.lines.count) lines: state \(stored.seq)/\(stored.accounts), "
                        + "stats \(stats.committedSeq)/\(stats.storedAccounts ?? -1), metrics \(seq)/\(accounts)")
            } catch {
                seen.append("\(error)")
            }
            if sink.writes == 1 {
                // The first idle: a checkpoint is due from now on, and one more line comes.
                clock.now = 0.05
                Self.send(Self.pushes(4...4), to: fds[1])
            } else {
                close(fds[1])
            }
            return 0
        }
        let outcome = try Self.finish(run, ["-"])
        sink.onWrite = { _ in 0 }  // it holds the run
        #expect(outcome == FilterRun.Outcome())
        #expect(
            seen == [
                // Held back in a batch of 2048 lines, yet out while the pipe is open; nothing due.
                "3 lines: state 0/0, stats 0/0, metrics 0/0",
                // The idle checkpoint after them, waited for: stats and metrics agree with the state.
                "4 lines: state 3/3, stats 3/3, metrics 3/3",
            ])
        #expect(run.pipeline.currentStats.checkpoints == 2)
        let end = try Self.committed(state)
        #expect(end.seq == 4 && end.accounts == 4)
        let last = try Self.metrics(metrics)
        #expect(last["badgeflow_committed_seq"] == 4 && last["badgeflow_accounts_stored"] == 4)
        #expect(last["badgeflow_lines_read_total"] == 4 && last["badgeflow_results_total"] == 4)
    }
}
