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
    private(set) var slots: [UInt64] = []

    /// Whether the table holds no entry (it allocates nothing until the first insert).
    var isEmpty: Bool { slots.isEmpty }

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
