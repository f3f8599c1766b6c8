// ReplayReport's reads of lines in raw memory: a line of text handed on as a borrowed buffer,
// an overlong line's kept head split by its number, and a rejected line's bytes decoded to
// find its owner and payload shape. Relies on each buffer staying valid for the call (the
// reader's line, or the string's or array's own storage).

extension ReplayReport {
    /// Pass 1: replays one line (as text, without its newline).
    public mutating func summarize(_ line: String) {
        var line = line
        line.withUTF8 { summarize(.text(UnsafeRawBufferPointer($0)), maxLineBytes: Int.max) }
    }

    /// Records the shape (keys present) of an unmatched push's payload.
    mutating func noteShape(_ bytes: UnsafeRawBufferPointer, seq: Int) {
        var text = String(decoding: bytes, as: UTF8.self)
        if numbered, let tab = text.utf8.firstIndex(of: UInt8(ascii: "\t")) {
            text = String(text[text.utf8.index(after: tab)...])
        }
        guard let value = try? JSONValue.parse(text) else { return }
        let payload = value["aps"] == nil ? (value["payload"] ?? value) : value
        let shape = Self.shape(of: payload)
        if shapes[shape] != nil || shapes.count < Self.shapesKept {
            Self.count(shape, seq: seq, in: &shapes)
        } else {
            otherShapes += 1
        }
    }

    /// Pass 2: replays one line (as text, without its newline).
    public mutating func detail(_ line: String) {
        var line = line
        line.withUTF8 { detail(.text(UnsafeRawBufferPointer($0)), maxLineBytes: Int.max) }
    }

    /// The line analysed, with its seq, as `filter` reads it (`--numbered` prefixes and
    /// overlong lines included); nil for a blank line.
    func analyze(_ line: LineReader.Line, maxLineBytes: Int, overlongHead: [UInt8]) -> (LineResult, Int)? {
        func tooLong(_ n: Int) -> LineResult {
            .rejected(.error(.lineTooLong, "line is \(n) bytes, more than the \(maxLineBytes) bytes a line may have", at: ""))
        }
        switch line {
        case .text(let bytes):
            guard numbered else { return (analyzer.analyze(bytes), passSeq) }
            guard let (n, rest) = LineNumber.split(bytes) else {
                return LineNumber.isBlank(bytes) ? nil : (.rejected(LineNumber.invalid), passSeq)
            }
            let seq = n > 0 ? n : passSeq
            return rest.count > maxLineBytes ? (tooLong(rest.count), seq) : (analyzer.analyze(rest), seq)
        case .overlong(let count):
            guard numbered, let (n, rest) = overlongHead.withUnsafeBytes({ LineNumber.split($0) }) else {
                return (tooLong(count), passSeq)
            }
            return (tooLong(count - (overlongHead.count - rest.count)), n > 0 ? n : passSeq)
        }
    }

    /// The `account` (else `device`, else `""`) a rejected line names, when it parses, and
    /// the line's own `at` when it reads as a time.
    func owner(of bytes: UnsafeRawBufferPointer) -> (id: String, at: Double?)? {
        var text = String(decoding: bytes, as: UTF8.self)
        if numbered, let tab = text.utf8.firstIndex(of: UInt8(ascii: "\t")) {
            text = String(text[text.utf8.index(after: tab)...])
        }
        guard let value = try? JSONValue.parse(text), case .object = value else { return nil }
        var at: Double? = nil
        switch value["at"] {
        case .int(let n)?: at = Double(n)
        case .double(let n)?: at = n
        case .string(let t)?: at = EventTime.parseRFC3339(t)
        default: break
        }
        if case .string(let a)? = value["account"] { return (a, at) }
        if case .string(let d)? = value["device"] { return (d, at) }
        // A fleet-wide `expire` acts on no one account: a rejected one that names none is nobody's.
        if case .string("expire")? = value["op"], value["aps"] == nil { return nil }
        return value["account"] == nil && value["device"] == nil ? ("", at) : nil
    }
}
