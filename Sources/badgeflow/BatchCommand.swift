import ArgumentParser
import BadgeFlow

/// `badgeflow batch`: run fixture files and compare them with golden expectations.
struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Run *.json payloads and *.ndjson streams and compare each with NAME.expected.ndjson.",
        discussion: """
            Folders are walked recursively. Each file runs from empty state, and its output is byte \
            for byte what `badgeflow filter` writes for it (a *.json file is one payload, whatever \
            its layout). Files are processed on all cores and reported in path order. Exit 1 when \
            any file fails or cannot be read; files without an expectation are reported as new.
            """
    )

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json, junit
    }

    @OptionGroup var rules: RulesOption

    @Flag(name: .long, help: "Write NAME.expected.ndjson for new and failing files.")
    var update = false

    @Option(name: .long, help: "Report format: text, json or junit.")
    var report: ReportFormat = .text

    @Option(
        name: .long,
        help: ArgumentHelp("Also write each file's actual output under DIR, at its path with .actual.ndjson.", valueName: "DIR"))
    var out: String?

    @Option(name: .long, help: "Worker threads (default: the number of cores).")
    var jobs: Int?

    @Flag(name: .long, inversion: .prefixedNo, help: "Colour the text report (default: when stdout is a terminal and NO_COLOR is not set).")
    var color: Bool?

    @Argument(help: ArgumentHelp("Files and folders to run.", valueName: "PATH"))
    var paths: [String]

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    /// Draws `[#####.....] 12/40` on stderr.
    static func drawProgress(_ done: Int, of total: Int) {
        let width = 30
        let filled = total == 0 ? width : done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        Console.write(Array("\r[\(bar)] \(done)/\(total)".utf8), to: 2)
    }

    func run() throws {
        let ruleSet = try rules.load()
        var files: [String] = []
        for path in paths {
            guard FileIO.exists(path) else {
                Console.error("badgeflow: error: \(path): no such file or folder")
                throw Exit.io
            }
            let found = FileWalk.files(under: path)
            files.append(contentsOf: FileWalk.isDirectory(path) ? found.filter(BatchRunner.isInput) : found)
        }
        let runner = BatchRunner(rules: ruleSet, update: update)
        let showProgress = Console.isTerminal(2) && files.count > 1
        let total = files.count
        var progress: (@Sendable (Int) -> Void)? = nil
        if showProgress {
            progress = { @Sendable done in BatchCommand.drawProgress(done, of: total) }
        }
        let results = runner.run(files, jobs: jobs ?? ProcessorCount.online, progress: progress)
        if showProgress { Console.write(Array("\r\u{1B}[K".utf8), to: 2) }
        if let out {
            for r in results where r.status != .error {
                let target = out + "/" + String(r.file.drop(while: { $0 == "/" }))
                let stem = target.hasSuffix(".ndjson") ? String(target.dropLast(7)) : String(target.dropLast(5))
                if let slash = stem.lastIndex(of: "/") { FileWalk.makeDirectories(String(stem[..<slash])) }
                do { try FileIO.writeAtomically(r.output, to: stem + ".actual.ndjson") } catch {
                    Console.error("badgeflow: error: \(error.description)")
                    throw Exit.io
                }
            }
        }
        let formatter = BatchReport(results: results, colored: color ?? Console.colorByDefault(1))
        switch report {
        case .text: Console.out(formatter.text())
        case .json: Console.write(formatter.json())
        case .junit: Console.out(formatter.junit())
        }
        let c = formatter.counts
        if c.fail > 0 || c.error > 0 { throw Exit.rejected }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum ProcessorCount {
    static var online: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
