/// An id → position table for account ids whose hash the caller computed once
/// (``hash(_:)``) and passes to every call: the account table's slots, the accounts read
/// ahead, the ids evicted since a read-ahead request.
///
/// Open addressing with linear probing over one array of words, each holding the low 32
/// bits of an id's hash (its tag, which also picks its first bucket) and the position plus
/// one (0: an empty bucket). The ids themselves stay with the caller, which tells a
/// matching position from a tag that only collides (`matches`). Removing an entry shifts
/// the entries after it back by their tags (no tombstones, nothing hashed again): a
/// `Dictionary<String, Int>` hashes each id it passes over on a removal, and it hashes an
/// id again on every lookup.
///
/// At most half of the buckets are used, so a lookup probes about 1.5 buckets when it
/// finds its id and 2.5 when it does not. O(1) on average for each operation.
struct IDIndex: Sendable {
    /// Per bucket: the tag in the high 32 bits, the position plus one in the low 32 bits.
    var buckets: [UInt64] = []
    /// The number of entries.
    private(set) var count = 0

    /// An empty index (it allocates on the first insert).
    init() {}

    /// The hash of `id` every call takes: the standard library's (seeded per process).
    @inline(__always)
    static func hash(_ id: String) -> Int { id.hashValue }

    @inline(__always)
    private static func tag(_ hash: Int) -> UInt64 { UInt64(UInt32(truncatingIfNeeded: hash)) }

    /// The position of the entry whose hash is `hash` and for which `matches` holds, if any.
    @inline(__always)
    func find(_ hash: Int, where matches: (Int) -> Bool) -> Int? {
        guard count > 0 else { return nil }
        let mask = buckets.count - 1
        let tag = Self.tag(hash)
        var b = Int(tag) & mask
        while true {
            let word = buckets[b]
            if word == 0 { return nil }
            if word >> 32 == tag, matches(Int(word & 0xFFFF_FFFF) - 1) { return Int(word & 0xFFFF_FFFF) - 1 }
            b = (b + 1) & mask
        }
    }

    /// Adds `position` under `hash`; the caller knows that its id is not in the index.
    mutating func insert(_ hash: Int, position: Int) {
        precondition(position >= 0 && position < Int(UInt32.max), "IDIndex: position out of range")
        if (count + 1) * 2 > buckets.count { grow() }
        Self.place((Self.tag(hash) << 32) | UInt64(position + 1), in: &buckets)
        count += 1
    }

    /// Removes the entry of `position` under `hash` (nothing when it is not there).
    mutating func remove(_ hash: Int, position: Int) {
        guard count > 0 else { return }
        let mask = buckets.count - 1
        let tag = Self.tag(hash)
        let word = (tag << 32) | UInt64(position + 1)
        var i = Int(tag) & mask
        while buckets[i] != word {
            if buckets[i] == 0 { return }
            i = (i + 1) & mask
        }
        // Backward shift: each entry after the hole that may sit in it moves there.
        var j = i
        while true {
            j = (j + 1) & mask
            let next = buckets[j]
            if next == 0 { break }
            let home = Int(next >> 32) & mask
            // `next` may move to `i` when its home is not cyclically within (i, j].
            let stays = i <= j ? (home > i && home <= j) : (home > i || home <= j)
            if !stays {
                buckets[i] = next
                i = j
            }
        }
        buckets[i] = 0
        count -= 1
    }

    /// Removes every entry, keeping the buckets.
    mutating func removeAll() {
        guard count > 0 else { return }
        zeroBuckets()
        count = 0
    }

    private mutating func grow() {
        var larger = [UInt64](repeating: 0, count: max(16, buckets.count * 2))
        for word in buckets where word != 0 { Self.place(word, in: &larger) }
        buckets = larger
    }

    private static func place(_ word: UInt64, in buckets: inout [UInt64]) {
        let mask = buckets.count - 1
        var b = Int(word >> 32) & mask
        while buckets[b] != 0 { b = (b + 1) & mask }
        buckets[b] = word
    }
}
