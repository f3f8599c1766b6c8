// BadgePath's work on raw bytes: the well-formedness check of a contiguous path and the
// segment escape, written into a buffer.

extension BadgePath {
    /// Whether `bytes` (1 to ``maxBytes`` of them) form a valid path: no empty segment, at most
    /// ``maxSegments`` segments, no control character.
    @inline(__always)
    static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var dots = 0
        var previous = UInt8(ascii: ".")  // a leading dot is an empty first segment
        for b in bytes {
            if b == UInt8(ascii: ".") {
                if previous == b { return false }
                dots += 1
            } else if b < 0x20 || b == 0x7F {
                return false
            }
            previous = b
        }
        return previous != UInt8(ascii: ".") && dots < maxSegments
    }

    /// Escapes a value so it stays one segment: `%` → `%25`, `.` → `%2E`, control
    /// characters → `%XX`, as rules-file path templates do. Round-trips through `unescapeSegment`.
    ///
    /// ```swift
    /// BadgePath.escapeSegment("v1.2")   // "v1%2E2"
    /// ```
    public static func escapeSegment(_ value: String) -> String {
        guard value.utf8.contains(where: escapes) else { return value }
        var value = value
        return value.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: 3 * bytes.count) { out in
                guard let target = out.baseAddress else { return 0 }
                return escapeSegment(bytes, into: target)
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// `escapeSegment` on bytes: writes at most `3 × bytes.count` bytes at `out` and returns
    /// how many it wrote.
    package static func escapeSegment(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Int {
        var n = 0
        for b in bytes {
            if escapes(b) {
                out[n] = 0x25
                out[n + 1] = hexDigits[Int(b >> 4)]
                out[n + 2] = hexDigits[Int(b & 0xF)]
                n += 3
            } else {
                out[n] = b
                n += 1
            }
        }
        return n
    }
}
