import BadgeFlow
import BadgeTree
import Dispatch

/// Runs batch inputs through the filter engine and compares them with their expectations.
struct BatchRunner {
    /// What happened to one input file.
    enum Status: String {
        /// Output equals the expectation.
        case pass
        /// Output differs, or (`--strict`) holds an error line the fixture did not declare or
        /// no result line at all.
        case fail
        /// No expectation (a failure with `--strict`).
        case new
        /// `--update` wrote the expectation.
        case updated
        /// The input, its sidecars or its expectation could not be used.
        case error
        /// An expectation whose input is gone (a failure with `--strict`).
        case orphan
    }

    /// One differing line: 1-based line number, expected and actual text (nil: absent).
    struct LineDiff {
        let line: Int
        let expected: String?
        let actual: String?
    }

    /// One file's outcome.
    struct Result {
        let file: String
        var status: Status
        var expectedFile: String
        /// The differing lines, at most `BatchRunner.maxShownLines` (fail and updated).
        var diffs: [LineDiff] = []
        /// How many lines differ in all.
        var differing = 0
        /// Error lines of the output whose code the fixture did not declare (`--strict`).
        var undeclared: [(line: Int, code: String)] = []
        /// Whether `--update` created the expectation (false: replaced it).
        var created = false
        var message = ""
        var output: [UInt8] = []
        /// Seconds spent on this file.
        var seconds = 0.0
        /// The rules file the fixture ran with (`built-in rules` without one); every failure names it.
        var rulesName = ""
        /// Something the report says about a file that passed or failed (a CRLF expectation).
        var note = ""

        /// 1-based line of the first difference (0: none).
        var line: Int { diffs.first?.line ?? 0 }
    }

    /// Differing lines kept per file (the count is always exact).
    static let maxShownLines = 20

    let rules: RuleSet
    let update: Bool
    var strict = false

    /// True for files batch reads: `*.json` and `*.ndjson`, never sidecars (see `BatchOptions`).
    static func isInput(_ path: String) -> Bool {
        if BatchOptions.isSidecar(path) { return false }
        return path.hasSuffix(".json") || path.hasSuffix(".ndjson")
    }

    /// `a/b.ndjson` → `a/b.expected.ndjson`; `a/b.json` → `a/b.expected.ndjson`.
    static func expectationPath(_ file: String) -> String {
        BatchOptions.stem(file) + ".expected.ndjson"
    }

    /// The output `badgeflow filter` writes for the file, with its options.
    func output(of file: String, options: BatchOptions) throws(BatchFailure) -> [UInt8] {
        var stream = BadgeStream(rules: options.rules)
        if let state = options.state {
            do { stream = try StateFile.load(state, rules: options.rules) } catch {
                throw BatchFailure(message: "starting state: \(error.description)")
            }
        }
        var session = FilterSession(stream: stream, stamp: options.stamp, numbered: options.numbered)
        do { try Self.feed(file, into: &session) } catch { throw BatchFailure(message: error.description) }
        return session.output.bytes
    }

    private static func feed(_ file: String, into session: inout FilterSession) throws(FileIO.Failure) {
        if file.hasSuffix(".ndjson") {
            let fd = System.openForReading(file)
            if fd < 0 { throw FileIO.Failure(path: file, message: "cannot open: \(System.errorMessage)") }
            defer { System.closeDescriptor(fd) }
            let reader = LineReader(fd: fd)
            try reader.forEachLine(file) { line in
                session.feed(line, maxLineBytes: reader.maxLineBytes)
                return true
            }
        } else {
            // A .json file is one payload, however it is laid out.
            var bytes = try FileIO.readBytes(file)
            if let format = CompressedInput.format(ofPrefix: bytes) {
                throw FileIO.Failure(path: file, message: CompressedInput.reason(format))
            }
            // A UTF-8 BOM is skipped, as in NDJSON.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            feed(bytes: bytes, into: &session)
        }
    }

    /// The error codes in result lines: `(line, code)` for each line holding `"error":{"code":…`.
    static func errorLines(_ output: [UInt8]) -> [(line: Int, code: String)] {
        let marker = Array(#""error":{"code":""#.utf8)
        var found: [(Int, String)] = []
        var n = 0
        for line in output.split(separator: 0x0A, omittingEmptySubsequences: false) {
            n += 1
            guard line.count > marker.count else { continue }
            var i = line.startIndex
            while i + marker.count <= line.endIndex {
                if line[i] == marker[0] && line[i..<(i + marker.count)].elementsEqual(marker) {
                    let start = i + marker.count
                    let end = line[start...].firstIndex(of: 0x22) ?? line.endIndex
                    found.append((n, String(decoding: line[start..<end], as: UTF8.self)))
                    break
                }
                i += 1
            }
        }
        return found
    }

    /// Every differing line of two outputs, aligned by line number; the count is exact, at
    /// most `maxShownLines` are kept.
    static func diff(expected: [UInt8], actual: [UInt8]) -> (shown: [LineDiff], count: Int) {
        var e = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        var a = actual.split(separator: 0x0A, omittingEmptySubsequences: false)
        if e.last?.isEmpty == true { e.removeLast() }
        if a.last?.isEmpty == true { a.removeLast() }
        var shown: [LineDiff] = []
        var count = 0
        for i in 0..<max(e.count, a.count) {
            let x = i < e.count ? e[i] : nil
            let y = i < a.count ? a[i] : nil
            if let x, let y, x.elementsEqual(y) { continue }
            count += 1
            if shown.count < maxShownLines {
                shown.append(
                    LineDiff(
                        line: i + 1, expected: x.map { String(decoding: $0, as: UTF8.self) },
                        actual: y.map { String(decoding: $0, as: UTF8.self) }))
            }
        }
        if count == 0 && expected != actual {
            // Only the final newline differs.
            shown.append(LineDiff(line: max(e.count, a.count), expected: "(final newline differs)", actual: nil))
            count = 1
        }
        return (shown, count)
    }

    /// Runs and compares one file.
    func run(_ file: String, options: BatchOptions) -> Result {
        let start = Progress.now()
        var result = run(file, options)
        result.seconds = Progress.now() - start
        return result
    }

    private func run(_ file: String, _ options: BatchOptions) -> Result {
        let expectedFile = Self.expectationPath(file)
        var result = Result(file: file, status: .pass, expectedFile: expectedFile)
        result.rulesName = options.rulesName
        do {
            result.output = try output(of: file, options: options)
        } catch {
            result.status = .error
            result.message = error.message
            return result
        }
        // With --strict, an output with no result line (the input holds only blank lines)
        // is a failure: such a fixture tests nothing, and --update does not freeze it.
        let vacuous = strict && Self.producesNothing(result.output)
        if vacuous {
            result.message =
                "the output is empty (the input holds no event, only blank lines): a fixture that produces nothing tests nothing"
                + (update ? "; --update --strict does not write a 0-byte expectation" : "")
        }
        if strict {
            result.undeclared = Self.errorLines(result.output).filter { !options.expectedErrors.contains($0.code) }
        }
        let writable = update && result.undeclared.isEmpty && !vacuous
        guard FileIO.exists(expectedFile) else {
            result.status = .new
            result.created = true
            if writable {
                let (shown, count) = Self.diff(expected: [], actual: result.output)
                result.diffs = shown
                result.differing = count
                write(&result)
            } else if !result.undeclared.isEmpty || vacuous {
                result.status = .fail
            }
            return result
        }
        var expected: [UInt8]
        do { expected = try FileIO.readBytes(expectedFile) } catch {
            result.status = .error
            result.message = error.description
            return result
        }
        // An expectation saved with CRLF line endings (an editor, a checkout with autocrlf)
        // is compared as LF: the lines would look identical in any diff.
        if Self.hasCRLF(expected) {
            expected = Self.lf(expected)
            result.note = "\(expectedFile) has CRLF line endings; compared as LF"
        }
        if expected != result.output {
            result.status = .fail
            let (shown, count) = Self.diff(expected: expected, actual: result.output)
            result.diffs = shown
            result.differing = count
            if writable { write(&result) }
        } else if !result.undeclared.isEmpty || vacuous {
            result.status = .fail
        }
        return result
    }

    /// Whether `bytes` hold a CR LF pair.
    static func hasCRLF(_ bytes: [UInt8]) -> Bool {
        var i = 1
        while i < bytes.count {
            if bytes[i] == 0x0A && bytes[i - 1] == 0x0D { return true }
            i += 1
        }
        return false
    }

    /// `bytes` with every CR LF turned into LF.
    static func lf(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for (i, b) in bytes.enumerated() where !(b == 0x0D && i + 1 < bytes.count && bytes[i + 1] == 0x0A) { out.append(b) }
        return out
    }

    /// Why `file` (a `*.json` input without an expectation) is not a fixture: JSON that is
    /// neither a payload (no `aps`) nor an event (no `op`), such as a stray `README.json`;
    /// nil when it may be one (or is not JSON at all: a broken fixture is reported as such).
    static func notAFixture(_ file: String) -> String? {
        guard let text = try? FileIO.readString(file), let value = try? JSONValue.parse(text) else { return nil }
        if case .object(let members) = value {
            let keys = Set(members.map(\.0))
            if keys.contains("aps") || keys.contains("op") { return nil }
            let shown = members.prefix(3).map { "\"\($0.0)\"" }.joined(separator: ", ")
            return "not a fixture: JSON with neither \"aps\" (a payload) nor \"op\" (an event)"
                + (shown.isEmpty ? "" : "; its keys start \(shown)")
                + "; move it out of the fixture folders, or give it an expectation to run it"
        }
        return "not a fixture: a JSON \(value.typeName), where a payload or event is an object"
            + "; move it out of the fixture folders, or give it an expectation to run it"
    }

    /// Whether an output holds no result line (only whitespace, or nothing).
    static func producesNothing(_ output: [UInt8]) -> Bool {
        output.allSatisfy { $0 == 0x0A || $0 == 0x0D || $0 == 0x20 || $0 == 0x09 }
    }

    private func write(_ result: inout Result) {
        do {
            try FileIO.writeAtomically(result.output, to: result.expectedFile)
            result.status = .updated
        } catch {
            result.status = .error
            result.message = "cannot write the expectation: \(error.description)"
        }
    }

    /// One planned input: the file and its options, or why it cannot run.
    struct Plan {
        let file: String
        let options: Swift.Result<BatchOptions, BatchFailure>
    }

    /// Runs every plan on `jobs` threads; results come back in `plans` order.
    func run(_ plans: [Plan], jobs: Int, progress: (@Sendable (Int) -> Void)?) -> [Result] {
        // The package's one lock type (BadgeTree's `Locked`), as BadgeCenter uses it.
        let results = Locked<[BatchRunner.Result?]>(Array(repeating: nil, count: plans.count))
        let next = Locked(0)
        let done = Locked(0)
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, plans.count))) { _ in
            while true {
                let i = next.withLock { n in
                    n += 1; return n - 1
                }
                if i >= plans.count { return }
                let plan = plans[i]
                let result: Result
                switch plan.options {
                case .success(let options): result = run(plan.file, options: options)
                case .failure(let failure):
                    var r = Result(file: plan.file, status: .error, expectedFile: Self.expectationPath(plan.file))
                    r.message = failure.message
                    result = r
                }
                results.withLock { $0[i] = result }
                let n = done.withLock { d in
                    d += 1; return d
                }
                progress?(n)
            }
        }
        return results.withLock { $0.compactMap { $0 } }
    }
}

/// Why a batch input could not be run.
struct BatchFailure: Error {
    let message: String
}
