#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import BadgeFlow

/// `badgeflow filter`: NDJSON events in, one NDJSON result per event out.
struct FilterCommand: TakesManyInputs {
    static let configuration = CommandConfiguration(
        commandName: "filter",
        abstract: "Read NDJSON push events and write one result line per event.",
        discussion: """
            Reads the INPUT files in order (then those --files-from lists), or stdin when there \
            are none; `-` is stdin. Each non-blank line gets exactly one result line, in input \
            order, with "seq" = its line number (continuing across files; a file that cannot be \
            read adds no lines). A bad line gets an "error" line and the stream goes on. An \
            INPUT that cannot be read, or that is compressed (gzip, zstd, bzip2, xz: pipe it \
            through zcat, zstdcat, bzcat, xzcat), is reported on stderr, the others are still \
            read, and the exit status is then 4.
            """
    )

    static let optionsWithValues = [
        "--rules": "rules", "--state": "state", "--max-line-bytes": "max-line-bytes", "--jobs": "jobs",
        "--files-from": "files-from", "-o": "output", "--output": "output",
        "--checkpoint": "checkpoint", "--max-resident": "max-resident", "--expanded-accounts": "expanded-accounts",
        "--metrics": "metrics",
    ]

    @OptionGroup var rules: RulesOption

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep state in FILE: FILE.json is loaded at start and saved atomically at the end and on SIGINT/SIGTERM/SIGHUP; FILE.sqlite or FILE.db is an SQLite database committed at checkpoints. One filter at a time per FILE (FILE.lock).",
            valueName: "FILE"))
    var state: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "SQLite state: commit the changed accounts and the seq of the last result written every SECONDS (also at the end and on a signal).",
            valueName: "SECONDS"))
    var checkpoint: Double = 1

    @Flag(
        name: .long,
        help:
            "SQLite state: skip the input lines up to the seq of the last checkpoint (a file must be the same one; with --numbered, the lines whose N is at or below it, from any input) and go on."
    )
    var resume = false

    @Flag(
        name: .customLong("no-resume"),
        help:
            "SQLite state: apply the input again on top of the state even though its last checkpoint was committed reading this same INPUT file."
    )
    var noResume = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "SQLite state: keep at most N accounts in memory (least recently used ones are dropped after their checkpoint; they load again on use).",
            valueName: "N"))
    var maxResident: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Without an SQLite state: keep the N most recently used accounts expanded and the others in a compact form (about 100 bytes for one device and three marks instead of ~1.5 KB), expanded again on their next event.",
            valueName: "N"))
    var expandedAccounts = 65536

    @Flag(name: .long, help: "SQLite state: print the number of checkpoints and the longest one to stderr at the end.")
    var checkpointStats = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write metrics to FILE in Prometheus's text format (lines, results, errors by code, decrements, badge updates, duplicates, checkpoints, accounts, committed seq), replaced atomically at the start, every --checkpoint seconds (idle too) and at the end.",
            valueName: "FILE"))
    var metrics: String?

    @Flag(
        name: .long,
        help: "Push results, but background ones, carry \"payload\": the pushed payload with aps.badge set to the result's icon.")
    var stamp = false

    @Flag(name: .long, help: "Exit 1 when any line was rejected (stderr says how many, and the first one's seq).")
    var strict = false

    @Flag(name: .long, help: "Flush after every result line (the default when the output is a terminal).")
    var lineBuffered = false

    @Option(
        name: .long,
        help: ArgumentHelp("Longest input line kept, in bytes (at least 1024); longer lines get a line-too-long error.", valueName: "BYTES")
    )
    var maxLineBytes = 1 << 20

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Each input line is N<TAB>JSON, N its number in the whole input (a partitioned run); a result's seq is N. A non-blank line without the prefix gets an invalid-line-number error whose seq is its physical line number."
        ))
    var numbered = false

    @Option(
        name: .long,
        help:
            "Threads that parse and route lines (default: the number of cores; 1: a single thread). Output order and bytes do not depend on it."
    )
    var jobs: Int?

    @Option(
        name: .long,
        help: ArgumentHelp("Also read the files listed in FILE, one path a line (`-`: stdin), after the INPUTs.", valueName: "FILE"))
    var filesFrom: String?

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Write the results to FILE instead of stdout (a regular FILE is replaced atomically at the end).", valueName: "FILE"))
    var output: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Progress bar on stderr (default: when stderr is a terminal and the output is not).")
    var progress: Bool?

    @Argument(help: ArgumentHelp("NDJSON event files (`-`: stdin); stdin when none.", valueName: "INPUT"))
    var inputs: [String] = []

    func validate() throws {
        guard maxLineBytes >= 1024 else {
            throw ValidationError(
                "--max-line-bytes must be a number of bytes of at least 1024 (a line must hold a payload); got \(maxLineBytes)")
        }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        let sqlite = state.map(SQLiteStore.isSQLitePath) ?? false
        guard checkpoint > 0, checkpoint.isFinite else {
            throw ValidationError("--checkpoint must be a number of seconds above 0, got \(checkpoint)")
        }
        if resume && !sqlite { throw ValidationError("--resume needs --state FILE.sqlite (or FILE.db)") }
        if noResume && !sqlite { throw ValidationError("--no-resume needs --state FILE.sqlite (or FILE.db)") }
        if resume && noResume { throw ValidationError("--resume and --no-resume exclude each other") }
        guard expandedAccounts >= 1 else { throw ValidationError("--expanded-accounts must be at least 1, got \(expandedAccounts)") }
        if let maxResident {
            guard sqlite else { throw ValidationError("--max-resident needs --state FILE.sqlite (or FILE.db)") }
            guard maxResident >= 1 else { throw ValidationError("--max-resident must be at least 1, got \(maxResident)") }
            if output != nil {
                throw ValidationError(
                    "--max-resident cannot be used with -o: results in FILE count as written only at the end, so no account could be dropped before"
                )
            }
        }
    }

    /// What `--resume` checks the input against: `stdin`, or a file's real path with its
    /// device and inode (so a file replaced under the same name is told apart, and one file
    /// named two ways is the same).
    static func identity(_ source: String) -> String {
        if source == "-" { return "stdin" }
        var st = stat()
        guard stat(source, &st) == 0 else { return source }
        var path = source
        if let real = realpath(source, nil) {
            path = String(cString: real)
            free(real)
        }
        return "\(path) (dev \(st.st_dev), inode \(st.st_ino))"
    }

    /// What a failed checkpoint commit (e.g. on a full disk) says after `state file `: the
    /// transaction was rolled back, so the database holds the checkpoint before it.
    static func checkpointFailure(_ error: StateFile.Failure) -> String {
        "\(error.file): cannot commit a checkpoint: \(error.message); the state keeps its last checkpoint, which --resume goes on from"
    }

    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    func run() throws {
        var ruleSet = try rules.load()
        let sources = try sources(filesFrom: filesFrom)
        var stream = BadgeStream(rules: ruleSet)
        var lock: StateLock? = nil
        var store: SQLiteStore? = nil
        if let state {
            // Also finds an unwritable folder before any line is read.
            do { lock = try StateLock(state: state) } catch {
                Console.error("badgeflow: error: state file \(state): \(error.description)")
                throw Exit.state
            }
            do {
                if SQLiteStore.isSQLitePath(state) {
                    let s = try SQLiteStore(path: state)
                    if let recorded = try s.recordedRules() {
                        if !rules.given {
                            // Without --rules, the rules the state recorded.
                            ruleSet = recorded
                            stream = BadgeStream(rules: ruleSet)
                        } else if s.accountCount > 0, recorded.fingerprint != ruleSet.fingerprint {
                            // Other rules fit when every mark does (rules change over time).
                            do { try s.checkFits(ruleSet) } catch {
                                Console.error(
                                    "badgeflow: error: state file \(error.description) (under the rules given, which differ from the recorded ones: \(TreeCommand.difference(ruleSet, recorded)))"
                                )
                                throw Exit.state
                            }
                        }
                    }
                    // A new state records its rules now; other rules that fit, at the first
                    // checkpoint (with its accounts and seq).
                    if try s.recordedRules() == nil { try s.recordRules(ruleSet) }
                    stream.source = s
                    store = s
                } else {
                    StateFile.removeStaleTemporaryFiles(of: state)
                    // Without --rules, the rules the state recorded; other rules load when every
                    // mark fits them (else the first that does not is the error).
                    if !rules.given, let recorded = try StateFile.recordedRules(state) { ruleSet = recorded }
                    stream = try StateFile.load(state, rules: ruleSet, compact: true)
                }
            } catch let error as StateFile.Failure {
                Console.error("badgeflow: error: state file \(error.description)")
                throw Exit.state
            }
        }
        // Held until run() returns, whichever way (an optimized build may otherwise end the
        // lock's lifetime at its last use).
        defer { lock?.release() }
        let identity = sources.map(Self.identity).joined(separator: ", ")
        var skip = 0
        if let store, store.seq > 0, !resume, !noResume, identity != "stdin", store.input == identity {
            // Resume is never silent: the same file again would be applied twice.
            Console.error(
                "badgeflow: error: state file \(store.path): its last checkpoint (seq \(store.seq)) was committed reading this input (\(identity)); pass --resume to go on after seq \(store.seq), or --no-resume to apply the input again on top of the state"
            )
            throw Exit.usage
        }
        if resume, let store, numbered {
            // A queue consumer resumes by N, from any offset: no input identity to check.
            if store.seq > 0 {
                Console.error(
                    "badgeflow: --resume: skipping the lines numbered \(store.seq) or below (answered before the last checkpoint)")
            }
        } else if resume, let store {
            if !store.input.isEmpty && store.input != identity && store.seq > 0 {
                Console.error("badgeflow: error: --resume: \(store.path) was checkpointed reading \(store.input), not \(identity)")
                throw Exit.state
            }
            skip = store.seq
            if skip > 0 {
                Console.error(
                    "badgeflow: --resume: skipping the first \(skip) line\(skip == 1 ? "" : "s") of \(identity) (answered before the last checkpoint)"
                )
            }
        }
        let out: OutputFile
        do { out = try output.map { path throws(OutputFile.Failure) in try OutputFile(path) } ?? OutputFile() } catch {
            Console.error("badgeflow: error: \(error.description)")
            throw Exit.io
        }
        // --metrics (1/4): the file, written once now so an unwritable one is found before any line.
        let metricsFile = metrics.map { MetricsFile(path: $0, period: checkpoint) }
        var metricsFailed = false
        // Accounts in the state as last committed or saved, and its committed seq.
        var stored = (accounts: store?.accountCount ?? 0, seq: store?.seq ?? 0)
        if store == nil, state != nil { stored.accounts = stream.accountCount }
        if let metricsFile {
            var initial = FilterMetrics()
            initial.accountsInMemory = stream.accountCount
            (initial.accountsStored, initial.committedSeq) = stored
            do { try metricsFile.write(initial, now: Self.now()) } catch {
                Console.error("badgeflow: error: --metrics \(metricsFile.path): cannot write it (\(error.description))")
                throw Exit.io
            }
        }
        Signals.install()
        JSONThread.useCLocale()
        let outputIsTerminal = Console.isTerminal(out.fd)
        let flushEachLine = lineBuffered || outputIsTerminal
        // Per-line flushing wants each line answered at once: one thread, batches of one.
        // The stream is moved in: a copy left here would share every account with the
        // filter's, and each account's first change would copy its tree and devices while
        // this one kept the old ones (a loaded JSON state took ~2 KB more an account).
        let filter = ParallelFilter(
            stream: consume stream, jobs: flushEachLine ? 1 : (jobs ?? ProcessorCount.online),
            maxLineBytes: maxLineBytes, linesPerBatch: flushEachLine ? 1 : 2048, stamp: stamp,
            numbered: numbered)
        filter.skip(lines: skip)
        if metricsFile != nil { filter.metrics = FilterMetrics() }
        if resume, numbered, let store { filter.skip(numbersThrough: store.seq) }
        // A JSON state saved after a failed write holds no line of the batch that failed.
        filter.keepsUndo = store == nil && state != nil
        var prefetcher: SQLitePrefetcher? = nil
        if let store, filter.jobs > 1 {
            // Accounts of the next batch are read and decoded while this one is applied.
            do {
                prefetcher = try SQLitePrefetcher(path: store.path, rules: ruleSet)
                filter.prefetcher = prefetcher
            } catch {
                Console.error("badgeflow: error: state file \(error.description)")
                throw Exit.state
            }
        }
        var inputFailed = false
        var stateError: String? = nil
        var checkpoints = 0
        var longestCheckpoint = 0.0
        var checkpointTime = 0.0
        var lastCheckpoint = Self.now()
        // The seq the last checkpoint recorded: an idle stream commits when results went out since.
        var committedSeq = store?.seq ?? 0
        // Results written to -o FILE count as delivered only when it is committed at the end.
        let checkpointsOnTheWay = store != nil && output == nil
        // Checkpoints commit on their own thread and connection (SQLiteCheckpointer).
        var checkpointer: SQLiteCheckpointer? = nil
        if let store {
            // The writing connection gets the large page cache; this one only loads an
            // account now and then (what the read-ahead did not).
            store.setCacheSize(kib: 8 << 10)
            do {
                checkpointer = try SQLiteCheckpointer(path: store.path)
                checkpointer?.recordRules(ruleSet)
            } catch {
                Console.error("badgeflow: error: state file \(error.description)")
                throw Exit.state
            }
        }
        // Waits for the commit under way, if any (it holds results already written).
        // Evictions keep 15N/16 of --max-resident N, so the next ones wait a while.
        let keepAfterEviction = maxResident.map { $0 - $0 / 16 }
        // A pause of the applying thread for a checkpoint or an eviction, for the stats.
        func notePause(since start: Double) -> Double {
            let end = Self.now()
            longestCheckpoint = max(longestCheckpoint, end - start)
            checkpointTime += end - start
            return end
        }
        func settleCheckpoint() {
            guard let checkpointer, checkpointer.isPending else { return }
            filter.withStream { stream in
                do throws(StateFile.Failure) { try checkpointer.finish(&stream) } catch {
                    if stateError == nil { stateError = Self.checkpointFailure(error) }
                }
            }
        }
        // Commits what the results written so far reflect: called only after they were
        // written. The pause is the wait for the previous commit, the eviction and taking
        // the changed accounts; with `wait`, also this commit.
        func commitCheckpoint(wait: Bool = false) {
            guard let checkpointer, stateError == nil else { return }
            // An account that could not be loaded got an error line: commit nothing after it.
            if let failure = filter.withStream({ $0.sourceFailure }) {
                settleCheckpoint()
                stateError = failure.description
                return
            }
            let start = Self.now()
            filter.withStream { stream in
                do throws(StateFile.Failure) {
                    // Only committed accounts may leave memory: finish, evict, then begin.
                    try checkpointer.finish(&stream)
                    if let keepAfterEviction { stream.evict(keeping: keepAfterEviction) }
                    checkpointer.begin(&stream, seq: filter.resumeSeq, input: identity)
                    committedSeq = filter.resumeSeq
                    if wait { try checkpointer.finish(&stream) }
                } catch {
                    stateError = Self.checkpointFailure(error)
                }
            }
            checkpoints += 1
            lastCheckpoint = notePause(since: start)
        }
        // Over --max-resident: drops committed accounts when that is enough (no commit, so
        // checkpoints stay large and few); false when a checkpoint is needed. Accounts of
        // the commit under way stay until it ends: it is waited for only when too few
        // others can leave.
        func evictCommitted() -> Bool {
            guard let checkpointer, let keepAfterEviction, stateError == nil else { return false }
            let start = Self.now()
            defer { _ = notePause(since: start) }
            return filter.withStream { stream in
                let excess = stream.accounts.count - keepAfterEviction
                let free = stream.accounts.count - stream.changedCount - stream.inFlightCount
                if checkpointer.isPending && free < excess {
                    do throws(StateFile.Failure) { try checkpointer.finish(&stream) } catch {
                        stateError = Self.checkpointFailure(error)
                        return true
                    }
                }
                // Enough committed accounts to drop: the changed ones fit in what is kept.
                guard stream.changedCount <= keepAfterEviction else { return false }
                stream.evict(keeping: keepAfterEviction)
                return true
            }
        }
        // --metrics (2/4): the filter's counts, with lines read and the state's figures.
        func gatherMetrics() -> FilterMetrics {
            var m = filter.metrics ?? FilterMetrics()
            m.linesRead = filter.seq - skip
            m.checkpoints = checkpoints
            m.longestCheckpointPause = longestCheckpoint
            m.checkpointPauses = checkpointTime
            m.accountsInMemory = filter.withStream { $0.accountCount }
            if let store {
                // What is committed, as a reader sees it (the writing connection is busy).
                if let reader = try? SQLiteStore(path: store.path, readOnly: true) {
                    stored = (reader.accountCount, reader.seq)
                    reader.close()
                }
            }
            (m.accountsStored, m.committedSeq) = stored
            return m
        }
        // The last write on every way out; the normal one (4/4) reports a failure.
        var metricsWritten = false
        defer { if let metricsFile, !metricsWritten { try? metricsFile.write(gatherMetrics(), now: Self.now()) } }
        var writeError: String? = nil
        var brokenPipe = false
        var outputClosed = false

        // Each applied batch (2048 lines, or one line when flushing per line) goes out in
        // one write(2) straight from the filter's buffer: no second copy of the output.
        let fd = out.fd
        let name = output ?? "stdout"
        let write: (inout JSONWriter) -> Void = { w in
            if outputClosed || w.count == 0 { return }
            // --metrics (3/4): after this batch's checkpoint, when a period has passed.
            defer { metricsFile?.writeIfDue(now: Self.now(), gatherMetrics) }
            if !w.withUnsafeBytes({ Console.write($0, to: fd) }) {
                outputClosed = true
                if errno == EPIPE { brokenPipe = true } else { writeError = "\(name): cannot write: \(OutputFile.reason())" }
                // A JSON state is saved as it was before this batch: only with the lines
                // whose results were all written (of this batch, some may have gone out).
                if store == nil && state != nil { filter.undoLastBatch() }
                filter.stop()
                return
            }
            if store == nil {
                // Past a quarter over the limit, the least recently used go compact: a sort of
                // the expanded accounts' use counts every few thousand lines.
                let keep = expandedAccounts
                let over = keep > Int.max - keep / 4 ? Int.max : keep + keep / 4
                filter.withStream { stream in if stream.accounts.count > over { stream.compact(keeping: keep) } }
            }
            guard checkpointsOnTheWay else { return }
            let crowded = maxResident.map { n in filter.withStream { $0.accounts.count > n } } ?? false
            // Changed accounts past half of --max-resident are committed early, while the
            // committed half still gives evictions room: a commit runs beside the batches
            // that follow instead of holding them up.
            let halfChanged = maxResident.map { n in filter.withStream { $0.changedCount > n / 2 } } ?? false
            if Self.now() - lastCheckpoint >= checkpoint || halfChanged || (crowded && !evictCommitted()) {
                commitCheckpoint()
            }
        }

        // A live stream: once no input is ready, the results held back go out now, and an
        // SQLite state commits them when its checkpoint is due, whether or not a line comes.
        let idle: () -> Int32 = {
            if outputClosed { return -1 }
            filter.finish(output: write)
            var next: Int32 = -1
            if checkpointsOnTheWay, stateError == nil, filter.resumeSeq != committedSeq {
                let wait = checkpoint - (Self.now() - lastCheckpoint)
                if wait <= 0 {
                    commitCheckpoint()
                } else {
                    next = Int32(min(wait * 1000 + 1, 60_000))
                }
            }
            // --metrics (3/4): written while idle too, and woken up for the next one.
            if let metricsFile {
                metricsFile.writeIfDue(now: Self.now(), gatherMetrics)
                let due = metricsFile.millisecondsUntilDue(now: Self.now())
                next = next < 0 ? due : min(next, due)
            }
            return next
        }

        let showProgress = progress ?? (Console.isTerminal(2) && !outputIsTerminal)
        // Over files (or stdin redirected from one) only: a pipe has no total to show.
        let total = showProgress && Console.isTerminal(2) ? Progress.totalBytes(of: sources) : 0
        let bar = total > 0 ? Progress(totalBytes: total) : nil
        // Numbered: the limit applies to the text after the N<TAB> prefix (ParallelFilter).
        let reader = LineReader(fd: 0, maxLineBytes: maxLineBytes + (numbered ? LineNumber.maxPrefixBytes : 0))
        for source in sources {
            if receivedSignal != 0 || outputClosed || stateError != nil { break }
            let fd: Int32 = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
            if fd < 0 {
                // As grep does: say so, read the rest, exit 4 at the end.
                Console.error("badgeflow: \(source): \(OutputFile.reason())")
                inputFailed = true
                continue
            }
            defer { if fd != 0 { close(fd) } }
            // A gzip/zstd/bzip2/xz file would give an error line for every line of it.
            if let format = CompressedInput.format(ofFileAt: fd) {
                Console.error(CompressedInput.message(source == "-" ? "<stdin>" : source, format))
                inputFailed = true
                continue
            }
            reader.restart(fd: fd)
            bar?.begin(fd: fd, lines: filter.seq)
            var countdown = Progress.checkEvery
            do {
                try reader.forEachLine(source == "-" ? "<stdin>" : source, idle: idle) { line in
                    if skip > 0 {
                        skip -= 1
                        return receivedSignal == 0
                    }
                    filter.feed(line, from: reader, output: write)
                    if let bar {
                        countdown -= 1
                        if countdown == 0 {
                            countdown = Progress.checkEvery
                            bar.check(lines: filter.seq)
                        }
                    }
                    return receivedSignal == 0 && !outputClosed && stateError == nil
                }
            } catch {
                Console.error("badgeflow: \(error.description)")
                inputFailed = true
            }
            bar?.end()
        }
        // Every line read gets its answer, even when a signal cut the input short. Once the
        // output is closed (the reader went away, a write failed), the batches still in
        // flight are not applied: their results cannot be written.
        if !outputClosed { filter.finish(output: write) }
        bar?.clear()
        if skip > 0 && !numbered {
            Console.error(
                "badgeflow: --resume: the input ended \(skip) line\(skip == 1 ? "" : "s") before the checkpointed seq \(filter.seq)")
        }
        if let failure = filter.withStream({ $0.sourceFailure }) {
            stateError = failure.description
        }
        var outputCommitted = false
        if store != nil {
            // The last checkpoint: only when every result was written (else the state
            // would be ahead of what the reader got); with -o, once FILE is in place.
            if !outputClosed && stateError == nil {
                if output != nil {
                    outputCommitted = true
                    do { try out.commit() } catch {
                        Console.error("badgeflow: error: \(error.description)")
                        throw Exit.io
                    }
                }
                commitCheckpoint(wait: true)
            }
            settleCheckpoint()
            // The read-only connection first: the last one to close removes the WAL files.
            prefetcher?.close()
            checkpointer?.close()
            store?.close()
            if checkpointStats {
                Console.error(
                    "badgeflow: \(checkpoints) checkpoint\(checkpoints == 1 ? "" : "s"), the longest pause \(Int((longestCheckpoint * 1000).rounded())) ms, \(Int((checkpointTime * 1000).rounded())) ms in all; accounts loaded: \(filter.stream.loads.ahead) read ahead, \(filter.stream.loads.inline) on the applying thread"
                )
            }
            if let stateError {
                out.discard()
                Console.error("badgeflow: error: state file \(stateError)")
                throw Exit.state
            }
        } else if let state {
            if let writeError, out.replacesAtomically {
                // -o FILE keeps its old content: no result of this run is delivered, so the
                // state is not saved either (a second run answers the same lines again).
                out.discard()
                Console.error("badgeflow: error: \(writeError) (\(name) and the state file \(state) keep their previous content)")
                throw Exit.io
            }
            // The state is written and synced, then -o FILE put in place, then the state:
            // a state is never ahead of the results the reader has, and a full disk keeps
            // both files as they were.
            let pending: FileIO.AtomicWriter
            do { pending = try StateFile.prepareSave(filter.stream, to: state) } catch {
                out.discard()
                Console.error("badgeflow: error: state file \(state): cannot save (it keeps its previous content): \(error.description)")
                throw Exit.state
            }
            if writeError == nil && out.replacesAtomically {
                outputCommitted = true
                do { try out.commit() } catch {
                    Console.error("badgeflow: error: \(error.description) (the state file \(state) keeps its previous content)")
                    throw Exit.io
                }
            }
            do { try pending.commit() } catch {
                let kept = outputCommitted ? "; \(name) holds this run's results" : ""
                Console.error(
                    "badgeflow: error: state file \(state): cannot save (it keeps its previous content\(kept)): \(error.description)")
                throw Exit.state
            }
            stored.accounts = filter.stream.accountCount
        }
        // --metrics (4/4): the last write, once the state is committed or saved.
        if let metricsFile {
            metricsWritten = true
            do { try metricsFile.write(gatherMetrics(), now: Self.now()) } catch {
                Console.error("badgeflow: error: --metrics \(metricsFile.path): cannot write it (\(error.description))")
                metricsFailed = true
            }
        }
        if let writeError {
            out.discard()
            Console.error("badgeflow: error: \(writeError)")
            throw Exit.io
        }
        // -o FILE gets what stdout would have got, whenever the state is saved.
        if !outputCommitted {
            do { try out.commit() } catch {
                Console.error("badgeflow: error: \(error.description)")
                throw Exit.io
            }
        }
        if receivedSignal != 0 { throw ExitCode(Signals.status(receivedSignal)) }
        // The reader went away (`| head`): stop quietly, as a process killed by SIGPIPE would.
        if brokenPipe { throw ExitCode(Signals.status(SIGPIPE)) }
        if inputFailed || metricsFailed { throw Exit.io }
        let rejected = filter.stream.rejected
        if strict && rejected > 0 {
            let first = filter.stream.firstRejectedSeq.map { "; the first at seq \($0)" } ?? ""
            Console.error("badgeflow: --strict: \(rejected) line\(rejected == 1 ? "" : "s") rejected\(first)")
            throw Exit.rejected
        }
    }
}
