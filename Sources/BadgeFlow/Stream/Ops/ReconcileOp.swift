/// `reconcile`: re-send every device of the account its number, or (with `badge`) take a
/// device's report of what it shows (see <doc:EventLines>). Naming no account and no
/// device, it acts on every account of the state: ``BadgeStream/reconcileFleet(settings:)``,
/// or over a store ``BadgeStream/reconcileStoredFleet(seq:into:counting:)``, with a result
/// line of its own (``ResultLine/reconcile(_:seq:into:)``).
enum ReconcileOp: EventOpDefinition {
    static let namedWhenUnknown = false
    static let resultFragment: StaticString = #","op":"reconcile","device":"#
    static let addsDevice = true

    /// `badge`: what the device reports it shows (only with a device).
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        // Naming no account and no device: every account of the state.
        let fleetWide = root[HashedKey.account] == nil && root[HashedKey.device] == nil
        if fleetWide, root[HashedKey.badge] != nil {
            return .rejected(
                .error(.invalidValue, "badge is what a device reports it shows: this reconcile names no device", at: "/badge"))
        }
        event.isFleetWide = fleetWide
        if let b = root[HashedKey.badge] {
            guard b.kind == .int, let n = b.int, !b.intOverflowed else {
                return .rejected(
                    .error(.wrongType, "badge must be an integer, 0 or more, got \(PayloadChecker.describe(b))", at: "/badge"))
            }
            guard n >= 0, n <= Int64(Int32.max) else {
                return .rejected(.error(.invalidValue, "badge must be from 0 to 2147483647, got \(n)", at: "/badge"))
            }
            guard !event.isAccountLevel else {
                return .rejected(
                    .error(.invalidValue, "badge is what a device reports it shows: this reconcile names no device", at: "/badge"))
            }
            event.badge = Int(n)
        }
        return .event(consume event)
    }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .other }

    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout { OpReadout() }

    /// Every device is sent the total, whatever it was last given; with `badge`, the
    /// device's report is what it was delivered.
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] {
        if let index, let shown = event.badge {
            devices.values[index].delivered = shown
        } else {
            for i in devices.indices { devices.values[i].delivered = -1 }
        }
        return BadgeStream.badgeUpdates(&devices, total: total, except: nil)
    }

    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int { keepPayloadIcon(index: index, in: &devices) }
}

extension BadgeStream {
    /// A fleet-wide `reconcile`: every account with a device whose delivered number is not
    /// its total sends it the total (icon policy `tree`), listed with its badge updates in
    /// byte order of account id. Accounts in memory are looked at where they are; of those
    /// only in the store, the applying layer read those owed something (``StoreScan``),
    /// which stay (changed).
    mutating func reconcileFleet(settings: Settings) -> StreamResult.Applying {
        var entries: [ExpiredAccount] = []
        func none() -> StreamResult.Applying {
            .applied(
                StreamResult.Effects(
                    outcome: .unchanged, icon: 0, sync: nil, tree: nil, maxDisplay: settings.maxDisplay, badgeUpdates: [],
                    expiredPaths: nil, explain: nil, fleet: []))
        }
        // Under icon policy `payload` no number is delivered by the server's count.
        guard settings.icon == .tree else { return none() }
        func isStale(_ account: borrowing Account) -> Bool {
            let total = account.tree.total
            for device in account.devices.values where device.delivered != total { return true }
            return false
        }
        var owed: [String] = []
        for slot in table.resident where isStale(slot.account) { owed.append(slot.id) }
        for id in table.compacted.ids {
            guard let account = try? table.compacted.account(id, rules: rules) else { continue }
            if isStale(account) { owed.append(id) }
        }
        if isStoreBacked {
            // The stored accounts owed a number, read by the applying layer (``StoreScan``).
            let stored: [(String, Account)]
            switch storeScan.take() {
            case .owingAccounts(let list): stored = list
            case .failed(let error):
                sourceFailure = error
                return .rejected(.error(.invalidPath, "the state's accounts could not be read: \(error.description)", at: ""))
            case .due, .owed, nil:
                return .rejected(StoreScan.notRead(&sourceFailure))
            }
            for (id, account) in stored where table.slot(of: id, hash: IDIndex.hash(id)) == nil {
                table.keepForUndo(id, slot: nil, before: nil)
                _ = table.insert(account, as: id, hash: IDIndex.hash(id), loaded: true)
                owed.append(id)
            }
        }
        for id in owed {
            guard case .success(let (index, _)) = lookUp(id) else { continue }
            let total = table.slots[index].account.tree.total
            let updates = Self.badgeUpdates(&table.slots[index].account.devices, total: total, except: nil)
            guard !updates.isEmpty else { continue }
            entries.append(
                ExpiredAccount(account: id, expired: [], outcome: .unchanged, icon: total, badgeUpdates: updates))
            noteUse(index)
        }
        entries.sort { $0.account.utf8.lexicographicallyPrecedes($1.account.utf8) }
        return .applied(
            StreamResult.Effects(
                outcome: .unchanged, icon: 0, sync: nil, tree: nil, maxDisplay: settings.maxDisplay, badgeUpdates: [],
                expiredPaths: nil, explain: nil, fleet: entries))
    }

    /// A fleet-wide `reconcile` of a store-backed stream (icon policy `tree`), written into
    /// `out` without holding the fleet: neither its accounts nor the line as values.
    ///
    /// Accounts in memory (at most `--max-resident`) are checked where they are; the
    /// applying layer read each stored account once, in byte order of id (``StoreScan``),
    /// and one owed an update left only its id, devices and new numbers behind
    /// (``Deliveries``), which the next checkpoint writes into its row in the transaction
    /// that records this line's seq. The line is then
    /// written from both, merged in byte order of id, into a buffer grown once to its size:
    /// byte-identical to the one built in memory (``apply(_:seq:)``). When the store cannot
    /// be read, nothing changes and the line is an error.
    mutating func reconcileStoredFleet<Counter: ResultCounter>(
        seq: Int, into out: inout JSONWriter, counting counter: inout Counter
    ) {
        // The accounts in memory owed something, in byte order of id, with what they would
        // be sent: worked out on copies of their devices, and applied once the walk succeeded.
        var inMemory: [ExpiredAccount] = []
        func owing(_ id: String, _ account: borrowing Account) {
            let total = account.tree.total
            var devices = account.devices
            let updates = Self.badgeUpdates(&devices, total: total, except: nil)
            if !updates.isEmpty {
                inMemory.append(ExpiredAccount(account: id, expired: [], outcome: .unchanged, icon: total, badgeUpdates: updates))
            }
        }
        for slot in table.resident { owing(slot.id, slot.account) }
        for id in table.compacted.ids {
            guard let account = try? table.compacted.account(id, rules: rules) else { continue }
            owing(id, account)
        }
        inMemory.sort { $0.account.utf8.lexicographicallyPrecedes($1.account.utf8) }
        // The store first, in full: the numbers owed (a few bytes an account), read by the
        // applying layer (``StoreScan``), or an error line with nothing changed. The line is
        // then written from them and cannot fail.
        var owed = Deliveries()
        var failure: Diagnostic? = nil
        switch storeScan.take() {
        case .owed(let read): owed = read
        case .failed(let error):
            sourceFailure = error
            failure = .error(.invalidPath, "the state's accounts could not be read: \(error.description)", at: "")
        case .due, .owingAccounts, nil: failure = StoreScan.notRead(&sourceFailure)
        }
        if let failure {
            noteRejected(seq)
            counter.countRejected(failure)
            ResultLine.error(failure, seq: seq, into: &out)
            return
        }
        // Both lists merged in byte order of id; the buffer grown once to the line's size.
        var bytes: Int = owed.lineBytes + 64
        for e in inMemory {
            bytes += e.account.utf8.count + 64
            for update in e.badgeUpdates { bytes += update.device.utf8.count + 48 }
        }
        out.reserve(more: bytes)
        var entries = 0
        var updates = 0
        func write(_ id: String, icon: Int, _ badgeUpdates: [BadgeUpdate]) {
            ResultLine.reconcileEntry(id, icon: icon, badgeUpdates: badgeUpdates, first: entries == 0, into: &out)
            entries += 1
            updates += badgeUpdates.count
        }
        ResultLine.reconcileHead(seq: seq, into: &out)
        var next = 0
        for i in 0..<owed.count {
            let id = owed.ids[i]
            while next < inMemory.count, inMemory[next].account.utf8.lexicographicallyPrecedes(id.utf8) {
                write(inMemory[next].account, icon: inMemory[next].icon, inMemory[next].badgeUpdates)
                next += 1
            }
            // Every device owed is sent the total: the account's icon.
            let sent = owed.updates(i)
            write(id, icon: sent.first?.badge ?? 0, sent)
        }
        while next < inMemory.count {
            write(inMemory[next].account, icon: inMemory[next].icon, inMemory[next].badgeUpdates)
            next += 1
        }
        ResultLine.reconcileTail(into: &out)
        // The line is written: the accounts in memory take their numbers, the stored ones
        // wait for the next checkpoint.
        for e in inMemory {
            guard case .success(let (index, _)) = lookUp(e.account) else { continue }
            let total = table.slots[index].account.tree.total
            _ = Self.badgeUpdates(&table.slots[index].account.devices, total: total, except: nil)
            noteUse(index)
        }
        table.addDeliveries(owed)
        counter.countApplied(
            StreamResult.Effects(
                outcome: .unchanged, icon: 0, sync: nil, tree: nil, maxDisplay: rules.tree.maxDisplay, badgeUpdates: [],
                expiredPaths: nil, explain: nil, fleet: []))
        counter.countBadgeUpdates(updates)
    }

}

extension ResultLine {
    /// A fleet-wide `reconcile`: `{"seq":N,"op":"reconcile","accounts":[…]}`, one entry per
    /// account with a device whose delivered number was not its total.
    static func reconcile(_ fleet: [ExpiredAccount], seq: Int, into w: inout JSONWriter) {
        reconcileHead(seq: seq, into: &w)
        for (i, e) in fleet.enumerated() {
            reconcileEntry(e.account, icon: e.icon, badgeUpdates: e.badgeUpdates, first: i == 0, into: &w)
        }
        reconcileTail(into: &w)
    }

    /// What a fleet-wide `reconcile` line starts with, before its accounts.
    static func reconcileHead(seq: Int, into w: inout JSONWriter) {
        w.fragment(#"{"seq":"#); w.bareInt(seq)
        w.fragment(#","op":"reconcile","accounts":["#)
    }

    /// One account of a fleet-wide `reconcile` line (`first`: no comma before it).
    static func reconcileEntry(_ account: String, icon: Int, badgeUpdates: [BadgeUpdate], first: Bool, into w: inout JSONWriter) {
        w.fragment(first ? #"{"account":"# : #",{"account":"#)
        w.bareString(account)
        w.fragment(#","icon":"#); w.bareInt(icon)
        w.fragment(#","badgeUpdates":["#)
        for (j, u) in badgeUpdates.enumerated() {
            w.fragment(j == 0 ? #"{"device":"# : #",{"device":"#)
            w.bareString(u.device)
            w.fragment(#","badge":"#); w.bareInt(u.badge)
            w.fragment("}")
        }
        w.fragment("]}")
    }

    /// What ends a fleet-wide `reconcile` line, after its accounts.
    static func reconcileTail(into w: inout JSONWriter) { w.fragment("]}\n") }

}
