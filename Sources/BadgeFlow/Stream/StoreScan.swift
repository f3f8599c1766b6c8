/// What the applying layer read from a store for a fleet-wide line of a store-backed
/// ``BadgeStream`` (``BadgeStream/isStoreBacked``), handed to the stream just before the
/// line (``BadgeStream/storeScan``) and taken by it.
///
/// The stream reads no store: a fleet-wide `expire` needs the stored accounts that may be
/// due (loaded too, when not in memory), and a fleet-wide `reconcile` the stored accounts
/// owed a number. The reads are the applying layer's (``AccountLoader``); what decides
/// which accounts count stays here, in the stream (``BadgeStream/accountsToLoad(expiringThrough:stored:)``,
/// ``BadgeStream/owed(_:_:into:)``, ``BadgeStream/owing(_:_:)``), so that the two give the
/// same results as a stream that held every account.
package enum StoreScan: Sendable {
    /// `expire`: the stored accounts with a mark that may be due by its time.
    case due([String])
    /// `reconcile`, applied as a value (``BadgeStream/apply(_:seq:)``): the stored accounts,
    /// not in memory, owed a number, in byte order of id.
    case owingAccounts([(String, Account)])
    /// `reconcile`, written as it is applied: the numbers owed to stored accounts not in
    /// memory (``Deliveries``).
    case owed(Deliveries)
    /// The store could not be read: the line is rejected and nothing changes.
    case failed(StateFile.Failure)

    /// The error of a fleet-wide line of a store-backed stream applied without its scan (an
    /// internal error), recorded in `failure` so that the run stops.
    static func notRead(_ failure: inout StateFile.Failure?) -> Diagnostic {
        let message = "the state was not read for this fleet-wide line before it was applied (an internal error)"
        failure = StateFile.Failure(file: "state", at: "", message: message)
        return .error(.invalidPath, message, at: "")
    }
}

extension BadgeStream {
    /// Whether account `id` (whose hash is `hash`) must be loaded before a line that uses it:
    /// it is neither in memory nor read for the line.
    package func needsLoad(_ id: String, hash: Int) -> Bool { table.needsLoad(id, hash: hash) }

    /// Hands the stream account `id` (whose hash is `hash`), just read from the store (nil:
    /// the store has none), for the line or batch about to be applied.
    package mutating func provide(_ id: String, hash: Int, _ account: consuming Account?) {
        table.provide(id, hash: hash, account)
    }

    /// Records that account `id` could not be read: the line that needs it is rejected with
    /// `failure`.
    package mutating func provideFailure(_ id: String, _ failure: StateFile.Failure) { table.provideFailure(id, failure) }

    /// Forgets what was provided or read ahead for the lines applied so far (a loader without
    /// a read-ahead, before the next line or batch).
    package mutating func clearProvided() { table.clearAhead() }

    /// The accounts a fleet-wide `expire` at `time` looks at that must be loaded first: those
    /// the stream indexed as due by then and the `stored` ones that may be, when neither in
    /// memory nor read; each once.
    package func accountsToLoad(expiringThrough time: Double, stored: [String]) -> [String] {
        var ids: [String] = []
        var seen: Set<String> = []
        for list in [due.accounts(dueThrough: time), stored] {
            for id in list where seen.insert(id).inserted && table.needsLoad(id, hash: IDIndex.hash(id)) { ids.append(id) }
        }
        return ids
    }

    /// For a fleet-wide `reconcile` written as applied: adds to `owed` what stored account `id`
    /// (read as `account`) is owed, unless memory holds a newer copy of it.
    package mutating func owed(_ id: String, _ account: consuming Account, into owed: inout Deliveries) {
        // What memory holds is newer than the store's copy.
        guard table.slot(of: id, hash: IDIndex.hash(id)) == nil, !table.compacted.contains(id) else { return }
        var account = account
        // Numbers an earlier reconcile sent that its row does not hold yet.
        if table.holdsDeliveries { _ = table.applyDeliveries(id, to: &account, coming: false) }
        let total = account.tree.total
        let sent = Self.badgeUpdates(&account.devices, total: total, except: nil)
        if !sent.isEmpty { owed.append(id, sent) }
    }

    /// For a fleet-wide `reconcile` applied as a value: stored account `id` (read as
    /// `account`) with the numbers an earlier reconcile sent it, when it is owed a number and
    /// memory holds no newer copy of it; else nil.
    package mutating func owing(_ id: String, _ account: consuming Account) -> Account? {
        guard table.slot(of: id, hash: IDIndex.hash(id)) == nil, !table.compacted.contains(id) else { return nil }
        var account = account
        if table.holdsDeliveries { _ = table.applyDeliveries(id, to: &account, coming: false) }
        let total = account.tree.total
        for device in account.devices.values where device.delivered != total { return account }
        return nil
    }
}
