/// The filter's line loop, without I/O: feed lines in order, take the result bytes.
///
/// `badgeflow filter` and `badgeflow batch` both drive one, so batch output is byte for
/// byte what the filter writes.
///
/// ```swift
/// var session = FilterSession(rules: .builtIn)
/// session.feed(#"{"aps":{"alert":"hi","thread-id":"alice"}}"#)
/// String(decoding: session.output.bytes, as: UTF8.self)
/// ```
public struct FilterSession {
    /// The accounts, their devices and their state.
    public var stream: BadgeStream
    /// The line number of the last line fed (blank lines counted).
    public private(set) var seq = 0
    /// Result lines not yet taken.
    public var output = JSONWriter()
    private let analyzer: LineAnalyzer

    /// Starts a session over an existing stream (e.g. loaded from a state file); with
    /// `stamp`, push results carry the stamped payload (`--stamp`).
    public init(stream: BadgeStream, stamp: Bool) {
        self.stream = stream
        analyzer = LineAnalyzer(rules: stream.rules, stamp: stamp)
    }

    /// Starts a session over an existing stream (e.g. loaded from a state file).
    public init(stream: BadgeStream) { self.init(stream: stream, stamp: false) }

    /// Starts a session with no accounts; with `stamp`, push results carry the stamped payload.
    public init(rules: RuleSet, stamp: Bool = false) { self.init(stream: BadgeStream(rules: rules), stamp: stamp) }

    /// Lines rejected so far.
    public var rejected: Int { stream.rejected }

    /// Feeds one line (without its newline).
    public mutating func feed(_ line: UnsafeRawBufferPointer) {
        seq += 1
        stream.apply(analyzer.analyze(line), seq: seq, into: &output)
    }

    /// Feeds one line (without its newline) and returns its result as a value instead of
    /// writing it to ``output`` (nil for a blank line).
    public mutating func result(of line: UnsafeRawBufferPointer) -> StreamResult? {
        seq += 1
        return stream.apply(analyzer.analyze(line), seq: seq)
    }

    /// Feeds one line given as text and returns its result as a value (nil for a blank line).
    public mutating func result(of line: String) -> StreamResult? {
        var line = line
        return line.withUTF8 { result(of: UnsafeRawBufferPointer($0)) }
    }

    /// Feeds one line given as text.
    public mutating func feed(_ line: String) {
        var line = line
        line.withUTF8 { feed(UnsafeRawBufferPointer($0)) }
    }

    /// Feeds what a `LineReader` produced.
    public mutating func feed(_ line: LineReader.Line, maxLineBytes: Int) {
        switch line {
        case .text(let bytes): feed(bytes)
        case .overlong(let n):
            seq += 1
            let d = Diagnostic.error(.lineTooLong, "line is \(n) bytes, more than the \(maxLineBytes) bytes a line may have", at: "")
            stream.apply(.rejected(d), seq: seq, into: &output)
        }
    }

    /// Takes the pending output bytes, leaving the buffer empty (capacity kept).
    public mutating func takeOutput() -> [UInt8] {
        defer { output.removeAll() }
        return output.bytes
    }
}
