/// `expire`: time passed for the whole fleet: every account's marks due at `at` expire
/// (see <doc:EventLines>). It acts on no one account: ``BadgeStream/expireFleet(_:settings:)``
/// applies it, and its result line is its own (``ResultLine/expire(_:at:seq:into:)``).
enum ExpireOp: EventOpDefinition {
    static let namedWhenUnknown = false
    static let resultFragment: StaticString = #","op":"expire","device":"#
    static let addsDevice = true

    /// `at` (required; echoed as the line gives it); no `account` or `device`.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        // Fleet-wide: it names no account or device, and its time is required.
        for field in ["account", "device"] where root[field] != nil {
            return .rejected(
                .error(.invalidValue, "expire acts on every account: it must not name \"\(field)\"", at: "/" + field))
        }
        guard event.at != nil, let t = root[HashedKey.at] else {
            return .rejected(.error(.missingField, "expire needs \"at\", the time marks due by then expire", at: "/at"))
        }
        event.atText = t.serialized(pretty: false)
        return .event(consume event)
    }

    /// No device of its own: no sync policy is told.
    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { nil }

    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout { OpReadout() }

    /// Each account that had a due mark: every device not showing the new total is owed it
    /// (the event names no device).
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] { deliverReported(index: index, total: total, to: &devices) }

    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int { keepPayloadIcon(index: index, in: &devices) }
}

extension BadgeStream {
    /// A fleet-wide `expire`: every account with a mark due at or before the event's time
    /// expires it as if its next event came then (its clock moves up to that time), and
    /// is listed with its changes and the badge updates it owes, in byte order of account id.
    mutating func expireFleet(_ event: borrowing Event, settings: Settings) -> StreamResult.Applying {
        let time = event.at ?? 0
        var entries: [ExpiredAccount] = []
        var seen: Set<String> = []
        // Stored accounts that may be due join the resident ones (each is looked at once);
        // the applying layer read them, and loaded those not in memory (``StoreScan``).
        if isStoreBacked {
            switch storeScan.take() {
            case .due(let ids):
                for id in ids { due.insert(id, at: time) }
            case .failed(let error):
                sourceFailure = error
                return .rejected(.error(.invalidPath, "the state's due index could not be read: \(error.description)", at: ""))
            case .owed, .owingAccounts, nil:
                return .rejected(StoreScan.notRead(&sourceFailure))
            }
        }
        while let top = due.first, top.time <= time {
            due.removeFirst()
            guard seen.insert(top.account).inserted else { continue }
            guard case .success(let (index, created)) = lookUp(top.account) else { continue }
            if created {
                // Indexed, then gone (not in the state): nothing to expire.
                removeCreated(top.account, slot: index)
                continue
            }
            table.slots[index].indexedDue = nil
            let expiry = table.slots[index].account.tree.expire(through: time)
            if isStoreBacked && !table.slots[index].account.tree.hasPendingExpiries {
                // No mark left to expire: the stored due entry goes at the next commit.
                table.slots[index].dueStale = true
                if expiry.paths.isEmpty { noteUse(index) }
            }
            if !expiry.paths.isEmpty {
                table.slots[index].account.clock = max(table.slots[index].account.clock, time)
                let total = table.slots[index].account.tree.total
                if settings.icon == .payload, let d = expiry.outcome.decrement {
                    for i in table.slots[index].account.devices.indices {
                        table.slots[index].account.devices.values[i].payloadIcon = max(
                            0, table.slots[index].account.devices.values[i].payloadIcon - d.by)
                    }
                }
                let updates =
                    settings.icon == .tree
                    ? Self.deliver(event, index: nil, total: total, to: &table.slots[index].account.devices, own: false) : []
                entries.append(
                    ExpiredAccount(
                        account: top.account, expired: expiry.paths, outcome: expiry.outcome, icon: total, badgeUpdates: updates))
                noteUse(index)
            }
            if table.slots[index].account.tree.hasPendingExpiries { indexDue(index) }
        }
        entries.sort { $0.account.utf8.lexicographicallyPrecedes($1.account.utf8) }
        return .applied(
            StreamResult.Effects(
                outcome: .unchanged, icon: 0, sync: nil, tree: nil, maxDisplay: settings.maxDisplay, badgeUpdates: [],
                expiredPaths: nil, explain: nil, fleet: entries))
    }

}

extension ResultLine {
    /// A fleet-wide `expire`: `{"seq":N,"op":"expire","at":T,"accounts":[…]}`, one entry per
    /// account that had a due mark.
    static func expire(_ fleet: [ExpiredAccount], at: String, seq: Int, into w: inout JSONWriter) {
        w.fragment(#"{"seq":"#); w.bareInt(seq)
        w.fragment(#","op":"expire","at":"#)
        w.raw(Array(at.utf8))
        w.fragment(#","accounts":["#)
        for (i, e) in fleet.enumerated() {
            w.fragment(i == 0 ? #"{"account":"# : #",{"account":"#)
            w.bareString(e.account)
            w.fragment(#","expired":["#)
            for (j, p) in e.expired.enumerated() {
                if j > 0 { w.fragment(",") }
                w.bareString(p)
            }
            w.fragment(#"],"changes":["#)
            states(e.outcome.changes, into: &w)
            w.fragment("]")
            decrementIconAndUpdates(e.outcome.decrement, icon: e.icon, e.badgeUpdates, into: &w)
            w.fragment("}")
        }
        w.fragment("]}\n")
    }

}
