/// The accounts that hold marks with an expiry, ordered by when the first may be due: a
/// min-heap of (time, account id) that a fleet-wide `expire` pops up to its time.
///
/// An entry is a bound, not a promise: the account's mark may have been cleared or set
/// again since, and an account may have several entries; ``BadgeStream`` checks each
/// account it pops. Only accounts with expiring marks are ever in it, so a stream without
/// them pays one branch a line.
struct DueIndex: Sendable {
    private(set) var entries: [(time: Double, account: String)] = []

    /// Whether no account is indexed.
    var isEmpty: Bool { entries.isEmpty }

    /// The earliest entry.
    var first: (time: Double, account: String)? { entries.first }

    /// Adds `account`, whose first mark may be due at `time`.
    mutating func insert(_ account: String, at time: Double) {
        entries.append((time, account))
        var c = entries.count - 1
        while c > 0 {
            let p = (c - 1) / 2
            if entries[p].time <= entries[c].time { break }
            entries.swapAt(p, c)
            c = p
        }
    }

    /// The accounts of the entries due at or before `time` (an account once per entry), in no
    /// particular order; the heap is walked only below such entries.
    func accounts(dueThrough time: Double) -> [String] {
        var found: [String] = []
        var stack = entries.isEmpty ? [] : [0]
        while let i = stack.popLast() {
            guard entries[i].time <= time else { continue }
            found.append(entries[i].account)
            if 2 * i + 1 < entries.count { stack.append(2 * i + 1) }
            if 2 * i + 2 < entries.count { stack.append(2 * i + 2) }
        }
        return found
    }

    /// Removes the earliest entry.
    mutating func removeFirst() {
        guard let last = entries.popLast(), !entries.isEmpty else { return }
        entries[0] = last
        var p = 0
        let n = entries.count
        while true {
            let l = 2 * p + 1, r = l + 1
            var m = p
            if l < n && entries[l].time < entries[m].time { m = l }
            if r < n && entries[r].time < entries[m].time { m = r }
            if m == p { break }
            entries.swapAt(p, m)
            p = m
        }
    }
}
