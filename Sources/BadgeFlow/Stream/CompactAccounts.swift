import BadgeTree

/// Accounts kept in a compact binary form while they are idle: about 100 bytes for an
/// account with one device and three marks, against ~1.5 KB expanded (its tree's nodes,
/// its devices' table, its entry in the stream's table).
///
/// A ``BadgeStream`` with compaction on (``BadgeStream/compact(keeping:)``) keeps its
/// most recently used accounts expanded and the rest here; an account is expanded again by
/// its next event. What is kept is what a state file holds (``StateFile/writeAccount``):
/// marks with their sources, expiries and once tokens, dismissed tokens, the clock and
/// each device's numbers and sync state, so an account that went through this form gives
/// the same results as one that stayed expanded, as a saved and reloaded one does.
///
/// The encodings live one after another in one byte buffer. Taking an account out leaves
/// a hole; when the holes reach a quarter of the live bytes the buffer is copied without
/// them, so memory stays within 1.25x of the encodings (2.25x during the copy).
struct CompactAccounts: Sendable {
    /// The encodings, one after another, with holes.
    private var arena: [UInt8] = []
    /// Each account's encoding: offset in `arena` << 20 | length; -1 for an account taken
    /// out (kept, so that taking it out and putting it back moves no other entry).
    private var slots: [String: Int] = [:]
    /// Accounts held (slots not -1).
    private(set) var count = 0
    /// Bytes of `arena` no account uses.
    private var holes = 0
    /// Reused for each encoding.
    private var scratch: [UInt8] = []

    /// The longest encoding kept; an account that needs more stays expanded.
    static let maxEncoded = (1 << 20) - 1

    /// Whether no account is held.
    var isEmpty: Bool { count == 0 }
    /// The ids of the accounts held.
    var ids: [String] { slots.compactMap { $0.value >= 0 ? $0.key : nil } }
    /// Bytes of the encodings (holes left out).
    var liveBytes: Int { arena.count - holes }

    /// Whether account `id` is held.
    func contains(_ id: String) -> Bool { (slots[id] ?? -1) >= 0 }

    /// Stores `account` as `id` (there must be none held); false, with nothing stored,
    /// when its encoding is longer than ``maxEncoded``.
    mutating func insert(_ account: Account, as id: String) -> Bool {
        scratch.removeAll(keepingCapacity: true)
        AccountCodec.encode(account, into: &scratch)
        guard scratch.count <= Self.maxEncoded else { return false }
        let offset = arena.count
        arena.append(contentsOf: scratch)
        if let old = slots.updateValue(offset << 20 | scratch.count, forKey: id), old >= 0 {
            holes += old & Self.maxEncoded
        } else {
            count += 1
        }
        return true
    }

    /// A copy of account `id` (it stays held); nil when none is.
    ///
    /// - Throws: `StateFile.Failure` when its bytes do not decode (an internal error).
    func account(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        guard let slot = slots[id], slot >= 0 else { return nil }
        return try decode(slot, id: id, rules: rules)
    }

    /// Takes account `id` out, expanded; nil when none is held.
    ///
    /// - Throws: `StateFile.Failure` when its bytes do not decode (an internal error);
    ///   the account then stays held.
    mutating func take(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        guard let i = slots.index(forKey: id), slots.values[i] >= 0 else { return nil }
        let slot = slots.values[i]
        let account = try decode(slot, id: id, rules: rules)
        slots.values[i] = -1
        count -= 1
        holes += slot & Self.maxEncoded
        if holes > 1 << 20 && holes > liveBytes / 4 { closeHoles() }
        return account
    }

    private func decode(_ slot: Int, id: String, rules: RuleSet) throws(StateFile.Failure) -> Account {
        let offset = slot >> 20, length = slot & Self.maxEncoded
        let decoded = arena.withUnsafeBytes { buffer in
            AccountCodec.decode(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), rules: rules)
        }
        guard let decoded else {
            throw StateFile.Failure(
                file: "(memory)", at: "/accounts/" + JSONPointer.escape(id),
                message: "the account's compact form does not decode (an internal error)")
        }
        return decoded
    }

    /// Copies the encodings into a buffer without holes.
    private mutating func closeHoles() {
        var packed: [UInt8] = []
        packed.reserveCapacity(liveBytes + liveBytes / 4)
        arena.withUnsafeBufferPointer { old in
            for i in slots.indices where slots.values[i] >= 0 {
                let slot = slots.values[i], offset = slot >> 20, length = slot & Self.maxEncoded
                slots.values[i] = packed.count << 20 | length
                packed.append(contentsOf: UnsafeBufferPointer(rebasing: old[offset..<offset + length]))
            }
        }
        arena = packed
        holes = 0
    }
}

/// The binary form of an ``Account`` that ``CompactAccounts`` keeps (in memory only; it is
/// never written to a file, so it has no version).
///
/// Integers are LEB128 varints (signed ones zigzagged); a string is its UTF-8 length and
/// bytes; a time is a varint of its value times two when it is a whole number of seconds
/// within ±2^52 (and not -0), else the varint 1 and its 8 bytes. In order: the clock; the
/// tree's number of nodes; the marks in the order of the tree's nodes, each path as the bytes it shares with the one before
/// and the rest, the mark (0 a dot, 1 + n a count n), a flag byte (source, expiry, held
/// token) and those present (a source's rule as an index into the rules named before in
/// this account, 0 for a new one followed by its name); the dismissed tokens by path; the
/// devices, each with its numbers, a flag byte for its sync state and the parts not new.
enum AccountCodec {
    // MARK: Encoding

    static func encode(_ a: Account, into out: inout [UInt8]) {
        time(a.clock, &out)
        varint(UInt64(a.tree.nodeCount), &out)
        varint(UInt64(a.tree.markCount), &out)
        var previous: [UInt8] = []
        var origins: [String] = []
        // In node order: restoring them in it makes the same nodes in the same order.
        a.tree.forEachRecord { r in
            var path = r.path
            path.withUTF8 { bytes in
                let limit = min(bytes.count, previous.count)
                var shared = 0
                while shared < limit && bytes[shared] == previous[shared] { shared += 1 }
                varint(UInt64(shared), &out)
                varint(UInt64(bytes.count - shared), &out)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[shared...]))
                previous.removeAll(keepingCapacity: true)
                previous.append(contentsOf: bytes)
            }
            switch r.mark {
            case .dot: varint(0, &out)
            case .count(let n): varint(1 &+ zigzag(n), &out)
            }
            out.append((r.source != nil ? 1 : 0) | (r.expires != nil ? 2 : 0) | (r.once != nil ? 4 : 0))
            if let s = r.source {
                varint(zigzag(s.seq), &out)
                if let k = origins.firstIndex(of: s.origin) {
                    varint(UInt64(k + 1), &out)
                } else {
                    varint(0, &out)
                    string(s.origin, &out)
                    origins.append(s.origin)
                }
                time(s.at, &out)
            }
            if let e = r.expires { time(e, &out) }
            if let o = r.once { string(o, &out) }
        }
        let dismissed = a.tree.hasDismissedTokens ? a.tree.dismissedTokens : []
        varint(UInt64(dismissed.count), &out)
        for (path, tokens) in dismissed {
            string(path, &out)
            varint(UInt64(tokens.count), &out)
            for t in tokens { string(t, &out) }
        }
        varint(UInt64(a.devices.count), &out)
        for (id, d) in a.devices {
            string(id, &out)
            varint(zigzag(d.payloadIcon), &out)
            varint(zigzag(d.delivered), &out)
            let p = d.sync
            let flags: UInt8 =
                (p.loggedIn ? 1 : 0) | (p.foreground ? 2 : 0) | (p.visible.isEmpty ? 0 : 4)
                | (p.appearedSinceLogin.isEmpty ? 0 : 8) | (p.disappearedAt.isEmpty ? 0 : 16)
                | (p.intervalStart == 0 ? 0 : 32)
            out.append(flags)
            if !p.visible.isEmpty { strings(p.visible, &out) }
            if !p.appearedSinceLogin.isEmpty { strings(p.appearedSinceLogin, &out) }
            if !p.disappearedAt.isEmpty {
                varint(UInt64(p.disappearedAt.count), &out)
                for (page, t) in p.disappearedAt {
                    string(page, &out)
                    time(t, &out)
                }
            }
            if p.intervalStart != 0 { time(p.intervalStart, &out) }
        }
    }

    static func varint(_ value: UInt64, _ out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func zigzag(_ n: Int) -> UInt64 { UInt64(bitPattern: Int64((n << 1) ^ (n >> 63))) }

    static func string(_ s: String, _ out: inout [UInt8]) {
        varint(UInt64(s.utf8.count), &out)
        out.append(contentsOf: s.utf8)
    }

    private static func strings(_ set: Set<String>, _ out: inout [UInt8]) {
        varint(UInt64(set.count), &out)
        for s in set { string(s, &out) }
    }

    static func time(_ t: Double, _ out: inout [UInt8]) {
        if abs(t) < 0x1p52, t == t.rounded(.towardZero), !(t == 0 && t.sign == .minus) {
            varint(zigzag(Int(t)) << 1, &out)
        } else {
            varint(1, &out)
            var bits = t.bitPattern
            for _ in 0..<8 {
                out.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        }
    }

    // MARK: Decoding

    /// Reads bytes front to back; past the end, every read gives 0 or "" and sets `failed`.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0
        var failed = false

        mutating func byte() -> UInt8 {
            guard at < bytes.count else {
                failed = true
                return 0
            }
            at += 1
            return bytes[at - 1]
        }

        mutating func varint() -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while shift < 64 {
                let b = byte()
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
            failed = true
            return 0
        }

        /// A count of things still to read, each at least one byte long.
        mutating func count() -> Int {
            let n = varint()
            guard n <= UInt64(bytes.count - at) else {
                failed = true
                return 0
            }
            return Int(n)
        }

        mutating func signed() -> Int {
            let v = varint()
            return Int(Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1))
        }

        mutating func raw(_ n: Int) -> UnsafeRawBufferPointer {
            guard n <= bytes.count - at else {
                failed = true
                return UnsafeRawBufferPointer(rebasing: bytes[0..<0])
            }
            at += n
            return UnsafeRawBufferPointer(rebasing: bytes[at - n..<at])
        }

        mutating func string() -> String { String(decoding: raw(count()), as: UTF8.self) }

        mutating func strings() -> Set<String> {
            var out: Set<String> = []
            for _ in 0..<count() { out.insert(string()) }
            return out
        }

        mutating func time() -> Double {
            let v = varint()
            if v & 1 == 0 {
                let n = v >> 1
                return Double(Int64(bitPattern: n >> 1) ^ -Int64(bitPattern: n & 1))
            }
            guard v == 1 else {
                failed = true
                return 0
            }
            var bits: UInt64 = 0
            let b = raw(8)
            for (i, x) in b.enumerated() { bits |= UInt64(x) << (8 * UInt64(i)) }
            return Double(bitPattern: bits)
        }
    }

    /// The account `bytes` encode; nil when they are not an encoding ``encode(_:into:)`` made.
    static func decode(_ bytes: UnsafeRawBufferPointer, rules: RuleSet) -> Account? {
        var r = Reader(bytes: bytes)
        let clock = r.time()
        // The tree is made with room for the nodes it had: restoring allocates them once.
        var account = Account(tree: BadgeTree(configuration: rules.tree, reservingNodes: Int(min(r.varint(), 1 << 16))))
        account.clock = clock
        let n = r.count()
        var records: [MarkRecord] = []
        records.reserveCapacity(n)
        var origins: [String] = []
        var previous: [UInt8] = []
        for _ in 0..<n {
            let shared = Int(r.varint())
            guard shared <= previous.count else { return nil }
            previous.removeSubrange(shared...)
            previous.append(contentsOf: r.raw(r.count()))
            let path = String(decoding: previous, as: UTF8.self)
            let m = r.varint()
            var record = MarkRecord(
                path: path, mark: m == 0 ? .dot : .count(Int(Int64(bitPattern: (m - 1) >> 1) ^ -Int64(bitPattern: (m - 1) & 1))))
            let flags = r.byte()
            if flags & 1 != 0 {
                let seq = r.signed()
                let k = Int(r.varint())
                let origin: String
                if k == 0 {
                    origin = r.string()
                    origins.append(origin)
                } else {
                    guard k <= origins.count else { return nil }
                    origin = origins[k - 1]
                }
                record.source = MarkSource(seq: seq, origin: origin, at: r.time())
            }
            if flags & 2 != 0 { record.expires = r.time() }
            if flags & 4 != 0 { record.once = r.string() }
            guard !r.failed else { return nil }
            records.append(record)
        }
        var dismissed: [(String, [String])] = []
        for _ in 0..<r.count() {
            let path = r.string()
            var tokens: [String] = []
            for _ in 0..<r.count() { tokens.append(r.string()) }
            dismissed.append((path, tokens))
        }
        guard !r.failed else { return nil }
        do {
            account.tree.restoreUnchecked(contentsOf: records)
            for (path, tokens) in dismissed { try account.tree.restoreDismissed(path, tokens: tokens) }
        } catch {
            return nil
        }
        let devices = r.count()
        account.devices.reserveCapacity(devices)
        for _ in 0..<devices {
            let id = r.string()
            var d = Device(rules: rules)
            d.payloadIcon = r.signed()
            d.delivered = r.signed()
            let flags = r.byte()
            if flags != 2 {
                let visible = flags & 4 != 0 ? r.strings() : []
                let appeared = flags & 8 != 0 ? r.strings() : []
                var disappeared: [String: Double] = [:]
                if flags & 16 != 0 {
                    for _ in 0..<r.count() {
                        let page = r.string()
                        disappeared[page] = r.time()
                    }
                }
                d.sync = SyncPolicy(
                    configuration: rules.sync, loggedIn: flags & 1 != 0, foreground: flags & 2 != 0,
                    visible: visible, appearedSinceLogin: appeared, disappearedAt: disappeared,
                    intervalStart: flags & 32 != 0 ? r.time() : 0)
            }
            guard !r.failed else { return nil }
            account.devices[id] = d
        }
        return r.failed || r.at != bytes.count ? nil : account
    }
}
