import BadgeFlow
import BadgeTree
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs batch inputs through the filter engine and compares them with their expectations.
struct BatchRunner {
    /// What happened to one input file.
    enum Status: String {
        case pass, fail, new, updated, error
    }

    /// One file's outcome.
    struct Result {
        let file: String
        var status: Status
        var expectedFile: String
        /// 1-based line of the first difference (fail only).
        var line = 0
        var expectedLine: String? = nil
        var actualLine: String? = nil
        var message = ""
        var output: [UInt8] = []
    }

    let rules: RuleSet
    let update: Bool

    /// True for files batch reads: `*.json` and `*.ndjson`, never `*.expected.ndjson`
    /// (expectations) nor `*.rules.json` (per-file rules).
    static func isInput(_ path: String) -> Bool {
        if path.hasSuffix(".expected.ndjson") || path.hasSuffix(".rules.json") { return false }
        return path.hasSuffix(".json") || path.hasSuffix(".ndjson")
    }

    /// `a/b.ndjson` → `a/b.expected.ndjson`; `a/b.json` → `a/b.expected.ndjson`.
    static func expectationPath(_ file: String) -> String {
        let stem = file.hasSuffix(".ndjson") ? String(file.dropLast(7)) : String(file.dropLast(5))
        return stem + ".expected.ndjson"
    }

    /// `a/b.ndjson` → `a/b.rules.json`: rules that apply to that one file instead of `--rules`.
    static func rulesPath(_ file: String) -> String {
        let stem = file.hasSuffix(".ndjson") ? String(file.dropLast(7)) : String(file.dropLast(5))
        return stem + ".rules.json"
    }

    /// The output `badgeflow filter` writes for the file, from empty state.
    func output(of file: String) throws(BatchFailure) -> [UInt8] {
        var rules = self.rules
        let own = Self.rulesPath(file)
        if FileIO.exists(own) {
            do { rules = try RuleSet.load(file: own) } catch { throw BatchFailure(message: error.description) }
        }
        do { return try output(of: file, rules: rules) } catch { throw BatchFailure(message: error.description) }
    }

    private func output(of file: String, rules: RuleSet) throws(FileIO.Failure) -> [UInt8] {
        var session = FilterSession(rules: rules)
        if file.hasSuffix(".ndjson") {
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            if fd < 0 { throw FileIO.Failure(path: file, message: "cannot open: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            let reader = LineReader(fd: fd)
            try reader.forEachLine(file) { line in
                session.feed(line, maxLineBytes: reader.maxLineBytes)
                return true
            }
        } else {
            // A .json file is one payload, however it is laid out.
            let bytes = try FileIO.readBytes(file)
            bytes.withUnsafeBytes { session.feed($0) }
        }
        return session.output.bytes
    }

    /// Runs and compares one file.
    func run(_ file: String) -> Result {
        let expectedFile = Self.expectationPath(file)
        var result = Result(file: file, status: .pass, expectedFile: expectedFile)
        do {
            result.output = try output(of: file)
        } catch {
            result.status = .error
            result.message = error.message
            return result
        }
        guard FileIO.exists(expectedFile) else {
            result.status = .new
            if update { write(&result) }
            return result
        }
        let expected: [UInt8]
        do { expected = try FileIO.readBytes(expectedFile) } catch {
            result.status = .error
            result.message = error.description
            return result
        }
        if expected == result.output { return result }
        result.status = .fail
        let e = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        let a = result.output.split(separator: 0x0A, omittingEmptySubsequences: false)
        var i = 0
        while i < e.count && i < a.count && e[i] == a[i] { i += 1 }
        result.line = i + 1
        result.expectedLine = i < e.count ? String(decoding: e[i], as: UTF8.self) : nil
        result.actualLine = i < a.count ? String(decoding: a[i], as: UTF8.self) : nil
        if update { write(&result) }
        return result
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

    /// Runs every file on `jobs` threads; results come back in `files` order.
    func run(_ files: [String], jobs: Int, progress: (@Sendable (Int) -> Void)?) -> [Result] {
        // The package's one lock type (BadgeTree's `Locked`), as BadgeCenter uses it.
        let results = Locked<[BatchRunner.Result?]>(Array(repeating: nil, count: files.count))
        let next = Locked(0)
        let done = Locked(0)
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, files.count))) { _ in
            while true {
                let i = next.withLock { n in
                    n += 1; return n - 1
                }
                if i >= files.count { return }
                let result = run(files[i])
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
