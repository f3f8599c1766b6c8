#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import BadgeFlow

/// `badgeflow validate`: lint APNs payloads.
struct ValidateCommand: TakesManyInputs {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check APNs payloads: every aps key, its type and range, size and kind.",
        discussion: """
            A *.json FILE holds one payload; any other FILE, and stdin, hold one payload per line \
            (blank lines skipped). A line may also be a push envelope \
            {"op":"push","push-type":"voip","payload":{…}}. Problems print one a line: \
            FILE:LINE: error[CODE] POINTER: message. A FILE that cannot be read is reported on \
            stderr and the others are still checked. Exit 0 when every payload is valid, 1 when \
            any has an error, 4 when a file cannot be read.
            """
    )

    static let optionsWithValues = ["-o": "output", "--output": "output"]

    @Flag(name: .long, help: "Print one JSON result object per payload instead.")
    var json = false

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("Write the report to FILE instead of stdout (the summary stays on stderr).", valueName: "FILE"))
    var output: String?

    @Argument(
        help: ArgumentHelp("Payload files (*.json: one payload; *.ndjson: one per line; `-`: stdin); stdin when none.", valueName: "FILE"))
    var files: [String] = []

    var inputs: [String] {
        get { files }
        set { files = newValue }
    }

    func run() throws {
        let target: OutputFile
        do { target = try output.map { path throws(OutputFile.Failure) in try OutputFile(path) } ?? OutputFile() } catch {
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
                brokenPipe = errno == EPIPE
                if !brokenPipe {
                    Console.error("badgeflow: error: \(output ?? "stdout"): cannot write: \(OutputFile.reason())")
                }
            }
        }
        let validator = PayloadValidator()
        var out = JSONWriter()
        var text: [UInt8] = []
        var payloads = 0, invalid = 0, warnings = 0
        var unreadable = false

        func report(_ r: PayloadReport, file: String, line: Int) {
            payloads += 1
            if !r.isValid { invalid += 1 }
            warnings += r.warnings.count
            if json {
                out.beginObject()
                out.key("file"); out.string(file)
                out.key("line"); out.int(line)
                out.key("valid"); out.bool(r.isValid)
                out.key("kind")
                if let k = r.kind { out.string(k.rawValue) } else { out.null() }
                out.key("diagnostics")
                out.beginArray()
                for d in r.diagnostics {
                    out.beginObject()
                    out.key("severity"); out.string(d.severity.rawValue)
                    out.key("code"); out.string(d.code.rawValue)
                    out.key("message"); out.string(d.message)
                    out.key("at"); out.string(d.at)
                    out.endObject()
                }
                out.endArray()
                out.endObject()
                out.newline()
            } else {
                for d in r.diagnostics {
                    let at = d.at.isEmpty ? "" : d.at + ": "
                    text.append(contentsOf: "\(file):\(line): \(d.severity.rawValue)[\(d.code.rawValue)] \(at)\(d.message)\n".utf8)
                }
            }
            if out.count > 1 << 16 { emit(out.bytes); out.removeAll() }
            if text.count > 1 << 16 { emit(text); text.removeAll(keepingCapacity: true) }
        }

        let sources = files.isEmpty ? ["-"] : files
        for source in sources {
            let name = source == "-" ? "<stdin>" : source
            if source.hasSuffix(".json") {
                do {
                    let bytes = try FileIO.readBytes(source)
                    let r = bytes.withUnsafeBytes { validator.validateLine($0) }
                    report(r, file: name, line: 1)
                } catch {
                    Console.error("badgeflow: \(source): \(error.message.replacing("cannot open: ", with: ""))")
                    unreadable = true
                }
                continue
            }
            let fd: Int32 = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
            if fd < 0 {
                Console.error("badgeflow: \(source): \(OutputFile.reason())")
                unreadable = true
                continue
            }
            defer { if fd != 0 { close(fd) } }
            var line = 0
            do {
                try LineReader(fd: fd).forEachLine(name) { item in
                    line += 1
                    switch item {
                    case .text(let bytes):
                        if PayloadValidatorSupport.isBlank(bytes) { return true }
                        report(validator.validateLine(bytes), file: name, line: line)
                    case .overlong(let n):
                        report(
                            PayloadReport(
                                kind: nil, badge: nil,
                                diagnostics: [
                                    Diagnostic(.error, .payloadTooLarge, "line is \(n) bytes, far more than a payload may have", at: "")
                                ]), file: name, line: line)
                    }
                    return true
                }
            } catch {
                Console.error("badgeflow: \(error.description)")
                unreadable = true
            }
        }
        emit(out.bytes)
        emit(text)
        if writeFailed {
            target.discard()
            if brokenPipe { throw ExitCode(Signals.status(SIGPIPE)) }
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
        if unreadable { throw Exit.io }
        if invalid > 0 { throw Exit.rejected }
    }
}

enum PayloadValidatorSupport {
    static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    }
}
