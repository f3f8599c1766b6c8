import BadgeTree

/// Accounts kept in a compact binary form while they are idle: about 100 bytes for an
/// account with one device and three marks, against ~1.5 KB expanded (its tree's nodes,
/// its devices' table, its entry in the stream's table).
///
/// A ``BadgeStream`` with compaction on (``BadgeStream/compact(keeping:)``) keeps its
/// most recently used accounts expanded and the rest here; an account is expanded again by
/// its next event. What is kept is the account as it is: the clock, the tree's nodes in
/// their order (each with its mark, contribution, display mode, source and expiry), the once
/// tokens, each device's numbers and sync state; the tree's sums are recomputed. An account
/// that went through this form gives the same results as one that stayed expanded.
///
/// The encodings live one after another in one byte buffer. Taking an account out leaves
/// a hole; when the holes reach a quarter of the live bytes the buffer is copied without
/// them, so memory stays within 1.25x of the encodings (2.25x during the copy).
struct CompactAccounts: Sendable {
    /// The encodings, one after another, with holes.
    var arena: [UInt8] = []
    /// Each account's encoding: offset in `arena` << 20 | length; -1 for an account taken
    /// out (kept, so that taking it out and putting it back moves no other entry).
    var slots: [String: Int] = [:]
    /// Accounts held (slots not -1).
    private(set) var count = 0
    /// Bytes of `arena` no account uses.
    var holes = 0
    /// Reused for each encoding.
    var scratch: [UInt8] = []

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

    /// Drops account `id`, if held.
    mutating func remove(_ id: String) {
        guard let i = slots.index(forKey: id), slots.values[i] >= 0 else { return }
        holes += slots.values[i] & Self.maxEncoded
        slots.values[i] = -1
        count -= 1
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
}

/// The binary form of an ``Account`` that ``CompactAccounts`` keeps in memory and an SQLite
/// row caches (``RowCache``, whose ``RowCache/tag`` must change with any change of this
/// encoding; `CompactAccountsTests` pins its bytes), in `CompactCoding`'s primitives: the
/// clock, the tree's own compact form (its nodes as they are, so that reading it makes the
/// same tree without hashing a path), then the devices, each with its numbers, a flag byte
/// for its sync state and the parts that are not those of a new device; then, when the
/// account keeps any, its recent event ids; then, when it has any, its own contribution
/// settings (their count, then each path and its mode as a byte: 0 count, 1 dot, 2 none),
/// after the ids' count even when that is 0.
enum AccountCodec {
    /// Appends the encoding of `a` to `out`.
    static func encode(_ a: Account, into out: inout [UInt8]) {
        var w = CompactWriter()
        encode(a, into: &w)
        w.withWritten { out.append(contentsOf: $0) }
    }

    /// A device's sync state: a flag byte, then the parts that are not those of a new device.
    @inline(__always)
    static func encode(_ p: SyncPolicy, into w: inout CompactWriter) {
        let flags: UInt8 =
            (p.loggedIn ? 1 : 0) | (p.foreground ? 2 : 0) | (p.visible.isEmpty ? 0 : 4)
            | (p.appearedSinceLogin.isEmpty ? 0 : 8) | (p.disappearedAt.isEmpty ? 0 : 16)
            | (p.intervalStart == 0 ? 0 : 32)
        w.byte(flags)
        if !p.visible.isEmpty { strings(p.visible, &w) }
        if !p.appearedSinceLogin.isEmpty { strings(p.appearedSinceLogin, &w) }
        if !p.disappearedAt.isEmpty {
            w.varint(UInt64(p.disappearedAt.count))
            for (page, t) in p.disappearedAt {
                w.string(page)
                w.time(t)
            }
        }
        if p.intervalStart != 0 { w.time(p.intervalStart) }
    }

    static func strings(_ set: Set<String>, _ w: inout CompactWriter) {
        w.varint(UInt64(set.count))
        for s in set { w.string(s) }
    }

    static func strings(_ r: inout CompactReader) -> Set<String> {
        var out: Set<String> = []
        for _ in 0..<r.count() { out.insert(r.string()) }
        return out
    }
}
