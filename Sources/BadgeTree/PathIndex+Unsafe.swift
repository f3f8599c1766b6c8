// PathIndex's work on raw bytes: the path hash, a word at a time, and the probe.

extension PathIndex {
    /// The per-process seed; odd, so that it never zeroes a product.
    private static let seed: UInt64 = UInt64.random(in: 0...UInt64.max) | 1

    /// The 32-bit hash of `path`'s UTF-8 bytes under this process's seed.
    @inline(__always)
    static func hash(_ path: String) -> UInt32 {
        if let h = path.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return h }
        var copy = path
        return copy.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// Folds the full 128-bit product of `a` and `b` into 64 bits.
    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return high ^ low
    }

    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let n = bytes.count
        var h = mix(seed ^ UInt64(n), 0x9E37_79B9_7F4A_7C15)
        if let base = bytes.baseAddress {
            var i = 0
            while i + 8 <= n {
                h = mix(h ^ UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)), 0xA076_1D64_78BD_642F)
                i += 8
            }
            if i < n {
                // The tail: the last eight bytes when there are that many (overlapping bytes
                // already mixed), else the bytes one by one.
                var tail: UInt64 = 0
                if n >= 8 {
                    tail = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
                } else {
                    for k in i..<n { tail |= UInt64(base.load(fromByteOffset: k, as: UInt8.self)) << (8 * UInt64(k - i)) }
                }
                h = mix(h ^ tail, 0xE703_7ED1_A0B4_28DB)
            }
        }
        h = mix(h, 0x8EBC_6AF0_9C88_C6E3)
        return UInt32(truncatingIfNeeded: h >> 32)
    }

    /// The node index stored for `path`, if any; `matches(i)` tells whether node `i`'s path
    /// is `path` (called only for entries whose hash bits match).
    @inline(__always)
    func find(_ path: String, matches: (Int32) -> Bool) -> Int32? {
        guard !slots.isEmpty else { return nil }
        let h = Self.hash(path)
        return slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var s = Int(h) & mask
            while true {
                let entry = slots[s]
                if entry == 0 { return nil }
                if UInt32(truncatingIfNeeded: entry >> 32) == h {
                    let i = Int32(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1
                    if matches(i) { return i }
                }
                s = (s + 1) & mask
            }
        }
    }
}
