/// The filter's line loop, without I/O: feed lines in order, take the result bytes.
///
/// `badgeflow filter` and `badgeflow batch` both drive one, so batch output is byte for
/// byte what the filter writes. It reads no store: a store-backed stream
/// (``BadgeStream/isStoreBacked``) is fed through an ``AccountLoader`` or a
/// ``ParallelFilter`` with a ``ParallelFilter/source`` instead.
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
    public internal(set) var seq = 0
    /// Whether lines carry their number (`N<TAB>JSON`, see `LineNumber`): a result's `seq` is
    /// then that number; a non-blank line without it gets `invalid-line-number` with the
    /// physical line number, as does an overlong line (its prefix was not kept).
    public let numbered: Bool
    /// Result lines not yet taken.
    public var output = JSONWriter()
    let analyzer: LineAnalyzer

    /// Starts a session over an existing stream (e.g. loaded from a state file). With `stamp`,
    /// push results carry the stamped payload (`--stamp`); with `numbered`, lines carry their
    /// number as `N<TAB>` (`--numbered`).
    public init(stream: BadgeStream, stamp: Bool = false, numbered: Bool = false) {
        self.stream = stream
        self.numbered = numbered
        analyzer = LineAnalyzer(rules: stream.rules, stamp: stamp)
    }

    /// Starts a session with no accounts (see ``init(stream:stamp:numbered:)``).
    public init(rules: RuleSet, stamp: Bool = false, numbered: Bool = false) {
        self.init(stream: BadgeStream(rules: rules), stamp: stamp, numbered: numbered)
    }

    /// Lines rejected so far.
    public var rejected: Int { stream.rejected }

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
