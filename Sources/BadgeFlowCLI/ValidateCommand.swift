import ArgumentParser
import BadgeFlow

/// `badgeflow validate`: lint APNs payloads.
struct ValidateCommand: TakesManyInputs {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check APNs payloads: every aps key, its type and range, size and kind.",
        discussion: """
            A *.json FILE holds one payload (a syntax error is reported at its line and column); \
            any other FILE, and stdin, hold one payload per line (blank lines skipped); a FOLDER is \
            walked for *.json and *.ndjson (batch sidecars and expectations skipped). A leading \
            UTF-8 BOM is skipped. A line may also be a push envelope \
            {"op":"push","push-type":"voip","payload":{...}}, whose push-type wins over --push-type. \
            Problems print one a line: FILE:LINE: error[CODE] POINTER: message. A FILE that cannot \
            be read is reported on stderr and the others are still checked. Exit 0 when every \
            payload is valid, 1 when any has an error (with --strict: also any warning, or no \
            payload at all), 4 when a file cannot be read. A validate.json beside the files \
            declares push types by name pattern and warnings a file may carry on purpose \
            ({"push-types":{"voip-*.json":"voip"},"allowed-warnings":{"legacy-*.json":["unknown-aps-key"]}}); \
            it applies to subfolders, the nearest one winning. --junit FILE is always written, \
            with a failing test case for a missing path or a run with nothing to check.
            """
    )

    static let optionsWithValues = ["-o": "output", "--output": "output", "--push-type": "push-type", "--junit": "junit"]

    @Flag(name: .long, help: "Print one JSON result object per payload instead.")
    var json = false

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("Write the report to FILE instead of stdout (the summary stays on stderr).", valueName: "FILE"))
    var output: String?

    @Flag(name: .long, help: "Release gate: exit 1 on any warning too, and when no payload was checked.")
    var strict = false

    @Option(
        name: .customLong("push-type"),
        help: ArgumentHelp("The apns-push-type of bare payloads (alert, background, voip, liveactivity, ...).", valueName: "TYPE"))
    var pushType: String?

    @Option(name: .long, help: ArgumentHelp("Also write a JUnit XML report to FILE (a suite per file).", valueName: "FILE"))
    var junit: String?

    @Argument(
        help: ArgumentHelp(
            "Payload files (*.json: one payload; *.ndjson: one per line; `-`: stdin) and folders; stdin when none.", valueName: "PATH"))
    var files: [String] = []

    var inputs: [String] {
        get { files }
        set { files = newValue }
    }

    func run() throws {
        let target: ResultsFile
        do { target = try output.map { path throws(ResultsFile.Failure) in try ResultsFile(path) } ?? ResultsFile() } catch {
            Console.error("badgeflow: error: \(error.description)")
            throw Exit.io
        }
        let fd = target.fd
        var writeFailed = false
        var brokenPipe = false
        func emit(_ bytes: [UInt8]) {
            if writeFailed || bytes.isEmpty { return }
            if !Console.write(bytes, to: fd) {
                writeFailed = true
                brokenPipe = System.brokenPipe
                if !brokenPipe {
                    Console.error("badgeflow: error: \(output ?? "stdout"): cannot write: \(ResultsFile.reason())")
                }
            }
        }
        let validator = PayloadValidator()
        var out = JSONWriter()
        var text: [UInt8] = []
        var payloads = 0, invalid = 0, warnings = 0, failingWarnings = 0
        var unreadable = false

        var cases: [JUnitCase] = []
        /// Paths that could not be checked, and why (each a failing JUnit case).
        var problems: [(name: String, message: String)] = []
        var caseStart = Progress.now()

        // Option values read once: each read of an ArgumentParser property goes through its
        // wrapper (a copy and a generic metadata lookup), too dear once a line.
        let collectCases = junit != nil
        let asJSON = json

        func report(
            _ r: PayloadReport, file: String, line: Int, column: Int? = nil,
            settings: ValidateSidecar.Settings = ValidateSidecar.Settings()
        ) {
            payloads += 1
            if !r.isValid { invalid += 1 }
            warnings += r.warnings.count
            let allowed = settings.allowed?.codes ?? []
            failingWarnings += r.warnings.filter { !allowed.contains($0.code.rawValue) }.count
            if collectCases {
                let now = Progress.now()
                cases.append(JUnitCase(file: file, line: line, report: r, seconds: now - caseStart, settings: settings))
                caseStart = now
            }
            if asJSON {
                out.beginObject()
                out.key("file"); out.string(file)
                out.key("line"); out.int(line)
                if let column { out.key("column"); out.int(column) }
                out.key("valid"); out.bool(r.isValid)
                out.key("kind")
                if let k = r.kind { out.string(k.rawValue) } else { out.null() }
                // Only when a validate.json applies, so output without one keeps its bytes.
                if let p = settings.pushType {
                    out.key("push-type"); out.string(p.type)
                    out.key("push-type-from"); out.string(p.from)
                }
                if let a = settings.allowed {
                    out.key("allowed-warnings")
                    out.beginArray()
                    for code in a.codes.sorted() { out.string(code) }
                    out.endArray()
                    out.key("allowed-warnings-from"); out.string(a.from)
                }
                out.key("diagnostics")
                out.beginArray()
                for d in r.diagnostics {
                    out.beginObject()
                    out.key("severity"); out.string(d.severity.rawValue)
                    out.key("code"); out.string(d.code.rawValue)
                    out.key("message"); out.string(d.message)
                    out.key("at"); out.string(d.at)
                    if d.severity == .warning && allowed.contains(d.code.rawValue) { out.key("allowed"); out.bool(true) }
                    out.endObject()
                }
                out.endArray()
                out.endObject()
                out.newline()
            } else {
                for d in r.diagnostics {
                    let at = d.at.isEmpty ? "" : d.at + ": "
                    let note =
                        d.severity == .warning && allowed.contains(d.code.rawValue)
                        ? " (allowed by \(settings.allowed?.from ?? ""))" : ""
                    if let column {
                        text.append(
                            contentsOf:
                                "\(file):\(line):\(column): \(d.severity.rawValue)[\(d.code.rawValue)] \(at)\(d.message)\(note)\n".utf8)
                    } else {
                        text.append(
                            contentsOf: "\(file):\(line): \(d.severity.rawValue)[\(d.code.rawValue)] \(at)\(d.message)\(note)\n".utf8)
                    }
                }
            }
            if out.count > 1 << 16 { emit(out.bytes); out.removeAll() }
            if text.count > 1 << 16 { emit(text); text.removeAll(keepingCapacity: true) }
        }

        var sources: [(path: String, root: String)] = []
        for path in files.isEmpty ? ["-"] : files {
            if path != "-" && FileWalk.isDirectory(path) {
                let isInput = { (p: String) in (p.hasSuffix(".json") || p.hasSuffix(".ndjson")) && !BatchOptions.isSidecar(p) }
                let found = FileWalk.walk(path)
                FileWalk.warn(about: found, inputs: isInput)
                for name in found.undecodable where isInput(name) {
                    Console.error("badgeflow: \(name): the file name is not valid UTF-8; rename the file to validate it")
                    problems.append((name, "the file name is not valid UTF-8; rename the file to validate it"))
                    unreadable = true
                }
                let inputs = found.files.filter(isInput)
                if inputs.isEmpty {
                    let why = "the folder \(path) holds no *.json or *.ndjson payload file"
                    // Without --strict a run with nothing to check still passes, so no failing case.
                    Console.error("badgeflow: \(strict ? "error" : "warning"): \(why)")
                    if strict { problems.append((path, why)) }
                }
                sources += inputs.map { (path: $0, root: path) }
            } else {
                sources.append((path, path == "-" ? "." : BatchOptions.folder(path)))
            }
        }
        let sidecars = ValidateSidecar.Resolver()
        for (source, root) in sources {
            let name = source == "-" ? "<stdin>" : source
            let settings = source == "-" ? ValidateSidecar.Settings() : sidecars.settings(for: source, root: root)
            let pushType = settings.pushType?.type ?? self.pushType
            if source.hasSuffix(".json") {
                do {
                    var bytes = try FileIO.readBytes(source)
                    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
                    let r = validator.validateLine(bytes, pushType: pushType)
                    if r.firstError?.code == .invalidJSON, bytes.contains(0x0A),
                        let (line, column, message) = Self.syntaxError(bytes)
                    {
                        let d = Diagnostic(.error, .invalidJSON, message, at: "")
                        report(
                            PayloadReport(kind: nil, badge: nil, diagnostics: [d]), file: name, line: line, column: column,
                            settings: settings)
                    } else {
                        report(r, file: name, line: 1, settings: settings)
                    }
                } catch {
                    let why = error.message.replacing("cannot open: ", with: "")
                    Console.error("badgeflow: \(source): \(why)")
                    problems.append((name, why))
                    unreadable = true
                }
                continue
            }
            let fd: Int32 = source == "-" ? 0 : System.openForReading(source)
            if fd < 0 {
                let why = ResultsFile.reason()
                Console.error("badgeflow: \(source): \(why)")
                problems.append((name, why))
                unreadable = true
                continue
            }
            defer { if fd != 0 { System.closeDescriptor(fd) } }
            var line = 0
            do {
                try LineReader(fd: fd).forEachLine(name) { item in
                    line += 1
                    switch item {
                    case .text(let bytes):
                        if PayloadValidatorSupport.isBlank(bytes) { return true }
                        report(validator.validateLine(bytes, pushType: pushType), file: name, line: line, settings: settings)
                    case .overlong(let n):
                        report(
                            PayloadReport(
                                kind: nil, badge: nil,
                                diagnostics: [
                                    Diagnostic(.error, .payloadTooLarge, "line is \(n) bytes, far more than a payload may have", at: "")
                                ]), file: name, line: line, settings: settings)
                    }
                    return true
                }
            } catch {
                Console.error("badgeflow: \(error.description)")
                problems.append((name, error.description))
                unreadable = true
            }
        }
        for (file, why) in sidecars.failures.sorted(by: { $0.key < $1.key }) {
            Console.error("badgeflow: error: \(why)")
            problems.append((file, why))
            unreadable = true
        }
        if strict && payloads == 0 && problems.isEmpty {
            problems.append(
                (files.isEmpty ? "<stdin>" : files.joined(separator: " "), "no payloads checked; --strict needs at least one"))
        }
        emit(out.bytes)
        emit(text)
        if writeFailed {
            target.discard()
            if brokenPipe { throw ExitCode(Signals.status(System.brokenPipeSignal)) }
            throw Exit.io
        }
        do { try target.commit() } catch {
            Console.error("badgeflow: error: \(error.description)")
            throw Exit.io
        }
        if !json {
            Console.error(
                "\(payloads) payload\(payloads == 1 ? "" : "s"): \(payloads - invalid) valid, \(invalid) invalid, \(warnings) warning\(warnings == 1 ? "" : "s")"
            )
        }
        if let junit {
            let xml = Self.junit(cases, problems: problems, strict: strict)
            do { try FileIO.writeAtomically(Array(xml.utf8), to: junit) } catch {
                Console.error("badgeflow: error: \(error.description)")
                throw Exit.io
            }
        }
        if unreadable { throw Exit.io }
        if invalid > 0 { throw Exit.rejected }
        if strict && payloads == 0 {
            Console.error("badgeflow: error: no payloads checked; --strict needs at least one")
            throw Exit.rejected
        }
        if strict && failingWarnings > 0 { throw Exit.rejected }
    }

    /// The line, column and message of a syntax error in a multi-line file (json-c's
    /// offset turned into a place).
    static func syntaxError(_ bytes: [UInt8]) -> (Int, Int, String)? {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            _ = try JSONValue.parse(text)
            return nil
        } catch {
            let (line, column) = error.location(in: text)
            return (line, column, "\(error.message) at line \(line), column \(column)")
        }
    }

    /// One payload's JUnit test case.
    struct JUnitCase {
        let file: String
        let line: Int
        let report: PayloadReport
        let seconds: Double
        var settings = ValidateSidecar.Settings()

        /// The warnings `--strict` fails: those the file's `validate.json` does not allow.
        var failingWarnings: [Diagnostic] {
            let allowed = settings.allowed?.codes ?? []
            return report.warnings.filter { !allowed.contains($0.code.rawValue) }
        }
    }

    /// JUnit XML: a suite per file, a testcase per payload (`FILE:LINE`), a failure for an
    /// error (and, with `strict`, a warning its `validate.json` does not allow); a suite's
    /// properties name the push type and allowed warnings a sidecar gave. Each problem (a
    /// missing path, an empty folder, nothing checked) is a suite with one failing case.
    static func junit(_ cases: [JUnitCase], problems: [(name: String, message: String)] = [], strict: Bool) -> String {
        var files: [String] = []
        var byFile: [String: [JUnitCase]] = [:]
        for c in cases {
            if byFile[c.file] == nil { files.append(c.file) }
            byFile[c.file, default: []].append(c)
        }
        func failing(_ c: JUnitCase) -> Bool { !c.report.isValid || (strict && !c.failingWarnings.isEmpty) }
        let total = cases.reduce(0.0) { $0 + $1.seconds }
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out +=
            "<testsuites name=\"badgeflow validate\" tests=\"\(cases.count + problems.count)\" failures=\"\(cases.filter(failing).count + problems.count)\" errors=\"0\" time=\"\(BatchReport.seconds(total))\">\n"
        for file in files {
            let cs = byFile[file] ?? []
            let time = cs.reduce(0.0) { $0 + $1.seconds }
            out +=
                "  <testsuite name=\"\(BatchReport.xml(file))\" tests=\"\(cs.count)\" failures=\"\(cs.filter(failing).count)\" errors=\"0\" time=\"\(BatchReport.seconds(time))\">\n"
            if let settings = cs.first?.settings, settings.pushType != nil || settings.allowed != nil {
                out += "    <properties>\n"
                if let p = settings.pushType {
                    out += "      <property name=\"push-type\" value=\"\(BatchReport.xml(p.type))\"/>\n"
                    out += "      <property name=\"push-type-from\" value=\"\(BatchReport.xml(p.from))\"/>\n"
                }
                if let a = settings.allowed {
                    out +=
                        "      <property name=\"allowed-warnings\" value=\"\(BatchReport.xml(a.codes.sorted().joined(separator: " ")))\"/>\n"
                    out += "      <property name=\"allowed-warnings-from\" value=\"\(BatchReport.xml(a.from))\"/>\n"
                }
                out += "    </properties>\n"
            }
            for c in cs {
                out +=
                    "    <testcase classname=\"\(BatchReport.xml(file))\" name=\"\(BatchReport.xml(file)):\(c.line)\" time=\"\(BatchReport.seconds(c.seconds))\""
                guard failing(c) else {
                    out += "/>\n"
                    continue
                }
                let shown = c.report.diagnostics.filter { $0.severity == .error } + (strict ? c.failingWarnings : [])
                let first = shown.first
                let body = shown.map { "\($0.severity.rawValue)[\($0.code.rawValue)] \($0.at): \($0.message)" }.joined(separator: "\n")
                out +=
                    ">\n      <failure message=\"\(BatchReport.xml(first.map { "\($0.code.rawValue): \($0.message)" } ?? ""))\" type=\"\(BatchReport.xml(first?.code.rawValue ?? ""))\">"
                out += BatchReport.xml(body) + "</failure>\n    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        for p in problems {
            let name = BatchReport.xml(p.name)
            out += "  <testsuite name=\"\(name)\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0.000\">\n"
            out += "    <testcase classname=\"\(name)\" name=\"\(name)\" time=\"0.000\">\n"
            out +=
                "      <failure message=\"\(BatchReport.xml(p.message))\" type=\"not-checked\">\(BatchReport.xml(p.name + ": " + p.message))</failure>\n"
            out += "    </testcase>\n  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }
}

enum PayloadValidatorSupport {
    static func isBlank(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    }
}
