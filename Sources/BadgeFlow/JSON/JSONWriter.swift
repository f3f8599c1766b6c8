/// Appends compact JSON to a byte buffer, with keys in the order they are written.
///
/// This is the result-line writer: no intermediate objects, no Foundation. Commas are
/// placed automatically: a key or array element written after a value gets one. Strings are
/// escaped as RFC 8259 requires (`"`, `\`, control characters); `/` and non-ASCII UTF-8
/// are written as they are.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public var bytes: [UInt8]

    /// Creates a writer with room for `capacity` bytes.
    public init(capacity: Int = 1 << 16) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    private mutating func separate() {
        guard let last = bytes.last else { return }
        switch last {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"), UInt8(ascii: "\n"): return
        default: bytes.append(UInt8(ascii: ","))
        }
    }

    /// Starts an object (as a value or an array element).
    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")) }
    /// Ends the current object.
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")) }
    /// Starts an array.
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")) }
    /// Ends the current array.
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")) }
    /// Ends a line (one NDJSON record).
    public mutating func newline() { bytes.append(UInt8(ascii: "\n")) }

    /// Writes a member name known at compile time (no String is made).
    public mutating func key(_ name: StaticString) {
        separate()
        name.withUTF8Buffer { appendEscaped($0) }
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a member name.
    @_disfavoredOverload
    public mutating func key(_ name: String) {
        separate()
        appendEscaped(name)
        bytes.append(UInt8(ascii: ":"))
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

    /// Appends bytes that are already valid JSON (a pre-rendered fragment).
    public mutating func raw(_ fragment: [UInt8]) {
        separate()
        bytes.append(contentsOf: fragment)
    }

    private mutating func appendRaw(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Appends decimal digits without allocating.
    @inline(__always)
    mutating func appendDecimal(_ value: Int64) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(48 + value))
            return
        }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            repeat {
                buf[19 - n] = UInt8(48 + magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            bytes.append(contentsOf: buf[(20 - n)...])
        }
    }

    private mutating func appendEscaped(_ s: String) {
        var s = s
        s.withUTF8 { appendEscaped($0) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendEscaped(_ s: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        var i = 0
        let n = s.count
        while i < n {
            let b = s[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                i += 1
                continue
            }
            if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: s[start..<i])) }
            bytes.append(UInt8(ascii: "\\"))
            switch b {
            case 0x22: bytes.append(0x22)
            case 0x5C: bytes.append(0x5C)
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                bytes.append(contentsOf: [UInt8(ascii: "u"), 48, 48, Self.hex[Int(b >> 4)], Self.hex[Int(b & 0xF)]])
            }
            i += 1
            start = i
        }
        if start < n { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: s[start..<n])) }
        bytes.append(UInt8(ascii: "\""))
    }
}
