// JSONWriter is itself the raw-memory boundary of the result line: it owns a byte buffer it
// allocates, grows and frees (Storage), and writes into it through pointers. Relies on every
// write reserving its bytes first (reserve, writeRun's bound) so that base + count never
// passes capacity, and on a storage being changed only while uniquely referenced.

/// Appends compact JSON to a byte buffer, with keys in the order they are written.
///
/// This is the result-line writer: no intermediate objects, no Foundation. Commas are
/// placed automatically: a key or array element written after a value gets one. Strings are
/// escaped as RFC 8259 requires (`"`, `\`, control characters); `/` and non-ASCII UTF-8
/// are written as they are.
public struct JSONWriter: Sendable {
    /// The growable byte buffer behind a writer, copied on write like an array's.
    ///
    /// Raw memory rather than `[UInt8]`: a result line is dozens of small appends, and each
    /// array append pays for a uniqueness check, a capacity check and a generic copy call.
    ///
    /// Unchecked Sendable: a writer changes its storage only when it is the only reference
    /// (`isKnownUniquelyReferenced`, else it copies first), so no storage is changed while
    /// another thread can see it.
    final class Storage: @unchecked Sendable {
        struct Header {
            var base: UnsafeMutablePointer<UInt8>
            var count: Int
            var capacity: Int
        }

        /// Behind a pointer rather than in stored `var`s: class properties would cost a
        /// dynamic exclusivity check on every access.
        let header: UnsafeMutablePointer<Header>

        init(capacity: Int) {
            let capacity = max(capacity, 64)
            header = .allocate(capacity: 1)
            header.initialize(to: Header(base: .allocate(capacity: capacity), count: 0, capacity: capacity))
        }

        deinit {
            header.pointee.base.deallocate()
            header.deinitialize(count: 1)
            header.deallocate()
        }

        func copy(minimumCapacity: Int) -> Storage {
            let other = Storage(capacity: max(header.pointee.capacity, minimumCapacity))
            other.header.pointee.base.update(from: header.pointee.base, count: header.pointee.count)
            other.header.pointee.count = header.pointee.count
            return other
        }

        func grow(toAtLeast needed: Int) {
            var newCapacity = header.pointee.capacity * 2
            while newCapacity < needed { newCapacity *= 2 }
            let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            newBase.update(from: header.pointee.base, count: header.pointee.count)
            header.pointee.base.deallocate()
            header.pointee.base = newBase
            header.pointee.capacity = newCapacity
        }
    }

    private var storage: Storage

    /// Creates a writer with room for `capacity` bytes.
    public init(capacity: Int = 1 << 16) {
        storage = Storage(capacity: capacity)
    }

    /// A copy of the bytes written so far.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// How many bytes have been written.
    public var count: Int { storage.header.pointee.count }

    /// How many bytes fit before the buffer grows.
    var capacity: Int { storage.header.pointee.capacity }

    /// Calls `body` with the bytes written so far (valid only during the call).
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.header.pointee.base, count: storage.header.pointee.count))
    }

    /// Forgets the bytes written, keeping the memory for the next ones.
    public mutating func removeAll() {
        if isKnownUniquelyReferenced(&storage) {
            storage.header.pointee.count = 0
        } else {
            storage = Storage(capacity: storage.header.pointee.capacity)
        }
    }

    /// Makes room for at least `n` more bytes at once (a line whose size is known before it
    /// is written grows the buffer once, not by doubling, which holds the old buffer and the
    /// new one at the same time).
    mutating func reserve(more n: Int) {
        guard n > 0 else { return }
        _ = reserve(n)
    }

    /// Makes room for `n` more bytes and returns where they go; `commit` them after writing.
    @inline(__always)
    private mutating func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(minimumCapacity: storage.header.pointee.count + n)
        } else if storage.header.pointee.count + n > storage.header.pointee.capacity {
            storage.grow(toAtLeast: storage.header.pointee.count + n)
        }
        return storage.header.pointee.base + storage.header.pointee.count
    }

    @inline(__always)
    private mutating func commit(_ n: Int) { storage.header.pointee.count += n }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        commit(1)
    }

    @inline(__always)
    private mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress, buffer.count > 0 else { return }
        reserve(buffer.count).update(from: source, count: buffer.count)
        commit(buffer.count)
    }

    @inline(__always)
    private mutating func separate() {
        guard storage.header.pointee.count > 0 else { return }
        switch storage.header.pointee.base[storage.header.pointee.count - 1] {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"), UInt8(ascii: "\n"): return
        default: append(UInt8(ascii: ","))
        }
    }

    /// Starts an object (as a value or an array element).
    public mutating func beginObject() { separate(); append(UInt8(ascii: "{")) }
    /// Ends the current object.
    public mutating func endObject() { append(UInt8(ascii: "}")) }
    /// Starts an array.
    public mutating func beginArray() { separate(); append(UInt8(ascii: "[")) }
    /// Ends the current array.
    public mutating func endArray() { append(UInt8(ascii: "]")) }
    /// Ends a line (one NDJSON record).
    public mutating func newline() { append(UInt8(ascii: "\n")) }

    /// Appends a fixed piece of JSON verbatim: no separator, no escaping.
    ///
    /// For the result-line writer, whose layout is fixed: `#"{"seq":"#`, `#","count":"#`.
    /// The caller guarantees the fragment is valid JSON in its place.
    @inline(__always)
    mutating func fragment(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    /// Writes a string value without a separator (after a `fragment` ending in `:` or `[`).
    @inline(__always)
    mutating func bareString(_ value: String) {
        appendEscaped(value)
    }

    /// Writes an integer without a separator.
    @inline(__always)
    mutating func bareInt(_ value: Int) {
        appendDecimal(Int64(value))
    }

    /// Writes a member name known at compile time (no String is made).
    public mutating func key(_ name: StaticString) {
        separate()
        name.withUTF8Buffer { appendEscaped($0) }
        append(UInt8(ascii: ":"))
    }

    /// Writes a member name.
    @_disfavoredOverload
    public mutating func key(_ name: String) {
        separate()
        appendEscaped(name)
        append(UInt8(ascii: ":"))
    }

    /// Writes a string value.
    @_disfavoredOverload
    public mutating func string(_ value: String) {
        separate()
        appendEscaped(value)
    }

    /// Writes a string value given as UTF-8 bytes.
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        appendEscaped(value)
    }

    /// Writes a string value known at compile time (no String is made).
    public mutating func string(_ value: StaticString) {
        separate()
        value.withUTF8Buffer { appendEscaped($0) }
    }

    /// Writes an integer value.
    public mutating func int<I: BinaryInteger>(_ value: I) {
        separate()
        appendDecimal(Int64(value))
    }

    /// Writes a number; integral values print without a fraction, non-finite ones as `null`.
    public mutating func double(_ value: Double) {
        separate()
        guard value.isFinite else { appendRaw("null"); return }
        if value == value.rounded(), abs(value) < 1e15 {
            appendDecimal(Int64(value))
        } else {
            appendRaw(value.description)
        }
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        appendRaw(value ? "true" : "false")
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        appendRaw("null")
    }

    /// Writes an owned JSON value.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let members):
            beginObject()
            for (k, v) in members { key(k); self.value(v) }
            endObject()
        }
    }

    /// Appends bytes verbatim: no separator, no escaping (the caller keeps the JSON valid).
    @inline(__always)
    mutating func verbatim(_ buffer: UnsafeBufferPointer<UInt8>) {
        append(buffer)
    }

    /// Appends bytes that are already valid JSON (a pre-rendered fragment).
    public mutating func raw(_ fragment: [UInt8]) {
        separate()
        fragment.withUnsafeBufferPointer { append($0) }
    }

    private mutating func appendRaw(_ s: String) {
        var s = s
        s.withUTF8 { append($0) }
    }

    /// Appends decimal digits without allocating.
    @inline(__always)
    mutating func appendDecimal(_ value: Int64) {
        commit(Self.writeDecimal(value, to: reserve(Self.maxDecimalBytes)))
    }

    /// 10 to the power `n`, for `n` from 0 to 19 (a constant table once compiled); 0 otherwise.
    @inline(__always)
    static func powerOfTen(_ n: Int) -> UInt64 {
        switch n {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        case 18: 1_000_000_000_000_000_000
        case 19: 10_000_000_000_000_000_000
        default: 0
        }
    }

    /// The most bytes `writeDecimal` writes (`-9223372036854775808`).
    static let maxDecimalBytes = 20

    /// Writes `value` in decimal at `p` (at most `maxDecimalBytes`) and returns the byte count.
    @inline(__always)
    static func writeDecimal(_ value: Int64, to p: UnsafeMutablePointer<UInt8>) -> Int {
        // Counts, icons and most fields are below 100: no digit counting for those.
        if value >= 0 && value < 100 {
            if value < 10 {
                p[0] = UInt8(48 + value)
                return 1
            }
            p[0] = UInt8(48 + value / 10)
            p[1] = UInt8(48 + value % 10)
            return 2
        }
        return writeLongDecimal(value, to: p)
    }

    /// `writeDecimal` for values outside 0...99 (every line's seq, the tree's totals), out of
    /// line so that the inlined part stays two comparisons: the digits counted from the bit
    /// length (log10 2 ~ 1233 / 4096, corrected by one comparison with a power of ten), then
    /// written two per division from the table of pairs.
    @inline(never)
    static func writeLongDecimal(_ value: Int64, to p: UnsafeMutablePointer<UInt8>) -> Int {
        var magnitude = value.magnitude
        let estimate = ((64 - magnitude.leadingZeroBitCount) &* 1233) >> 12
        let digits = estimate + (magnitude >= powerOfTen(estimate) ? 1 : 0)
        let negative = value < 0
        let n = digits + (negative ? 1 : 0)
        if negative { p[0] = UInt8(ascii: "-") }
        let pairs = Self.digitPairs.utf8Start
        var i = n
        while magnitude >= 100 {
            let pair = Int(magnitude % 100) &* 2
            magnitude /= 100
            p[i - 1] = pairs[pair + 1]
            p[i - 2] = pairs[pair]
            i -= 2
        }
        if magnitude >= 10 {
            let pair = Int(magnitude) &* 2
            p[i - 1] = pairs[pair + 1]
            p[i - 2] = pairs[pair]
        } else {
            p[i - 1] = UInt8(48 + magnitude)
        }
        return n
    }

    /// "00", "01", … "99" back to back: two digits per table read.
    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    private mutating func appendEscaped(_ s: String) {
        var s = s
        s.withUTF8 { appendEscaped($0) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether any of the eight bytes of `w` is a control character, a quote or a backslash.
    @inline(__always)
    private static func flagged(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        // A byte of w is zero exactly when (w - ones) & ~w & highs has its high bit.
        @inline(__always) func hasZeroByte(_ w: UInt64) -> Bool { (w &- ones) & ~w & highs != 0 }
        // Bytes below 0x20: (w - 0x20…) borrows into the high bit of bytes < 0x20 that had it clear.
        let control = (w &- 0x2020_2020_2020_2020) & ~w & highs
        return control != 0 || hasZeroByte(w ^ 0x2222_2222_2222_2222) || hasZeroByte(w ^ 0x5C5C_5C5C_5C5C_5C5C)
    }

    /// Whether any byte is a control character, a quote or a backslash; eight bytes at a time.
    @inline(__always)
    private static func needsEscaping(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = s.baseAddress else { return false }
        let n = s.count
        var i = 0
        while i + 8 <= n {
            if flagged(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return true }
            i += 8
        }
        // The last few bytes: one more word ending at the last byte (it overlaps bytes
        // already checked, which are clean), instead of a byte at a time.
        if i < n && n >= 8 {
            return flagged(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
        }
        while i < n {
            let b = base[i]
            if b < 0x20 || b == 0x22 || b == 0x5C { return true }
            i += 1
        }
        return false
    }

    private mutating func appendEscaped(_ s: UnsafeBufferPointer<UInt8>) {
        commit(Self.writeQuoted(s, to: reserve(Self.quotedBound(s.count))))
    }

    /// The most bytes `writeQuoted` writes for `count` bytes of text: each byte may become six
    /// (`\u00XX`), and the quotes.
    @inline(__always)
    static func quotedBound(_ count: Int) -> Int { 6 * count + 2 }

    /// Writes `s` as a JSON string, quoted and escaped, at `p` (room for `quotedBound(s.count)`)
    /// and returns the byte count.
    static func writeQuoted(_ s: UnsafeBufferPointer<UInt8>, to p: UnsafeMutablePointer<UInt8>) -> Int {
        let n = s.count
        // Short texts (a device, an account, a rule, a kind, most paths): checked and copied as
        // two overlapping words, the first and the last, with no loop and no memcpy call.
        if let source = s.baseAddress, n >= 4 && n <= 16 {
            let from = UnsafeRawPointer(source)
            let to = UnsafeMutableRawPointer(p + 1)
            if n >= 8 {
                let first = from.loadUnaligned(as: UInt64.self)
                let last = from.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                if !flagged(first) && !flagged(last) {
                    p[0] = UInt8(ascii: "\"")
                    to.storeBytes(of: first, as: UInt64.self)
                    to.storeBytes(of: last, toByteOffset: n - 8, as: UInt64.self)
                    p[n + 1] = UInt8(ascii: "\"")
                    return n + 2
                }
            } else {
                let first = from.loadUnaligned(as: UInt32.self)
                let last = from.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
                if !flagged(UInt64(first) | UInt64(last) << 32) {
                    p[0] = UInt8(ascii: "\"")
                    to.storeBytes(of: first, as: UInt32.self)
                    to.storeBytes(of: last, toByteOffset: n - 4, as: UInt32.self)
                    p[n + 1] = UInt8(ascii: "\"")
                    return n + 2
                }
            }
        } else if !needsEscaping(s) {
            // Nothing to escape: one copy between the quotes.
            p[0] = UInt8(ascii: "\"")
            if let source = s.baseAddress, n > 0 { (p + 1).update(from: source, count: n) }
            p[n + 1] = UInt8(ascii: "\"")
            return n + 2
        }
        var k = 0
        p[k] = UInt8(ascii: "\""); k += 1
        for b in s {
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                p[k] = b; k += 1
                continue
            }
            p[k] = UInt8(ascii: "\\"); k += 1
            switch b {
            case 0x22: p[k] = 0x22
            case 0x5C: p[k] = 0x5C
            case 0x0A: p[k] = UInt8(ascii: "n")
            case 0x0D: p[k] = UInt8(ascii: "r")
            case 0x09: p[k] = UInt8(ascii: "t")
            case 0x08: p[k] = UInt8(ascii: "b")
            case 0x0C: p[k] = UInt8(ascii: "f")
            default:
                p[k] = UInt8(ascii: "u"); p[k + 1] = 48; p[k + 2] = 48
                p[k + 3] = hex[Int(b >> 4)]
                p[k + 4] = hex[Int(b & 0xF)]
                k += 4
            }
            k += 1
        }
        p[k] = UInt8(ascii: "\""); k += 1
        return k
    }

    /// Writes a run of small pieces into at most `bound` bytes reserved at once.
    ///
    /// Each `fragment`, number or string written on its own checks the buffer's capacity and
    /// uniqueness; a result line's change entry is a dozen such pieces. Here there is one
    /// check, and `body` writes through a cursor. `body` must write at most `bound` bytes.
    @inline(__always)
    mutating func writeRun(atMost bound: Int, _ body: (inout Cursor) -> Void) {
        let start = reserve(bound)
        var cursor = Cursor(position: start, limit: start + bound)
        body(&cursor)
        commit(start.distance(to: cursor.position))
    }

    /// Where the next byte of a `writeRun` goes; each method advances it.
    ///
    /// Debug builds check every write against the run's bound before it happens, so a
    /// hand-summed bound that forgot a piece stops at the faulty write instead of overflowing
    /// the buffer silently; release builds compile the checks out.
    struct Cursor {
        var position: UnsafeMutablePointer<UInt8>
        /// The end of the reserved run.
        let limit: UnsafeMutablePointer<UInt8>

        @inline(__always)
        private func check(_ n: Int) {
            assert(position + n <= limit, "writeRun: a write of \(n) bytes passes the run's bound by \(position + n - limit)")
        }

        /// Fixed JSON text, verbatim.
        @inline(__always)
        mutating func fragment(_ text: StaticString) {
            let n = text.utf8CodeUnitCount
            check(n)
            position.update(from: text.utf8Start, count: n)
            position += n
        }

        /// One byte.
        @inline(__always)
        mutating func byte(_ b: UInt8) {
            check(1)
            position.pointee = b
            position += 1
        }

        /// Decimal digits (at most `JSONWriter.maxDecimalBytes`).
        @inline(__always)
        mutating func decimal(_ value: Int) {
            check(JSONWriter.maxDecimalBytes)
            position += JSONWriter.writeDecimal(Int64(value), to: position)
        }

        /// A quoted, escaped string (at most `JSONWriter.quotedBound(count)` bytes).
        @inline(__always)
        mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
            check(JSONWriter.quotedBound(utf8.count))
            position += JSONWriter.writeQuoted(utf8, to: position)
        }

        /// A quoted, escaped string (at most `JSONWriter.quotedBound(value.utf8.count)` bytes),
        /// read in place when its UTF-8 is contiguous (a native string: no copy, no retain).
        @inline(__always)
        mutating func quoted(borrowing value: String) {
            check(JSONWriter.quotedBound(value.utf8.count))
            let p = position
            if let n = value.utf8.withContiguousStorageIfAvailable({ JSONWriter.writeQuoted($0, to: p) }) {
                position += n
            } else {
                quoted(value)
            }
        }

        /// A quoted, escaped string (at most `JSONWriter.quotedBound(value.utf8.count)` bytes).
        @inline(__always)
        mutating func quoted(_ value: String) {
            var value = value
            check(JSONWriter.quotedBound(value.utf8.count))
            let p = position
            position += value.withUTF8 { JSONWriter.writeQuoted($0, to: p) }
        }
    }
}
