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
        "--metrics": "metrics", "--block-cache": "block-cache", "--input-digest": "input-digest",
    ]

    @OptionGroup var rules: RulesOption

    @Option(
        name: .long,
        help: ArgumentHelp(
            StateFormat.stateOptionHelp,
            valueName: "FILE"))
    var state: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "\(StateFormat.titles(StateFormat.checkpointing)) state: commit the changed accounts and the seq of the last result written every SECONDS (also at the end and on a signal).",
            valueName: "SECONDS"))
    var checkpoint: Double = 1

    @Flag(
        name: .long,
        help:
            "\(StateFormat.titles(StateFormat.checkpointing)) state: skip the input lines up to the seq of the last checkpoint (a file must be the same one; with --numbered, the lines whose N is at or below it, from any input) and go on."
    )
    var resume = false

    @Flag(
        name: .customLong("no-resume"),
        help:
            "Apply the input again on top of the state on purpose: an INPUT the state recorded as applied (same content), or the file its last checkpoint read; on a queue offset (a state of --numbered runs), a run without --numbered that leaves the offset as it was."
    )
    var noResume = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --state: the digest of an input piped to stdin (SIZE:SHA256-OF-FIRST-MIB:SHA256-OF-LAST-MIB, as `state info --json` shows them), and after = the name to record it under (default stdin); the Spark job passes one for each input file. Refused like a file's when the state recorded it; recorded at the end, instead of the digest of stdin as it is read.",
            valueName: "DIGEST[=NAME]"))
    var inputDigest: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "\(StateFormat.titles(StateFormat.checkpointing)) state: keep at most N accounts in memory (least recently used ones are dropped after their checkpoint; they load again on use).",
            valueName: "N"))
    var maxResident: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Without \(StateFormat.titlesWithArticle(StateFormat.checkpointing)) state: keep the N most recently used accounts expanded and the others in a compact form (about 100 bytes for one device and three marks instead of ~1.5 KB), expanded again on their next event.",
            valueName: "N"))
    var expandedAccounts = 65536

    @Option(
        name: .long,
        help: ArgumentHelp(
            "\(StateFormat.titles(StateFormat.withBlockCache)) state: the block cache for the state's data blocks, in bytes, or with a K, M or G suffix (powers of 1024); default 64M. More cache, fewer reads through the OS: faster on a fleet whose accounts do not stay in memory, at that much more memory.",
            valueName: "SIZE"))
    var blockCache: String?

    @Flag(
        name: .long,
        help:
            "\(StateFormat.titles(StateFormat.checkpointing)) state: print the number of checkpoints and the longest one to stderr at the end."
    )
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

    @Flag(
        name: .long,
        help:
            "Exit 1 when any line was rejected (stderr says how many, and the first one's seq); refuse (exit 2) --rules that differ from the state's recorded ones instead of a notice."
    )
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
            "Write the results to FILE instead of stdout (a regular FILE is replaced atomically at the end; - is stdout).",
            valueName: "FILE"))
    var output: String?

    /// The results file of `-o FILE`; nil for stdout (no `-o`, or `-o -`).
    private var resultsFile: String? { output == "-" ? nil : output }

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
        let checkpointed = state.map { StateFormat.of($0).checkpoints } ?? false
        guard checkpoint > 0, checkpoint.isFinite else {
            throw ValidationError("--checkpoint must be a number of seconds above 0, got \(checkpoint)")
        }
        if resume && !checkpointed { throw ValidationError("--resume needs --state \(StateFormat.checkpointingFiles)") }
        if noResume && state == nil { throw ValidationError("--no-resume needs --state FILE") }
        if !inputDigest.isEmpty && state == nil { throw ValidationError("--input-digest needs --state FILE (the state records it)") }
        for digest in inputDigest.map(Self.digestAndName).map(\.digest) where !InputDigest.isValid(digest) {
            throw ValidationError(
                "--input-digest must be SIZE:HEX:HEX (SHA-256 of the first and last MiB, as state info --json shows), got \(digest)")
        }
        if resume && noResume { throw ValidationError("--resume and --no-resume exclude each other") }
        guard expandedAccounts >= 1 else { throw ValidationError("--expanded-accounts must be at least 1, got \(expandedAccounts)") }
        if let blockCache {
            guard let bytes = ByteSize.parse(blockCache), bytes >= StateSession.Options.minBlockCacheBytes else {
                throw ValidationError(
                    "--block-cache must be a size of at least 1M (bytes, or a number with K, M or G: 256M), got \(blockCache)")
            }
            guard state.map({ StateFormat.of($0).hasBlockCache }) == true else {
                throw ValidationError(StateSession.Options.blockCacheNeeded)
            }
        }
        if let maxResident {
            guard checkpointed else { throw ValidationError("--max-resident needs --state \(StateFormat.checkpointingFiles)") }
            guard maxResident >= 1 else { throw ValidationError("--max-resident must be at least 1, got \(maxResident)") }
            if resultsFile != nil {
                throw ValidationError(
                    "--max-resident cannot be used with -o: results in FILE count as written only at the end, so no account could be dropped before"
                )
            }
        }
    }

    func run() throws {
        let sources = try sources(filesFrom: filesFrom)
        var options = StateSession.Options()
        options.checkpointInterval = checkpoint
        options.maxResident = maxResident
        options.expandedAccounts = expandedAccounts
        options.resume = resume ? .resume : noResume ? .noResume : .refuseSameInput
        options.numbered = numbered
        options.resultsAtEnd = resultsFile != nil
        options.maxLineBytes = maxLineBytes
        options.stamp = stamp
        options.refusesRulesChange = strict
        options.blockCacheBytes = blockCache.flatMap(ByteSize.parse)
        if state != nil {
            // 2 MiB read a file, before any line: nothing per line (StateFileFormat).
            // stdin redirected from a file (`< day1.ndjson`) is a file; a pipe is digested
            // as it is read and recorded at the end (StateSession.streamedDigest).
            // With --input-digest the caller names what it pipes (the Spark job): that is recorded instead.
            let stdinFile =
                sources.contains("-") && inputDigest.isEmpty ? InputDigest.of(fd: 0).map { [(name: "stdin", digest: $0)] } ?? [] : []
            options.digestsStdin = inputDigest.isEmpty
            options.inputDigests =
                sources.filter { $0 != "-" }.compactMap { path in InputDigest.of(path: path).map { (name: path, digest: $0) } }
                + stdinFile + inputDigest.map(Self.digestAndName)
        }
        // The one owner of the run's lock, state, connections and threads; closed in one
        // order when run() returns, whichever way.
        let pipeline: FilterPipeline
        do {
            pipeline = try FilterPipeline(
                state: state, rules: try rules.load(), rulesGiven: rules.given, input: StateSession.identity(of: sources),
                options: options, notice: Console.error)
        } catch let failure as StateSession.Failure {
            throw Self.exit(failure)
        }
        defer { pipeline.close() }
        let out: ResultsFile
        do { out = try resultsFile.map { path throws(ResultsFile.Failure) in try ResultsFile(path) } ?? ResultsFile() } catch {
            Console.error("badgeflow: error: \(error.description)")
            throw Exit.io
        }
        // The pipeline owns it from now on: dropped at its close unless put in place.
        pipeline.own(out)
        let run = FilterRun(
            pipeline: pipeline, output: FilterRun.write(to: out.fd), outputName: resultsFile ?? "stdout",
            metrics: metrics.map { MetricsFile(path: $0, period: checkpoint, warning: Console.error) }, message: Console.error)
        // --metrics: written once now, so an unwritable FILE is found before any line.
        do { try run.writeInitialMetrics() } catch {
            Console.error("badgeflow: error: --metrics \(metrics ?? ""): cannot write it (\(error.description))")
            throw Exit.io
        }
        Signals.install()
        JSONThread.useCLocale()
        let outputIsTerminal = Console.isTerminal(out.fd)
        // Per-line flushing wants each line answered at once: one thread, batches of one.
        let flushEachLine = lineBuffered || outputIsTerminal
        do throws(StateSession.Failure) {
            try pipeline.start(jobs: flushEachLine ? 1 : (jobs ?? ProcessorCount.online), linesPerBatch: flushEachLine ? 1 : 2048)
        } catch {
            throw Self.exit(error)
        }
        let showProgress = progress ?? (Console.isTerminal(2) && !outputIsTerminal)
        // Over files (or stdin redirected from one) only: a pipe has no total to show.
        let total = showProgress && Console.isTerminal(2) ? Progress.totalBytes(of: sources) : 0
        let outcome: FilterRun.Outcome
        do throws(StateSession.Failure) {
            let results = out.results(name: resultsFile ?? "stdout", isFile: resultsFile != nil)
            outcome = try run.run(sources, progress: total > 0 ? Progress(totalBytes: total) : nil, results: results)
        } catch {
            if error.kind == .state { printStats(pipeline) }
            throw Self.exit(error)
        }
        printStats(pipeline)
        if let metricsError = outcome.metricsError { Console.error("badgeflow: error: \(metricsError)") }
        if let writeError = outcome.writeError {
            pipeline.discardResults()
            Console.error("badgeflow: error: \(writeError)")
            throw Exit.io
        }
        // -o FILE gets what stdout would have got, whenever the state is saved.
        if !outcome.resultsInPlace {
            do { try pipeline.commitResults() } catch {
                Console.error("badgeflow: error: \(error.description)")
                throw Exit.io
            }
        }
        if receivedSignal != 0 { throw ExitCode(Signals.status(receivedSignal)) }
        // The reader went away (`| head`): stop quietly, as a process killed by SIGPIPE would.
        if outcome.brokenPipe { throw ExitCode(Signals.status(System.brokenPipeSignal)) }
        if outcome.inputFailed || outcome.metricsError != nil { throw Exit.io }
        let rejected = pipeline.filter.stream.rejected
        if strict && rejected > 0 {
            let first = pipeline.filter.stream.firstRejectedSeq.map { "; the first at seq \($0)" } ?? ""
            Console.error("badgeflow: --strict: \(rejected) line\(rejected == 1 ? "" : "s") rejected\(first)")
            throw Exit.rejected
        }
    }

    /// `--input-digest DIGEST[=NAME]`: the digest, and the name to record (`stdin` by default).
    static func digestAndName(_ value: String) -> (name: String, digest: String) {
        guard let eq = value.firstIndex(of: "=") else { return (name: "stdin", digest: value) }
        return (name: String(value[value.index(after: eq)...]), digest: String(value[..<eq]))
    }

    /// `--checkpoint-stats`, for a state with checkpoints.
    private func printStats(_ pipeline: FilterPipeline) {
        guard checkpointStats, let store = pipeline.store, type(of: store).checkpoints else { return }
        Console.error("badgeflow: \(pipeline.currentStats.summary)")
    }

    /// The exit of a session's failure, after its message.
    static func exit(_ failure: StateSession.Failure) -> any Error {
        Console.error("badgeflow: error: \(failure.message)")
        switch failure.kind {
        case .usage: return Exit.usage
        case .state: return Exit.state
        case .io: return Exit.io
        }
    }
}
