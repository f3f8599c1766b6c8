// Lines fed as borrowed bytes (a `LineReader.Line`'s, or a String's UTF-8), read in place
// and not kept past the call.

extension FilterSession {
    /// Feeds one line (without its newline).
    public mutating func feed(_ line: UnsafeRawBufferPointer) {
        seq += 1
        guard numbered else { return stream.apply(analyzer.analyze(line), seq: seq, into: &output) }
        if let (n, rest) = LineNumber.split(line) {
            stream.apply(analyzer.analyze(rest), seq: n, into: &output)
        } else if !LineNumber.isBlank(line) {
            stream.apply(.rejected(LineNumber.invalid), seq: seq, into: &output)
        }
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
}
