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
            its layout). Files are processed on all cores and reported in path order. Sidecars \
            give options and are never inputs: rules.json and batch.json per folder, NAME.rules.json \
            and NAME.batch.json per file ({"rules","stamp","numbered","state","expected-errors"}). \
            Exit 1 when any file fails or cannot be read, or two inputs share one expectation; \
            files without an expectation are reported as new (a failure with --strict).
            """
    )

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json, junit
    }

    @OptionGroup var rules: RulesOption

    @Flag(name: .long, help: "Write NAME.expected.ndjson for new and failing files.")
    var update = false

    @Flag(
        name: .long,
        help:
            "Release gate: also fail on an input without expectation, an expectation without input, no inputs at all, error lines the fixture does not declare, and a fixture whose output is empty."
    )
    var strict = false

    @Option(name: .long, help: "Report format: text, json or junit.")
    var report: ReportFormat = .text

    @Option(name: .long, help: ArgumentHelp("Also write the JUnit XML report to FILE.", valueName: "FILE"))
    var junit: String?

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

    /// Where `--out DIR` writes `file`'s actual output: DIR, then the file's path with `.`
    /// and `..` resolved (a path that climbs above the working folder is taken from its
    /// absolute form), so nothing lands outside DIR.
    static func outPath(_ out: String, for file: String, cwd: String) -> String {
        func normalized(_ path: String) -> [Substring]? {
            var parts: [Substring] = []
            for part in path.split(separator: "/") where part != "." {
                if part == ".." {
                    if parts.isEmpty { return nil }
                    parts.removeLast()
                } else {
                    parts.append(part)
                }
            }
            return parts
        }
        let parts =
            file.hasPrefix("/")
            ? normalized(file) ?? [] : normalized(file) ?? normalized(cwd + "/" + file) ?? []
        let stem = BatchOptions.stem(parts.joined(separator: "/"))
        let base = out.hasSuffix("/") && out.count > 1 ? String(out.dropLast()) : out
        return base + "/" + stem + ".actual.ndjson"
    }

    /// The working folder.
    static var currentDirectory: String {
        System.workingDirectory() ?? "/"
    }

    /// Writes `--junit FILE` for a run that stops before any input ran (one failing case).
    private func junitNotRun(_ name: String, _ message: String) {
        guard let junit else { return }
        do { try FileIO.writeAtomically(Array(BatchReport.junitNotRun(name, message).utf8), to: junit) } catch {
            Console.error("badgeflow: error: \(error.description)")
        }
    }

    func run() throws {
        let ruleSet = try rules.load()
        var files: [String] = []
        var expectations: [String] = []
        for path in paths {
            guard FileIO.exists(path) else {
                Console.error("badgeflow: error: \(path): no such file or folder")
                junitNotRun(path, "no such file or folder")
                throw Exit.io
            }
            if FileWalk.isDirectory(path) {
                let found = FileWalk.walk(path)
                FileWalk.warn(about: found, inputs: BatchRunner.isInput)
                let undecodable = found.undecodable.filter(BatchRunner.isInput)
                for name in undecodable {
                    Console.error("badgeflow: error: \(name): the file name is not valid UTF-8; rename the file to run it")
                }
                if !undecodable.isEmpty {
                    junitNotRun(undecodable[0], "the file name is not valid UTF-8; rename the file to run it")
                    throw Exit.io
                }
                files.append(contentsOf: found.files.filter(BatchRunner.isInput))
                expectations.append(contentsOf: found.files.filter { $0.hasSuffix(".expected.ndjson") })
            } else {
                files.append(path)
            }
        }
        var seen = Set<String>()
        files = files.filter { seen.insert($0).inserted }
        if strict && files.isEmpty {
            let why = "no inputs (*.json, *.ndjson) found under \(paths.joined(separator: ", ")); --strict needs at least one"
            Console.error("badgeflow: error: \(why)")
            junitNotRun(paths.joined(separator: " "), why)
            throw Exit.rejected
        }
        // Two inputs sharing one expectation (a.json and a.ndjson) never run: an error in any mode.
        var byExpectation: [String: [String]] = [:]
        for f in files { byExpectation[BatchRunner.expectationPath(f), default: []].append(f) }
        let resolver = BatchOptions.Resolver(
            base: ruleSet, baseName: rules.rules ?? "built-in rules", roots: paths.filter(FileWalk.isDirectory))
        var plans: [BatchRunner.Plan] = []
        for f in files {
            let expected = BatchRunner.expectationPath(f)
            if let group = byExpectation[expected], group.count > 1 {
                let others = group.filter { $0 != f }.joined(separator: ", ")
                plans.append(
                    .init(file: f, options: .failure(BatchFailure(message: "shares \(expected) with \(others); rename one of them"))))
                continue
            }
            if f.hasSuffix(".json"), !FileIO.exists(expected), let why = BatchRunner.notAFixture(f) {
                plans.append(.init(file: f, options: .failure(BatchFailure(message: why))))
                continue
            }
            do { plans.append(.init(file: f, options: .success(try resolver.options(for: f)))) } catch {
                plans.append(.init(file: f, options: .failure(BatchFailure(message: error.message))))
            }
        }
        var runner = BatchRunner(rules: ruleSet, update: update)
        runner.strict = strict
        let showProgress = Console.isTerminal(2) && files.count > 1
        let total = files.count
        var progress: (@Sendable (Int) -> Void)? = nil
        if showProgress {
            progress = { @Sendable done in BatchCommand.drawProgress(done, of: total) }
        }
        var results = runner.run(plans, jobs: jobs ?? ProcessorCount.online, progress: progress)
        if showProgress { Console.write(Array("\r\u{1B}[K".utf8), to: 2) }
        // Expectations whose input is gone.
        for e in Set(expectations).subtracting(byExpectation.keys).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            var r = BatchRunner.Result(file: e, status: .orphan, expectedFile: e)
            r.message = "no input (\(BatchOptions.stem(e).dropLast(9)).json or .ndjson) for this expectation"
            results.append(r)
        }
        if let out {
            let cwd = Self.currentDirectory
            for r in results where r.status != .error && r.status != .orphan {
                let target = Self.outPath(out, for: r.file, cwd: cwd)
                if let slash = target.lastIndex(of: "/") { FileWalk.makeDirectories(String(target[..<slash])) }
                do { try FileIO.writeAtomically(r.output, to: target) } catch {
                    Console.error("badgeflow: error: \(error.description)")
                    throw Exit.io
                }
            }
        }
        let formatter = BatchReport(results: results, colored: color ?? Console.colorByDefault(1), strict: strict)
        switch report {
        case .text: Console.out(formatter.text())
        case .json: Console.write(formatter.json())
        case .junit: Console.out(formatter.junit())
        }
        if let junit {
            do { try FileIO.writeAtomically(Array(formatter.junit().utf8), to: junit) } catch {
                Console.error("badgeflow: error: \(error.description)")
                throw Exit.io
            }
        }
        // A compressed input is an I/O error, as in filter and report (RunningTheFilter).
        if results.contains(where: { $0.status == .error && CompressedInput.isReason($0.message) }) { throw Exit.io }
        if formatter.failed { throw Exit.rejected }
    }
}

enum ProcessorCount {
    static var online: Int { System.processorsOnline }
}
