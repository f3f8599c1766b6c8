#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import BadgeFlow

/// `badgeflow filter`: NDJSON events in, one NDJSON result per event out (SPEC §4, §6).
struct FilterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filter",
        abstract: "Read NDJSON push events and write one result line per event.",
        discussion: """
            Reads the INPUT files in order, or stdin. Each non-blank line gets exactly one result \
            line, in input order, with "seq" = its line number (continuing across files). \
            A bad line gets an "error" line and the stream goes on.
            """
    )

    @OptionGroup var rules: RulesOption

    @Option(name: .long, help: ArgumentHelp("Load state from FILE at start; save it atomically at the end and on SIGINT/SIGTERM.", valueName: "FILE"))
    var state: String?

    @Flag(name: .long, help: "Exit 1 when any line was rejected.")
    var strict = false

    @Flag(name: .long, help: "Flush after every result line (the default when stdout is a terminal).")
    var lineBuffered = false

    @Option(name: .long, help: ArgumentHelp("Longest input line kept, in bytes; longer lines get a line-too-long error.", valueName: "BYTES"))
    var maxLineBytes = 1 << 20

    @Flag(name: .long, help: ArgumentHelp("Each input line is N<TAB>JSON, N its number in the whole input (a partitioned run); a result's seq is N. A non-blank line without the prefix gets an invalid-line-number error whose seq is its physical line number."))
    var numbered = false

    @Option(name: .long, help: "Threads that parse and route lines (default: the number of cores; 1: a single thread). Output order and bytes do not depend on it.")
    var jobs: Int?

    @Argument(help: ArgumentHelp("NDJSON event files; stdin when none.", valueName: "INPUT"))
    var inputs: [String] = []

    func validate() throws {
        guard maxLineBytes >= 1024 else { throw ValidationError("--max-line-bytes must be at least 1024") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func run() throws {
        let ruleSet = try rules.load()
        var stream = BadgeStream(rules: ruleSet)
        if let state {
            do {
                stream = try StateFile.load(state, rules: ruleSet)
            } catch {
                Console.error("badgeflow: error: state file \(error.description)")
                throw Exit.state
            }
        }
        Signals.install()
        JSONThread.useCLocale()
        let flushEachLine = lineBuffered || Console.isTerminal(1)
        // Per-line flushing wants each line answered at once: one thread, batches of one.
        let filter = ParallelFilter(stream: stream, jobs: flushEachLine ? 1 : (jobs ?? ProcessorCount.online),
                                    maxLineBytes: maxLineBytes, linesPerBatch: flushEachLine ? 1 : 2048,
                                    numbered: numbered)
        var ioError: String? = nil
        var outputClosed = false

        // Each applied batch (2048 lines, or one line when flushing per line) goes out in
        // one write(2) straight from the filter's buffer: no second copy of the output.
        let output: (inout JSONWriter) -> Void = { w in
            if outputClosed || w.count == 0 { return }
            if !w.withUnsafeBytes({ Console.write($0, to: 1) }) { outputClosed = true }
        }

        let sources = inputs.isEmpty ? ["-"] : inputs
        for source in sources {
            if receivedSignal != 0 || outputClosed { break }
            let fd: Int32 = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
            if fd < 0 {
                ioError = "\(source): cannot open: \(String(cString: strerror(errno)))"
                break
            }
            defer { if fd != 0 { close(fd) } }
            // Numbered: the limit applies to the text after the N<TAB> prefix (ParallelFilter).
            let reader = LineReader(fd: fd, maxLineBytes: maxLineBytes + (numbered ? LineNumber.maxPrefixBytes : 0))
            do {
                try reader.forEachLine(source == "-" ? "<stdin>" : source) { line in
                    filter.feed(line, from: reader, output: output)
                    return receivedSignal == 0 && !outputClosed
                }
            } catch {
                ioError = error.description
                break
            }
        }
        // Every line read gets its answer, even when a signal cut the input short.
        filter.finish(output: output)
        let session = (stream: filter.stream, rejected: filter.stream.rejected)
        if let state {
            do {
                try StateFile.save(session.stream, to: state)
            } catch {
                Console.error("badgeflow: error: cannot save state: \(error.description)")
                throw Exit.state
            }
        }
        if receivedSignal != 0 { throw ExitCode(Signals.status(receivedSignal)) }
        if let ioError {
            Console.error("badgeflow: error: \(ioError)")
            throw Exit.io
        }
        if outputClosed { throw Exit.io }
        if strict && session.rejected > 0 { throw Exit.rejected }
    }
}
