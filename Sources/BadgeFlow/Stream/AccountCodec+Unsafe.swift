// AccountCodec's work on raw memory: an account encoded from its address (read in place,
// not copied) and decoded from a borrowed buffer of its bytes. Relies on the account outliving
// the encode, and on CompactReader refusing every read past the end (a short or
// damaged encoding decodes to nil, never past the buffer).

import BadgeTree

extension AccountCodec {
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
