import ArgumentParser
import BadgeFlow

/// `badgeflow report`: replays the input with the filter's engine and writes one
/// self-contained HTML page (``ReplayReport``).
struct ReportCommand: TakesManyInputs {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Replay NDJSON events as filter would and write an HTML page of what happened and why.",
        discussion: """
            Reads the INPUT files in order (then those --files-from lists), or stdin when there \
            are none, twice: once for the figures and the accounts to show, once more for their \
            detail (stdin is kept in a temporary file for that). The page shows the run's \
            figures (data-metric), the pushes no rule matched, the marks standing longest, and \
            for each account named with --account and the 20 whose icon stayed above zero the \
            longest: its icon and each device's number over time, its results and its tree. \
            Every account and device of the input is in the page's search index; the accounts \
            support asks about (a device not at the total, a device that left showing a number, \
            duplicates, errors) are shown too. With --text and --account ID, the same answer for \
            one account as text (to stdout, or -o FILE).
            """
    )

    static let optionsWithValues = [
        "--rules": "rules", "--account": "account", "--files-from": "files-from", "-o": "output", "--output": "output",
        "--max-line-bytes": "max-line-bytes",
    ]

    @OptionGroup var rules: RulesOption

    @Flag(name: .long, help: "Replay with --stamp, as filter --stamp.")
    var stamp = false

    @Flag(name: .long, help: "Each input line is N<TAB>JSON (as filter --numbered); a result's seq is N.")
    var numbered = false

    @Option(name: .long, help: ArgumentHelp("Show this account whatever its figures (repeatable).", valueName: "ID"))
    var account: [String] = []

    @Flag(name: .long, help: "Print each --account's answer as text for a terminal instead of the page.")
    var text = false

    @Option(
        name: .long,
        help: ArgumentHelp("Longest input line kept, in bytes (at least 1024), as filter's.", valueName: "BYTES"))
    var maxLineBytes = 1 << 20

    @Option(
        name: .long,
        help: ArgumentHelp("Also read the files listed in FILE, one path a line, after the INPUTs.", valueName: "FILE"))
    var filesFrom: String?

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Write the page to FILE (replaced atomically; `-`: stdout; default report.html, with --text stdout).",
            valueName: "FILE"))
    var output: String?

    @Argument(help: ArgumentHelp("NDJSON event files (`-`: stdin); stdin when none.", valueName: "INPUT"))
    var inputs: [String] = []

    func validate() throws {
        if text && account.isEmpty {
            throw ValidationError("--text needs --account ID: the text answers for named accounts (the page searches them all)")
        }
        if filesFrom == "-" {
            throw ValidationError("--files-from - is not supported by report (it reads its input twice): give the list as a file")
        }
        guard maxLineBytes >= 1024 else {
            throw ValidationError("--max-line-bytes must be a number of bytes of at least 1024; got \(maxLineBytes)")
        }
    }

    /// Reads every source in order, handing each line to `body` (with the reader's
    /// `overlongHead` for an overlong line); false when one could not be read.
    private func replay(_ sources: [String], stdin: String?, _ body: (LineReader.Line, [UInt8]) -> Void) -> Bool {
        var ok = true
        let reader = LineReader(fd: 0, maxLineBytes: maxLineBytes + (numbered ? LineNumber.maxPrefixBytes : 0))
        for source in sources {
            let path = source == "-" ? stdin : source
            guard let path else { continue }
            let fd = System.openForReading(path)
            if fd < 0 {
                Console.error("badgeflow: \(source): \(ResultsFile.reason())")
                ok = false
                continue
            }
            defer { System.closeDescriptor(fd) }
            reader.restart(fd: fd)
            do {
                try reader.forEachLine(source == "-" ? "<stdin>" : source) { line in
                    if case .overlong = line { body(line, reader.overlongHead) } else { body(line, []) }
                    return receivedSignal == 0
                }
            } catch {
                Console.error("badgeflow: \(error.description)")
                ok = false
            }
            if receivedSignal != 0 { break }
        }
        return ok
    }

    /// Copies stdin to a temporary file (the report reads its input twice).
    private static func spoolStdin() throws -> String {
        var template = Array("/tmp/badgeflow-report-XXXXXX".utf8CString)
        let fd = System.makeTemporaryFile(&template)
        guard fd >= 0 else {
            Console.error("badgeflow: error: cannot make a temporary file for stdin: \(ResultsFile.reason())")
            throw Exit.io
        }
        defer { System.closeDescriptor(fd) }
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            // A signal (Ctrl-C on a pipe that never ends) stops the copy, as it stops a replay.
            if !SignalWake.waitForInput(0) {
                System.removeFile(path)
                throw ExitCode(Signals.status(receivedSignal))
            }
            let n = System.readStandardInput(into: &chunk)
            if n < 0 {
                Console.error("badgeflow: <stdin>: cannot read: \(ResultsFile.reason())")
                System.removeFile(path)
                throw Exit.io
            }
            if n == 0 { break }
            let ok = Console.write(chunk, prefix: n, to: fd)
            if !ok {
                Console.error("badgeflow: error: cannot write the copy of stdin to \(path): \(ResultsFile.reason())")
                System.removeFile(path)
                throw Exit.io
            }
        }
        return path
    }

    func run() throws {
        let ruleSet = try rules.load()
        let sources = try sources(filesFrom: filesFrom)
        let output = self.output ?? (text ? "-" : "report.html")
        let out: ResultsFile
        do { out = try ResultsFile(output) } catch {
            Console.error("badgeflow: error: \(error.description)")
            throw Exit.io
        }
        Signals.install()
        JSONThread.useCLocale()
        let stdin = sources.contains("-") ? try Self.spoolStdin() : nil
        defer { if let stdin { System.removeFile(stdin) } }
        var report = ReplayReport(rules: ruleSet, stamp: stamp, numbered: numbered, accounts: account)
        report.command = commandWords()
        let limit = maxLineBytes
        var ok = replay(sources, stdin: stdin) { report.summarize($0, maxLineBytes: limit, overlongHead: $1) }
        report.beginDetail()
        if !report.shown.isEmpty && receivedSignal == 0 {
            ok = replay(sources, stdin: stdin) { report.detail($0, maxLineBytes: limit, overlongHead: $1) } && ok
        }
        report.finish()
        if receivedSignal != 0 {
            out.discard()
            throw ExitCode(Signals.status(receivedSignal))
        }
        let title = sources.map { $0 == "-" ? "<stdin>" : $0 }.joined(separator: ", ")
        var missing = false
        var page: String
        if text {
            page = ""
            for id in report.named {
                let answer = report.text(for: id) ?? ""
                if answer.hasSuffix("no line of the input names it\n") { missing = true }
                page += (page.isEmpty ? "" : "\n") + answer
            }
        } else {
            page = report.page(title: title)
        }
        let written = Console.write(utf8: &page, to: out.fd)
        if !written {
            let reason = ResultsFile.reason()
            out.discard()
            Console.error("badgeflow: error: \(output): cannot write: \(reason)")
            throw Exit.io
        }
        do { try out.commit() } catch {
            Console.error("badgeflow: error: \(error.description)")
            throw Exit.io
        }
        if output != "-" { Console.error("badgeflow: report written to \(output)") }
        if !ok { throw Exit.io }
        // As grep finds nothing: an account no line names is exit 1 (the text says so).
        if missing { throw ExitCode(1) }
    }

    /// The command that reports one account, around its `--account ID`: this run's rules,
    /// options and inputs.
    private func commandWords() -> (before: [String], after: [String]) {
        var before = ["badgeflow", "report"]
        if let path = rules.rules { before += ["--rules", path] }
        if stamp { before.append("--stamp") }
        if numbered { before.append("--numbered") }
        if maxLineBytes != 1 << 20 { before += ["--max-line-bytes", String(maxLineBytes)] }
        var after = inputs
        if let filesFrom { after = ["--files-from", filesFrom] + after }
        return (before, after)
    }
}
