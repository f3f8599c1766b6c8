// The byte scanner: JSONScanner holds a borrowed buffer of JSON text and walks it by index.
// Relies on the buffer outliving the scanner (callers make one inside withUnsafeBytes or a
// parse of the same text) and on every read checking its index against the buffer's count.

/// Finds members and values in JSON text by its bytes, building nothing: the one byte
/// scanner of BadgeFlow.
///
/// It serves where json-c's tree is not wanted: the stamp's byte-preserving cut of a payload
/// (``PayloadStamp``), the streamed load of a state file (one account's bytes at a time), and
/// the U+0000 rule for object keys (``keyHoldingNUL(_:)``), which ``JSONParser`` applies to
/// every text it accepts.
///
/// It checks structure only as far as it walks (quotes, brackets, commas and colons); what it
/// passes over is not validated, so a caller either scans text json-c accepted or has json-c
/// parse each value it takes. Any index out of place gives nil, never a trap.
struct JSONScanner {
    /// The text.
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether `b` is JSON whitespace.
    @inline(__always)
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }

    /// The first index from `i` that is not whitespace.
    @inline(__always)
    func skipSpace(_ i: Int) -> Int {
        var i = i
        while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
        return i
    }

    /// The index after the string whose opening quote is at `i`, and whether it holds
    /// escapes; nil when there is no quote at `i` or the string does not end.
    @inline(__always)
    func stringEnd(_ i: Int) -> (end: Int, escaped: Bool)? {
        guard i < bytes.count, bytes[i] == 0x22 else { return nil }
        var i = i + 1
        var escaped = false
        while i < bytes.count {
            switch bytes[i] {
            case 0x22: return (i + 1, escaped)
            case 0x5C: escaped = true; i += 2
            default: i += 1
            }
        }
        return nil
    }

    /// The index after the value that starts at `i`: a string, an object or array (brackets
    /// matched, strings skipped), or a scalar (up to the next `,`, `}`, `]` or whitespace);
    /// nil when it does not end or is empty.
    func valueEnd(_ i: Int) -> Int? {
        guard i < bytes.count else { return nil }
        switch bytes[i] {
        case 0x22:
            return stringEnd(i)?.end
        case 0x7B, 0x5B:
            var depth = 0
            var i = i
            while i < bytes.count {
                switch bytes[i] {
                case 0x22:
                    guard let s = stringEnd(i) else { return nil }
                    i = s.end
                    continue
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
                i += 1
            }
            return nil
        default:
            let start = i
            var i = i
            while i < bytes.count {
                let b = bytes[i]
                if b == 0x2C || b == 0x7D || b == 0x5D || Self.isSpace(b) { break }
                i += 1
            }
            return i > start ? i : nil
        }
    }

    /// One member of an object: its key's bytes with their quotes, whether the key holds
    /// escapes, and where its value starts.
    struct Member {
        /// The key, quotes included.
        var key: Range<Int>
        /// Whether the key holds escapes (its bytes are then not its name).
        var escaped: Bool
        /// Where the value starts (after whitespace).
        var value: Int

        /// Whether the key's bytes between its quotes are `name` (for a key without
        /// escapes: check ``escaped`` first).
        @inline(__always)
        func keyIs(_ name: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
            guard key.count - 2 == name.count else { return false }
            for j in 0..<name.count where bytes[key.lowerBound + 1 + j] != name[j] { return false }
            return true
        }
    }

    /// Calls `body` with each member of the object that starts at `open` (after whitespace);
    /// `body` returns where the member's value ends (nil: stop). Returns the index after the
    /// object's `}`; nil when the bytes are not an object there or `body` stopped.
    ///
    /// Nothing is scanned ahead of `body`: a large value is read once, as `body` reads it.
    @inline(__always)
    func forEachMember(of open: Int, _ body: (Member) -> Int?) -> Int? {
        var i = skipSpace(open)
        guard i < bytes.count, bytes[i] == 0x7B else { return nil }
        i = skipSpace(i + 1)
        guard i < bytes.count else { return nil }
        if bytes[i] == 0x7D { return i + 1 }
        while true {
            let keyStart = i
            guard let key = stringEnd(i) else { return nil }
            i = skipSpace(key.end)
            guard i < bytes.count, bytes[i] == 0x3A else { return nil }
            let value = skipSpace(i + 1)
            guard let end = body(Member(key: keyStart..<key.end, escaped: key.escaped, value: value)) else { return nil }
            i = skipSpace(end)
            guard i < bytes.count else { return nil }
            if bytes[i] == 0x7D { return i + 1 }
            guard bytes[i] == 0x2C else { return nil }
            i = skipSpace(i + 1)
        }
    }

    /// The key whose quoted bytes are `r` when they are printable ASCII with no escape (the
    /// bytes are then the name itself); nil otherwise, for json-c to read.
    func plainKey(_ r: Range<Int>) -> String? {
        guard r.count >= 2 else { return nil }
        let inner = UnsafeRawBufferPointer(rebasing: bytes[(r.lowerBound + 1)..<(r.upperBound - 1)])
        for c in inner where c < 0x20 || c >= 0x7F || c == 0x5C || c == 0x22 { return nil }
        return String(decoding: inner, as: UTF8.self)
    }

    /// The offset of the first object key in `bytes` (a well-formed JSON text) that holds the
    /// escape `\u0000`; nil when none does. This is the U+0000 rule of every JSON text
    /// BadgeFlow reads (``JSONParser`` refuses such a text; a row cache made of one is not
    /// used).
    ///
    /// json-c keeps keys as C strings, so such a key would be cut at the U+0000, silently
    /// (`"alert\u0000x"` read as `alert`). Values keep their length and are not affected.
    /// A text without `\u0000` costs one `memchr` per backslash it holds, plus one.
    static func keyHoldingNUL(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let n = bytes.count
        // Only a text with a backslash can hold the escape: memchr jumps from one backslash to
        // the next (a line holds a few), and the byte-by-byte scan below runs only for a text
        // that has `\u0000` somewhere.
        var any = false
        var k = 0
        while k + 5 < n, let hit = System.memchr(base + k, 0x5C, n - k) {
            k = base.distance(to: UnsafeRawPointer(hit))
            guard k + 5 < n else { break }
            if isNULEscape(bytes, at: k) {
                any = true
                break
            }
            // The escaped character is skipped (`\\u0000` is a backslash, then text).
            k += 2
        }
        guard any else { return nil }
        var i = 0
        while i < n {
            // json-c's strict mode still takes single-quoted strings, keys too.
            let quote = bytes[i]
            guard quote == 0x22 || quote == 0x27 else {
                i += 1
                continue
            }
            let start = i
            var holdsNUL = false
            i += 1
            while i < n, bytes[i] != quote {
                if bytes[i] == 0x5C {
                    if isNULEscape(bytes, at: i) { holdsNUL = true }
                    i += 2
                } else {
                    i += 1
                }
            }
            i += 1
            guard holdsNUL else { continue }
            var j = i
            while j < n, isSpace(bytes[j]) { j += 1 }
            if j < n, bytes[j] == 0x3A { return start }
        }
        return nil
    }

    /// Whether the backslash at `i` starts `\u0000`.
    @inline(__always)
    private static func isNULEscape(_ bytes: UnsafeRawBufferPointer, at i: Int) -> Bool {
        i + 5 < bytes.count && bytes[i + 1] == UInt8(ascii: "u") && bytes[i + 2] == 0x30 && bytes[i + 3] == 0x30
            && bytes[i + 4] == 0x30 && bytes[i + 5] == 0x30
    }
}
