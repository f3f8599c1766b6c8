/// A tree's nodes by path: an open-addressing table of node indices.
///
/// A `[String: Int32]` hashes every looked-up path with SipHash, about 350 instructions for
/// a path of a line of the bench stream, the largest part of a tree operation. This table
/// hashes a path's bytes a word at a time, with a seed drawn once per process (so that
/// colliding paths cannot be prepared in advance), and keeps 32 bits of each entry's hash
/// beside its node index: a probe compares a path only when those bits match.
///
/// The table holds indices, not paths: a lookup is given a test that compares a node's path.
/// Nodes are added in order: node `i` after nodes `0..<i`, so `i` is the entry count.
struct PathIndex: Sendable {
    /// Per slot: the hash's 32 bits in the high half, node index + 1 in the low half; 0 empty.
    private var slots: [UInt64] = []

    /// Whether the table holds no entry (it allocates nothing until the first insert).
    var isEmpty: Bool { slots.isEmpty }

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

    /// Adds node `i` under `path`, which the table does not hold yet; the table holds nodes
    /// `0..<i` (so `i` entries).
    mutating func insert(_ path: String, _ i: Int32) {
        // At most half full: probes stay short.
        if 2 * (Int(i) + 1) > slots.count { grow() }
        let h = Self.hash(path)
        place(UInt64(h) << 32 | UInt64(UInt32(i) + 1))
    }

    private mutating func place(_ entry: UInt64) {
        let mask = slots.count - 1
        var s = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
        while slots[s] != 0 { s = (s + 1) & mask }
        slots[s] = entry
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: max(32, old.count * 2))
        for entry in old where entry != 0 { place(entry) }
    }
}
