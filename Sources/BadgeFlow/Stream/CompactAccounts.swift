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
            // Walked by index, not through `slots.indices`: that would hold the table's
            // storage, and the first write below would copy the whole table.
            var i = slots.startIndex
            while i != slots.endIndex {
                let slot = slots.values[i]
                if slot >= 0 {
                    let offset = slot >> 20, length = slot & Self.maxEncoded
                    slots.values[i] = packed.count << 20 | length
                    packed.append(contentsOf: UnsafeBufferPointer(rebasing: old[offset..<offset + length]))
                }
                i = slots.index(after: i)
            }
        }
        arena = packed
        holes = 0
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

    /// Writes the encoding of `a` with `w`.
    ///
    /// - Returns: the account's devices and marks (what a store records of it), counted on
    ///   the way.
    @discardableResult
    static func encode(_ a: Account, into w: inout CompactWriter) -> (devices: Int, marks: Int) {
        withUnsafePointer(to: a) { encode(at: $0, into: &w) }
    }

    /// Writes the encoding of the account at `a` with `w`, reading its parts where
    /// they are (``BadgeTree/writeCompact(at:into:)``): a commit encodes the accounts in the
    /// stream's boxes this way, without copying each first.
    ///
    /// - Returns: the account's devices and marks, counted on the way.
    @discardableResult
    static func encode(at a: UnsafePointer<Account>, into w: inout CompactWriter) -> (devices: Int, marks: Int) {
        w.time(a.pointee.clock)
        let marks: Int
        // A stored property always has an address; the else branch only satisfies the
        // optional `pointer(to:)` returns.
        if let tree = a.pointer(to: \Account.tree) {
            marks = BadgeTree.writeCompact(at: tree, into: &w)
        } else {
            marks = a.pointee.tree.writeCompact(into: &w)
        }
        // The table itself taken (one retain): each access through the pointer to an element
        // copied the element (a retain of each of its parts).
        let devices = a.pointee.devices
        w.varint(UInt64(devices.count))
        // Each device taken once (the dictionary hands out copies: a retain of each of its sets).
        for (id, device) in devices {
            w.string(id)
            w.signed(device.payloadIcon)
            w.signed(device.delivered)
            encode(device.sync, into: &w)
        }
        // The recent event ids, oldest first, only when there are any (an account without
        // them encodes as before).
        let ids = a.pointee.ids.list
        let settings = a.pointee.contributions
        if !ids.isEmpty || !settings.isEmpty {
            w.varint(UInt64(ids.count))
            for id in ids { w.string(id) }
        }
        // The account's own settings, only when there are any, behind the ids (0 of them
        // when there are none): an account without settings encodes as before, and a build
        // that reads no settings refuses one with them instead of dropping them.
        if !settings.isEmpty {
            w.varint(UInt64(settings.count))
            for (path, mode) in settings {
                w.string(path)
                w.byte(mode == .count ? 0 : mode == .dot ? 1 : 2)
            }
        }
        return (devices.count, marks)
    }

    /// A device's sync state: a flag byte, then the parts that are not those of a new device.
    @inline(__always)
    private static func encode(_ p: SyncPolicy, into w: inout CompactWriter) {
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

    private static func strings(_ set: Set<String>, _ w: inout CompactWriter) {
        w.varint(UInt64(set.count))
        for s in set { w.string(s) }
    }

    private static func strings(_ r: inout CompactReader) -> Set<String> {
        var out: Set<String> = []
        for _ in 0..<r.count() { out.insert(r.string()) }
        return out
    }

    /// The account `bytes` encode; nil when they are not an encoding `encode(_:into:)` made.
    static func decode(_ bytes: UnsafeRawBufferPointer, rules: RuleSet) -> Account? {
        var r = CompactReader(bytes)
        let clock = r.time()
        guard let tree = try? BadgeTree.decodeCompact(configuration: rules.tree, from: &r) else { return nil }
        let count = r.count()
        var devices: [String: Device] = count > 0 ? Dictionary(minimumCapacity: count) : [:]
        for _ in 0..<count {
            let id = r.string()
            let icon = r.signed(), delivered = r.signed()
            // The ranges the JSON decoder checks: bytes that pass the row cache's check but
            // were made by hand must not give an account the JSON could not.
            guard icon >= 0, delivered >= 0 else { return nil }
            let flags = r.byte()
            let sync: SyncPolicy
            if flags == 2 {
                sync = SyncPolicy(configuration: rules.sync)
            } else {
                let visible = flags & 4 != 0 ? strings(&r) : []
                let appeared = flags & 8 != 0 ? strings(&r) : []
                var disappeared: [String: Double] = [:]
                if flags & 16 != 0 {
                    for _ in 0..<r.count() {
                        let page = r.string()
                        disappeared[page] = r.time()
                    }
                }
                sync = SyncPolicy(
                    configuration: rules.sync, loggedIn: flags & 1 != 0, foreground: flags & 2 != 0,
                    visible: visible, appearedSinceLogin: appeared, disappearedAt: disappeared,
                    intervalStart: flags & 32 != 0 ? r.time() : 0)
            }
            guard !r.failed else { return nil }
            devices[id] = Device(payloadIcon: icon, delivered: delivered, sync: consume sync)
        }
        var ids = RecentIDs()
        var settings: [(String, Contribution)] = []
        if !r.isDone && !r.failed {
            // Written only when there is at least one, or (0 of them) before settings.
            let n = r.count()
            guard n <= RecentIDs.limit else { return nil }
            var list: [String] = []
            list.reserveCapacity(n)
            for _ in 0..<n { list.append(r.string()) }
            guard !r.failed else { return nil }
            ids = RecentIDs(list)
            if !r.isDone {
                let count = r.count()
                guard count >= 1, !r.failed else { return nil }
                for _ in 0..<count {
                    let path = r.string()
                    let mode = r.byte()
                    guard mode <= 2, !r.failed else { return nil }
                    settings.append((path, mode == 0 ? .count : mode == 1 ? .dot : .none))
                }
            } else if n == 0 {
                return nil
            }
        }
        guard r.isDone else { return nil }
        var account = Account(tree: consume tree, clock: clock, devices: consume devices, ids: consume ids)
        if !settings.isEmpty {
            // The nodes hold the modes already; the tree's settings learn them for nodes made later.
            guard (try? account.restoreContributions(settings)) != nil else { return nil }
        }
        return account
    }
}
