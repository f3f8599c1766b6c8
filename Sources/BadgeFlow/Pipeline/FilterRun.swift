/// What draws the filter's progress as it reads (the CLI's bar on stderr).
package protocol FilterProgress: AnyObject {
    /// A file starts: `fd` is read from now on; `lines` were read before it.
    func begin(fd: Int32, lines: Int)
    /// Every ``FilterRun/progressLines`` lines: `lines` read so far.
    func check(lines: Int)
    /// The current file is read as far as it will be.
    func end()
    /// Every file is read: the progress goes from the screen.
    func clear()
}

/// One `badgeflow filter` run over its inputs: the loop that reads each INPUT, feeds the
/// lines to the pipeline's ``ParallelFilter``, writes the results, keeps a live stream going
/// while no input comes, writes `--metrics`, and finishes the ``FilterPipeline``.
///
/// What it does, in order:
/// - each INPUT is opened (`-`: ``stdin``); one that cannot be, or that is compressed
///   (``CompressedInput``), is reported and passed over (``Outcome/inputFailed``);
/// - `--resume` by count passes over the pipeline's ``FilterPipeline/skipLines`` first lines,
///   and says so when the input ended before them;
/// - each applied batch goes out in one call of `output`; a failed write closes the output:
///   reading stops, `EPIPE` (the reader went away) apart from any other error;
/// - while no input is ready, the results held back go out, the pipeline commits an idle
///   checkpoint when one is due and waits for it, and the metrics are written when their
///   period has passed or a commit finished;
/// - at the end (also after a signal: ``receivedSignal``), the last results go out, the
///   pipeline finishes with the results file (the last save, then its threads, connections
///   and store closed: ``FilterPipeline/finish(_:writeError:outputClosed:)``), and the
///   metrics are written a last time.
///
/// The caller keeps what depends on the command line and the terminal: options, the
/// pipeline's making and ``FilterPipeline/start(jobs:linesPerBatch:)``, its ``FilterPipeline/close()``, the progress bar, the
/// messages of a failure and the exit status.
package final class FilterRun {
    /// How a run ended, for the exit status.
    package struct Outcome: Sendable, Equatable {
        /// An INPUT could not be read, or was compressed (exit 4).
        package var inputFailed = false
        /// Why results could not be written (`NAME: cannot write: REASON`), other than a
        /// closed pipe; nil: none failed.
        package var writeError: String?
        /// The reader of the results went away (`EPIPE`): the run stopped quietly.
        package var brokenPipe = false
        /// The pipeline put the results file in place (else the caller commits it).
        package var resultsInPlace = false
        /// Why the last metrics write failed (nil: it did, or there are no metrics).
        package var metricsError: String?

        /// Nothing failed.
        package init() {}
    }

    /// Lines between two calls of ``FilterProgress/check(lines:)``.
    package static let progressLines = 1024

    /// The pipeline the run drives (started).
    package let pipeline: FilterPipeline
    /// The descriptor `-` reads (stdin; tests pass a pipe).
    package let stdin: Int32
    private let output: Output
    private let outputName: String
    private let metrics: MetricsFile?
    private let clock: () -> Double
    private let message: (String) -> Void

    /// Creates a run of `pipeline`.
    ///
    /// - Parameters:
    ///   - pipeline: the pipeline; ``run(_:progress:results:)`` wants it started.
    ///   - output: writes all of a batch's result bytes; returns 0, or the `errno` of the
    ///     failure (``write(to:)`` writes to a descriptor).
    ///   - outputName: what messages call the output (`stdout`, the `-o` path).
    ///   - metrics: where `--metrics` goes (nil: none).
    ///   - stdin: the descriptor an INPUT `-` reads.
    ///   - clock: monotonic seconds, for the metrics' period (tests pass their own).
    ///   - message: receives each line for stderr (an INPUT that cannot be read, a notice).
    package init(
        pipeline: FilterPipeline, output: @escaping Output, outputName: String, metrics: MetricsFile? = nil,
        stdin: Int32 = 0, clock: @escaping () -> Double = StateSession.monotonic, message: @escaping (String) -> Void
    ) {
        self.pipeline = pipeline
        self.output = output
        self.outputName = outputName
        self.metrics = metrics
        self.stdin = stdin
        self.clock = clock
        self.message = message
    }

    /// Writes the metrics as they stand before any line: the state's committed seq and
    /// accounts. Called before the pipeline starts, so an unwritable FILE is found at once.
    ///
    /// - Throws: `FileIO.Failure` when the file cannot be written.
    package func writeInitialMetrics() throws(FileIO.Failure) {
        guard let metrics else { return }
        var initial = FilterMetrics()
        let stats = pipeline.currentStats
        (initial.accountsStored, initial.committedSeq) = (stats.storedAccounts ?? 0, stats.committedSeq)
        try metrics.write(initial, now: clock())
    }

    /// Reads `sources` in order (`-`: ``stdin``) to their end, the output's closing, a state
    /// error or a signal, then finishes the pipeline with `results`; `progress` (nil: none) is
    /// told of each file and every ``progressLines`` lines.
    ///
    /// - Throws: the pipeline's ``StateSession/Failure`` when the state cannot be committed
    ///   or saved, or `results` cannot be put in place.
    package func run(
        _ sources: [String], progress: (any FilterProgress)? = nil, results: StateSession.Results
    ) throws(StateSession.Failure) -> Outcome {
        let pipeline = self.pipeline, filter = pipeline.filter, metrics = metrics, clock = clock, message = message
        let output = output, outputName = outputName
        var outcome = Outcome()
        var skip = pipeline.skipLines
        // --metrics: the filter counts its results; lines read and the state's figures (the
        // session's stats; a JSON state's accounts as loaded, then as saved) are added.
        if metrics != nil { filter.metrics = FilterMetrics() }
        var savedAccounts = pipeline.store.map { type(of: $0).checkpoints ? 0 : pipeline.currentStats.residentAccounts } ?? 0
        func gatherMetrics() -> FilterMetrics {
            var m = filter.metrics ?? FilterMetrics()
            let stats = pipeline.currentStats
            m.linesRead = filter.seq - skip
            m.checkpoints = stats.checkpoints
            m.longestCheckpointPause = stats.longestPause
            m.checkpointPauses = stats.pauseTime
            m.accountsInMemory = stats.residentAccounts
            m.accountsStored = stats.storedAccounts ?? savedAccounts
            m.committedSeq = stats.committedSeq
            return m
        }
        // The last write on every way out; the normal one reports a failure.
        var metricsWritten = false
        defer { if let metrics, !metricsWritten { try? metrics.write(gatherMetrics(), now: clock()) } }
        var outputClosed = false
        // Whether reading goes on: false once the output is closed or the state failed. Both
        // change only where a batch goes out or the filter is idle, so they are read there and
        // the line loop reads this one flag (not the captured `outputClosed` and the session's
        // property: two dynamic exclusivity checks a line).
        var reading = true
        // While idle, the results held back go out before the idle checkpoint: the metrics
        // wait for it.
        var flushingIdle = false

        // Each applied batch (2048 lines, or one line when flushing per line) goes out in
        // one write straight from the filter's buffer: no second copy of the output.
        let write: (inout JSONWriter) -> Void = { w in
            if outputClosed || w.count == 0 { return }
            // Metrics: after this batch's checkpoint, when a period has passed.
            defer { if !flushingIdle { metrics?.writeIfDue(now: clock(), gatherMetrics) } }
            let failure = Self.send(w, to: output)
            if failure != 0 {
                outputClosed = true
                if failure == System.brokenPipeError {
                    outcome.brokenPipe = true
                } else {
                    outcome.writeError = "\(outputName): cannot write: \(System.errorMessage(failure))"
                }
                pipeline.outputFailed()
                reading = false
                return
            }
            pipeline.batchWritten()
            if pipeline.failed { reading = false }
        }
        // A live stream: once no input is ready, the results held back go out now, and a
        // state with checkpoints commits them when one is due, whether or not a line comes.
        let idle: () -> Int32 = {
            if outputClosed { return -1 }
            let committed = metrics == nil ? 0 : pipeline.currentStats.committedSeq
            flushingIdle = true
            filter.finish(output: write)
            flushingIdle = false
            var next = pipeline.idle()
            if pipeline.failed { reading = false }
            // Metrics: written while idle too, and woken up for the next one; at once when a
            // commit finished (the idle wait for it: the figures are what `state info` shows).
            if let metrics {
                metrics.writeIfDue(now: clock(), force: pipeline.currentStats.committedSeq != committed, gatherMetrics)
                let due = metrics.millisecondsUntilDue(now: clock())
                next = next < 0 ? due : min(next, due)
            }
            return next
        }

        // Numbered: the limit applies to the text after the N<TAB> prefix (ParallelFilter).
        let options = pipeline.options
        let reader = LineReader(fd: stdin, maxLineBytes: options.maxLineBytes + (options.numbered ? LineNumber.maxPrefixBytes : 0))
        reader.wakeFD = SignalWake.fds.read
        for source in sources {
            if receivedSignal != 0 || outputClosed || pipeline.failed { break }
            let fd: Int32 = source == "-" ? stdin : System.openForReading(source)
            if fd < 0 {
                // As grep does: say so, read the rest, exit 4 at the end.
                message("badgeflow: \(source): \(System.errorMessage)")
                outcome.inputFailed = true
                continue
            }
            defer { if source != "-" { System.closeDescriptor(fd) } }
            let name = source == "-" ? "<stdin>" : source
            // A gzip/zstd/bzip2/xz file would give an error line for every line of it.
            if let format = CompressedInput.format(ofFileAt: fd) {
                message(CompressedInput.message(name, format))
                outcome.inputFailed = true
                continue
            }
            reader.restart(fd: fd)
            // stdin a pipe: digested as it is read, for the state's record of its inputs (a
            // file's, or stdin redirected from one, was digested before it was read).
            let digest =
                source == "-" && !InputDigest.isRegularFileAtStart(fd) ? pipeline.streamedDigest(name: "stdin") : nil
            reader.digest = digest
            progress?.begin(fd: fd, lines: filter.seq)
            var countdown = Self.progressLines
            do {
                try reader.forEachLine(name, idle: idle) { line in
                    if skip > 0 {
                        skip -= 1
                        return receivedSignal == 0
                    }
                    filter.feed(line, from: reader, output: write)
                    if let progress {
                        countdown -= 1
                        if countdown == 0 {
                            countdown = Self.progressLines
                            progress.check(lines: filter.seq)
                        }
                    }
                    return receivedSignal == 0 && reading
                }
                // Read to its end (not stopped by a signal, the output or the state).
                if receivedSignal == 0 && reading && !outputClosed { digest?.complete = true }
            } catch {
                message("badgeflow: \(error.description)")
                outcome.inputFailed = true
            }
            reader.digest = nil
            progress?.end()
        }
        // Every line read gets its answer, even when a signal cut the input short. Once the
        // output is closed (the reader went away, a write failed), the batches still in
        // flight are not applied: their results cannot be written.
        if !outputClosed { filter.finish(output: write) }
        progress?.clear()
        if skip > 0 && !options.numbered {
            message("badgeflow: --resume: the input ended \(skip) line\(skip == 1 ? "" : "s") before the checkpointed seq \(filter.seq)")
        }
        outcome.resultsInPlace = try pipeline.finish(results, writeError: outcome.writeError, outputClosed: outputClosed)
        // The last metrics, once the state is committed or saved.
        if let metrics {
            if let store = pipeline.store, !type(of: store).checkpoints { savedAccounts = filter.stream.accountCount }
            metricsWritten = true
            do { try metrics.write(gatherMetrics(), now: clock()) } catch {
                outcome.metricsError = "--metrics \(metrics.path): cannot write it (\(error.description))"
            }
        }
        return outcome
    }
}
