/// Reads stored accounts ahead, on its own thread, while the filter applies the batch of
/// lines before the one that needs them (``ParallelFilter/prefetcher``).
///
/// Only accounts that are not in memory are requested. A stored account changes only
/// through a checkpoint of the in-memory copy, so what was read stays current unless the
/// account came into memory (and was evicted again) in between: ``BadgeStream`` keeps the
/// ids it evicted since the request and drops those copies.
public protocol AccountPrefetcher: AnyObject {
    /// Starts reading the accounts `ids`; returns at once.
    func request(_ ids: [String])
    /// Waits for the accounts last requested and returns them: each id read with its
    /// account, or with nil when the store has none. An id that could not be read is left
    /// out; the applying layer then loads it before the batch (``AccountLoader``), and the
    /// line that needs it reports the error.
    func collect() -> [String: Account?]
}

/// The accounts one reader read ahead, in the order asked: each id with its hash
/// (``IDIndex/hash(_:)``, computed on the reader's thread) and its account (nil when the
/// store has none). An id that could not be read is left out.
///
/// Arrays, not a dictionary: the reader inserts nothing into a hash table and the applying
/// thread, which installs them, hashes no id again.
package struct ReadAccounts: Sendable {
    package var ids: [String] = []
    package var hashes: [Int] = []
    package var accounts: [Account?] = []

    /// None, with room for `capacity`.
    package init(capacity: Int = 0) {
        ids.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
        accounts.reserveCapacity(capacity)
    }

    /// The entries of `found`, in its order.
    package init(_ found: consuming [String: Account?]) {
        self.init(capacity: found.count)
        for (id, account) in found { append(id, account) }
    }

    /// Adds `id` and what the store has for it.
    package mutating func append(_ id: String, _ account: consuming Account?) {
        ids.append(id)
        hashes.append(IDIndex.hash(id))
        accounts.append(account)
    }

    /// The number of ids.
    package var count: Int { ids.count }

    /// As a dictionary (an id in two entries keeps the first).
    package func dictionary() -> [String: Account?] {
        var out: [String: Account?] = [:]
        out.reserveCapacity(ids.count)
        add(to: &out)
        return out
    }

    /// Adds the entries to `dictionary`, leaving an id it holds already as it is.
    package func add(to dictionary: inout [String: Account?]) {
        for (i, id) in ids.enumerated() where dictionary.index(forKey: id) == nil { dictionary[id] = .some(accounts[i]) }
    }
}

/// An ``AccountPrefetcher`` that hands over what each of its readers read as it is
/// (``collectParts()``), so that the stream takes the accounts without merging the parts.
package protocol PartedAccountPrefetcher: AccountPrefetcher {
    /// ``AccountPrefetcher/collect()`` as one part per reader (their ids do not overlap).
    func collectParts() -> [ReadAccounts]
    /// How many requests may be outstanding at once (``AccountPrefetcher`` allows one):
    /// each collect takes the oldest.
    var requestsAhead: Int { get }
    /// ``AccountPrefetcher/request(_:)`` that also frees `released` (accounts that left
    /// memory) on the readers' threads, off the applying thread.
    func request(_ ids: [String], releasing released: consuming [AccountBox])
}

/// The stateful half of the filter: applies events to accounts and their devices in input
/// order and writes one result line per event.
///
/// ```swift
/// let analyzer = LineAnalyzer(rules: .builtIn)
/// var stream = BadgeStream(rules: .builtIn)
/// var out = JSONWriter()
/// stream.apply(analyzer.analyze(#"{"aps":{"alert":"hi","thread-id":"alice"}}"#), seq: 1, into: &out)
/// // {"seq":1,"op":"push","device":"","kind":"alert","rule":"chat","path":"root.chat.alice",…}
/// ```
///
/// Output depends only on the input (event times come from `at`), so a replay is
/// byte-identical.
public struct BadgeStream: Sendable {
    /// The compiled rules.
    public let rules: RuleSet
    /// The accounts in memory and their residency (use, changes, commits, eviction,
    /// compaction, read-ahead).
    package internal(set) var table = AccountTable()
    /// Idle accounts in compact form (``compact(keeping:)``).
    var compacted: CompactAccounts { table.compacted }
    /// The accounts with expiring marks, by when the first may be due (for `expire`).
    var due = DueIndex()
    /// Lines rejected so far.
    public private(set) var rejected = 0
    /// The `seq` of the first line rejected, if any.
    public private(set) var firstRejectedSeq: Int?

    /// Accounts by id, created on first use. An event without `account` uses the account
    /// whose id is its device id.
    ///
    /// A copy of the accounts in memory in expanded form (made on each call): with
    /// compaction on (``compact(keeping:)``) idle accounts are held compactly instead, and
    /// a store-backed stream (``isStoreBacked``) holds only some. ``account(_:)``, ``accountCount``
    /// and ``accountIDs`` see the compact ones too, without the copy.
    public var accounts: [String: Account] {
        Dictionary(table.resident.map { ($0.id, $0.account) }, uniquingKeysWith: { _, last in last })
    }

    /// The number of accounts in memory in expanded form.
    public var residentCount: Int { table.count }

    /// Whether accounts not in memory may be in a store (a database state). The stream
    /// reads no store itself: the layer that applies its lines (``AccountLoader``, or
    /// ``ParallelFilter/source``) loads each account a line needs before the line, and reads
    /// the store for a fleet-wide `expire` or `reconcile` just before it. An account a line
    /// needs that was not loaded is an error, never an empty account. Turning it on turns
    /// change tracking on.
    public var isStoreBacked = false {
        didSet { if isStoreBacked { tracksChanges = true } }
    }
    /// What the applying layer read from the store for the fleet-wide line about to be
    /// applied; taken by that line.
    package var storeScan: StoreScan?
    /// Whether the stream records which accounts changed (``changedCount``) and when each
    /// was last used (``evict(keeping:)``).
    public var tracksChanges: Bool {
        get { table.tracksChanges }
        set { table.tracksChanges = newValue }
    }
    /// Whether the stream records when each account was last used, for
    /// ``compact(keeping:)`` (on with ``tracksChanges``).
    public var tracksUse: Bool {
        get { table.tracksUse }
        set { table.tracksUse = newValue }
    }
    /// Whether ``beginBatch()`` and ``undoBatch()`` work (a JSON state: what is saved after a
    /// failed write must not hold the batch whose results were not written).
    package var keepsUndo: Bool {
        get { table.keepsUndo }
        set { table.keepsUndo = newValue }
    }

    /// Starts a batch: ``undoBatch()`` takes back what is applied from now on.
    package mutating func beginBatch() { table.beginBatch() }

    /// Puts back every account the batch since ``beginBatch()`` touched, as it was before.
    package mutating func undoBatch() { table.undoBatch() }

    /// Accounts taken from the store so far: read ahead by a prefetcher, or loaded on the
    /// applying thread before the line that needed them (`--checkpoint-stats`).
    public private(set) var loads: (ahead: Int, inline: Int) = (0, 0)
    /// Set when the store could not be read for a line; the event that needed it was rejected.
    public internal(set) var sourceFailure: StateFile.Failure?

    /// The part of a split state these accounts were loaded from (nil: a whole state);
    /// saved with them (``StatePartition``).
    public var partition: StatePartition?
    /// The inputs the state applied and whether its seq is a queue offset, saved with the
    /// accounts (``StateRecords``).
    package var records = StateRecords()

    /// Creates a stream with no accounts.
    public init(rules: RuleSet) { self.rules = rules }

    /// The accounts changed since the last call, which then count as unchanged (e.g.
    /// committed by a checkpoint).
    package mutating func takeChanged() -> [ChangedAccount] { table.takeChanged() }

    /// ``takeChanged()`` for a commit that runs while the stream goes on: the accounts taken
    /// stay in memory (``evict(keeping:)`` passes them over) until ``endCommit(_:)``.
    package mutating func beginCommit() -> [ChangedAccount] { table.beginCommit() }

    /// Records what a commit stored (each account's devices and marks, in the order it was
    /// handed them); the accounts of the commit begun by ``beginCommit()`` may leave memory
    /// again.
    package mutating func endCommit(_ stored: [(String, (Int, Int))]) { table.endCommit(stored) }

    /// Takes back a commit that failed: its accounts (`ids`) count as changed again, so the
    /// next commit writes them, and may leave memory once that one ends.
    package mutating func abortCommit(_ ids: some Sequence<String>) { table.abortCommit(ids) }

    /// The number of accounts of a commit under way (``beginCommit()``).
    package var inFlightCount: Int { table.inFlightCount }

    /// The number of accounts changed since the last checkpoint took them.
    public var changedCount: Int { table.changedCount }

    /// Drops the least recently used unchanged accounts until at most `n` are in memory
    /// (changed ones stay until a checkpoint takes them, and those of a commit under way
    /// until it ends); they are loaded again before a line needs them (``isStoreBacked``).
    public mutating func evict(keeping n: Int) { table.evict(keeping: n) }

    /// Holds all but the `n` most recently used expanded accounts in compact form (about
    /// 100 bytes for an account with one device and three marks instead of ~1.5 KB); each
    /// is expanded again by its next event, with the same results as if it had stayed.
    ///
    /// For a stream not ``isStoreBacked`` and without ``tracksChanges`` (a store's accounts
    /// leave memory through ``evict(keeping:)``, and a compact account would leave its change
    /// behind); otherwise it only turns ``tracksUse`` on. An account too large for the
    /// compact form (over 1 MiB of it) stays expanded.
    public mutating func compact(keeping n: Int) {
        guard !isStoreBacked, !tracksChanges else {
            tracksUse = true
            return
        }
        table.compact(keeping: max(n, 0))
    }

    /// Adds a loaded account: compact when `compact`, else expanded; `stored`: read from the
    /// store the stream commits to (its stored counts are its own).
    mutating func addLoaded(_ account: Account, as id: String, compact: Bool, stored: Bool = false) {
        // Indexed for `expire` when it holds expiring marks.
        if let time = account.tree.earliestPendingExpiry { due.insert(id, at: time) }
        table.addLoaded(account, as: id, compact: compact, stored: stored)
    }

    /// The number of accounts, expanded and compact (not those only in a store).
    public var accountCount: Int { table.count + table.compacted.count }

    /// The ids of the accounts, expanded and compact, in no particular order.
    public var accountIDs: [String] { table.resident.map(\.id) + Array(table.compacted.ids) }

    /// Account `id`, expanded or a copy of its compact form; nil when the stream holds none
    /// (no store is read).
    ///
    /// - Throws: `StateFile.Failure` when a compact account does not decode (an internal error).
    public func account(_ id: String) throws(StateFile.Failure) -> Account? {
        if let a = table[id] { return a }
        return try table.compacted.account(id, rules: rules)
    }

    /// Takes accounts read ahead for the next batch (``AccountPrefetcher/collect()``),
    /// without those that came into memory or were evicted since they were requested.
    mutating func installPrefetched(_ ahead: [String: Account?]) { table.installPrefetched(parts: [ReadAccounts(ahead)]) }

    /// ``installPrefetched(_:)`` from the parts each reader read, not merged first.
    /// `mark`: the eviction mark when they were requested (``AccountTable/evictionMark``).
    mutating func installPrefetched(parts: consuming [ReadAccounts], evictedSince mark: Int? = nil) {
        table.installPrefetched(parts: parts, evictedSince: mark)
    }

    /// The state of `device` in `account` (by default the device's own account), if it has
    /// joined it.
    public func device(_ device: String, account: String? = nil) -> Device? {
        (try? self.account(account ?? device))??.devices[device]
    }

    /// Applies one analysed line and appends its result line to `out` (nothing for a blank line).
    public mutating func apply(_ line: consuming LineResult, seq: Int, into out: inout JSONWriter) {
        var none = NotCounted()
        apply(line, seq: seq, into: &out, counting: &none)
    }

    /// ``apply(_:seq:into:)`` with the hash of the event's account id (``IDIndex/hash(_:)``)
    /// when the analysing thread computed it.
    mutating func apply(_ line: consuming LineResult, seq: Int, accountHash: Int?, into out: inout JSONWriter) {
        var none = NotCounted()
        apply(line, seq: seq, accountHash: accountHash, into: &out, counting: &none)
    }

    /// ``apply(_:seq:into:)`` that also counts the result in `counter` (`--metrics`): the
    /// result line is still written from the account's tree, never built as a value.
    /// `accountHash`: the hash of the event's account id (``IDIndex/hash(_:)``) when the
    /// analysing thread computed it (nil: it is computed here).
    mutating func apply<Counter: ResultCounter>(
        _ line: consuming LineResult, seq: Int, accountHash: Int? = nil, into out: inout JSONWriter,
        counting counter: inout Counter
    ) {
        // The result line is written from the event and what applying it did
        // (`StreamResult.Effects`): the event, a few hundred bytes, is never moved into a
        // result nor copied.
        switch consume line {
        case .blank:
            return
        case .rejected(let diagnostic):
            noteRejected(seq)
            counter.countRejected(diagnostic)
            ResultLine.error(diagnostic, seq: seq, into: &out)
        case .event(let event):
            // A fleet-wide reconcile over a store is written as the store is walked.
            if event.op == .reconcile, isStoreBacked, event.isFleetWide, rules.icon == .tree {
                reconcileStoredFleet(seq: seq, into: &out, counting: &counter)
                return
            }
            var index: Int? = nil
            switch apply(event, seq: seq, accountHash: accountHash, at: &index) {
            case .rejected(let d):
                noteRejected(seq)
                counter.countRejected(d)
                ResultLine.error(d, seq: seq, into: &out)
            case .applied(let effects):
                counter.countApplied(effects)
                if !effects.change.isEmpty, let index {
                    ResultLine.event(event, effects, tree: &table.slots[index].account.tree, seq: seq, into: &out)
                } else {
                    ResultLine.event(event, effects, seq: seq, into: &out)
                }
            }
        }
    }

    mutating func noteRejected(_ seq: Int) {
        rejected += 1
        if firstRejectedSeq == nil { firstRejectedSeq = seq }
    }

    /// Applies one analysed line and returns its result as a value (nil for a blank line).
    ///
    /// The line's ``Event`` is moved into the result, not copied.
    public mutating func apply(_ line: consuming LineResult, seq: Int) -> StreamResult? {
        switch consume line {
        case .blank:
            return nil
        case .rejected(let diagnostic):
            noteRejected(seq)
            return StreamResult(seq: seq, body: .rejected(diagnostic))
        case .event(let event):
            var index: Int? = nil
            switch apply(event, seq: seq, at: &index) {
            case .rejected(let d):
                noteRejected(seq)
                return StreamResult(seq: seq, body: .rejected(d))
            case .applied(var effects):
                if !effects.change.isEmpty, let index {
                    // A result leaving the stream holds its states.
                    let decrement = effects.outcome.decrement
                    effects.outcome = table.slots[index].account.tree.outcome(of: effects.change)
                    effects.outcome.decrement = decrement
                    effects.change = BadgeTree.Change()
                }
                return StreamResult(seq: seq, body: .applied(StreamResult.Applied(event: event, effects: effects)))
            }
        }
    }

    /// Applies `event`; `at`: the slot of its account when it was applied (for its
    /// ``StreamResult/Effects/change``, read from the account's tree); `accountHash`: the
    /// hash of its account id, if known.
    private mutating func apply(
        _ event: borrowing Event, seq: Int, accountHash: Int? = nil, at applied: inout Int?
    ) -> StreamResult.Applying {
        if let refused = Self.refusedForNUL(event) { return .rejected(refused) }
        // Only scalars are taken from the rules here: copying the RuleSet would retain its
        // arrays once per event, on the same reference counts the workers touch.
        let settings = Settings(icon: rules.icon, maxDisplay: rules.tree.maxDisplay)
        // `expire`, a `reconcile` naming no one: applied by their op (`Ops/`).
        if let fleet = applyToFleet(event, settings: settings) { return fleet }
        // Mutate the account in place in its slot: one hash, no copy of its tree.
        let id = event.accountID
        let index: Int
        let created: Bool
        switch lookUp(id, hash: accountHash) {
        case .success(let found): (index, created) = found
        case .failure(let d): return .rejected(d)
        }
        let eventID = event.id
        if let eventID, table.slots[index].account.ids.contains(eventID) {
            return Self.duplicate(event, account: table.slots[index].account, settings: settings)
        }
        let own = event.account.map { $0 == event.device } ?? true
        // Read in the static apply, which holds the account in place: reading it here through
        // `table.slots[index].account` copies the account (a retain and release of each part).
        var expiring = false
        let body = Self.apply(
            event, seq: seq, settings: settings, rules: rules, own: own, to: &table.slots[index].account, expiring: &expiring)
        if case .rejected = body {
            // A rejected line creates no account (one found in the state stays as it was).
            if created { removeCreated(id, slot: index) }
            return body
        }
        if let eventID { table.slots[index].account.ids.insert(eventID) }
        // One branch for an account without expiring marks.
        if expiring { indexDue(index) }
        noteUse(index)
        applied = index
        return body
    }

    /// Puts the account in slot `index` in ``due`` when its first mark may be due earlier than
    /// the entry it knows of.
    mutating func indexDue(_ index: Int) {
        guard let time = table.slots[index].account.tree.earliestPendingExpiry else { return }
        if let known = table.slots[index].indexedDue, known <= time { return }
        table.slots[index].indexedDue = time
        due.insert(table.slots[index].id, at: time)
    }

    /// Records that the account in slot `index` was used and changed (for eviction, compaction
    /// and checkpoints).
    mutating func noteUse(_ index: Int) { table.noteUse(index) }

    /// Drops account `id`, made empty in slot `index` by a line that then created nothing;
    /// a store-backed stream remembers that the store has none, for a later line.
    mutating func removeCreated(_ id: String, slot index: Int) {
        let hash = table.slots[index].hash
        table.remove(index)
        if isStoreBacked { table.provide(id, hash: hash, nil) }
    }

    /// The slot of account `id` in memory: expanded from its compact form, read ahead or
    /// loaded by the applying layer, or made empty (`created`). The id is hashed once (or its
    /// `hash` given), for all the tables it is looked up in (``IDIndex``).
    mutating func lookUp(
        _ id: String, hash given: Int? = nil
    ) -> Result<(Int, created: Bool), Diagnostic> {
        let hash = given ?? IDIndex.hash(id)
        if let found = table.slot(of: id, hash: hash) {
            table.keepForUndo(id, slot: found)
            return .success((found, false))
        }
        var thawed: Account? = nil
        if !table.compacted.isEmpty {
            do { thawed = try table.compacted.take(id, rules: rules) } catch {
                sourceFailure = error
                return .failure(.error(.invalidPath, "account \"\(id)\" could not be expanded: \(error.description)", at: ""))
            }
        }
        // Undoing the batch puts an expanded account back as it was (nil: it is dropped).
        table.keepForUndo(id, slot: nil, before: thawed)
        // An empty account is made only when none is found (making one builds a tree).
        var found = thawed
        // Read from the store: its stored counts are its own.
        var loaded = false
        if found == nil, let read = table.takePrefetched(id, hash: hash) {
            if read.inline { loads.inline += 1 } else { loads.ahead += 1 }
            found = read.account
            loaded = found != nil
        } else if found == nil, isStoreBacked {
            guard let error = table.loadFailure(id) else {
                // Not read before its line: an empty account would overwrite the stored one.
                let message = "account \"\(id)\" was not read from the state before the line that needs it (an internal error)"
                sourceFailure = StateFile.Failure(file: "state", at: "", message: message)
                return .failure(.error(.invalidPath, message, at: ""))
            }
            sourceFailure = error
            return .failure(
                .error(.invalidPath, "account \"\(id)\" could not be loaded from the state: \(error.description)", at: ""))
        }
        let created = found == nil
        // A stored account a fleet-wide reconcile sent numbers to before its row has them:
        // they are applied now, and the account is committed whole.
        var owed = false
        if loaded, table.holdsDeliveries, var account = found.take() {
            owed = table.applyDeliveries(id, to: &account, coming: true)
            found = account
        }
        // Moved into its slot (`take()`), not copied.
        let index = table.insert(found.take() ?? Account(rules: rules), as: id, hash: hash, loaded: loaded)
        if owed { noteUse(index) }
        return .success((index, created))
    }

    /// The result of an event whose id its account already applied: the usual one with
    /// `"duplicate":true`, no changes and nothing to send (no payload, badge updates or sync).
    private static func duplicate(
        _ event: borrowing Event, account: borrowing Account, settings: Settings
    ) -> StreamResult.Applying {
        let icon =
            settings.icon == .payload ? (account.devices[event.device]?.payloadIcon ?? account.tree.total) : account.tree.total
        let readout = event.readout(of: account.tree)
        return .applied(
            StreamResult.Effects(
                outcome: .unchanged, icon: icon, sync: nil, tree: readout.tree, maxDisplay: settings.maxDisplay, badgeUpdates: [],
                expiredPaths: nil, explain: readout.explain, duplicate: true))
    }

    /// A rejection when the event's account, device or page holds U+0000: a state keeps them
    /// as object keys, and a key with U+0000 is refused when JSON is read (``JSONParser``),
    /// so the state would be saved and never load again. Checked here, not in the analyzer,
    /// so that events made in code are held to it too.
    private static func refusedForNUL(_ event: borrowing Event) -> Diagnostic? {
        // memchr over the bytes in place (an empty or absent id costs one branch).
        func holdsNUL(_ s: String?) -> Bool {
            guard let s, !s.isEmpty else { return false }
            return s.utf8.withContiguousStorageIfAvailable { b in b.baseAddress.map { System.memchr($0, 0, b.count) != nil } ?? false }
                ?? s.utf8.contains(0)
        }
        let field =
            holdsNUL(event.account) ? "account" : holdsNUL(event.device) ? "device" : holdsNUL(event.page) ? "page" : nil
        guard let field else { return nil }
        return .error(.invalidValue, "\(field) must not hold U+0000 (\\u0000)", at: "/" + field)
    }

    /// What applying an event needs from the stream besides the account.
    struct Settings {
        let icon: RuleSet.IconPolicy
        let maxDisplay: Int
    }

    /// Applies `event` to `account`; `own`: the account is the device's own (its id is the
    /// device id), which the device never leaves.
    ///
    /// A rejected event leaves the account as it was: no clock, device, expiry or mark.
    private static func apply(
        _ event: borrowing Event, seq: Int, settings: Settings, rules: RuleSet, own: Bool,
        to account: inout Account, expiring: inout Bool
    ) -> StreamResult.Applying {
        // The tree rejects a bad path before it changes anything; only the expiry that comes
        // first would have to be taken back, so with marks pending the path is checked first.
        if account.tree.hasPendingExpiries, let path = event.path, let refused = Self.refusedPath(path, event: event, rules: rules) {
            return .rejected(refused)
        }
        // Events without `at` take the previous time of the same account.
        let clockBefore = account.clock
        if let at = event.at { account.clock = at }
        let clock = account.clock
        // An account-level event adds no device, nor does an unregister of a device not there.
        var index: Dictionary<String, Device>.Index? = account.devices.index(forKey: event.device)
        var joined = false
        if index == nil && !event.isAccountLevel && event.op.addsDevice {
            account.devices[event.device] = Device(rules: rules)
            index = account.devices.index(forKey: event.device)
            joined = true
        }
        // Marks due at or before the event's time expire first (one branch when none can).
        let expiry: Expiry? = account.tree.hasPendingExpiries ? account.tree.expire(through: clock) : nil
        var outcome = Outcome.unchanged
        // The event's changes as the tree's nodes, not states: the result line reads them from
        // the tree (no array of states made and destroyed); a forced clear gives states.
        var change = BadgeTree.Change()
        if let path = event.path {
            do {
                let source = MarkSource(seq: seq, origin: event.rule ?? event.op.rawValue, at: clock)
                if case .clear(true) = event.action {
                    outcome = try account.tree.clear(path, force: true)
                } else if let setting = event.setting {
                    // A setting is not a read: its outcome never carries a decrement.
                    switch setting {
                    case .mode(let mode): outcome = try account.setContribution(mode, of: path, rules: rules)
                    case .rules: outcome = try account.removeContribution(of: path, rules: rules)
                    }
                } else {
                    change = try Self.performChange(
                        event.action, on: path, in: &account.tree, source: source,
                        expires: event.ttl.map { clock + $0 }, once: event.once)
                    outcome.decrement = change.decrement
                    change.decrement = nil
                }
            } catch {
                // Nothing changed yet (see above): the clock and a device that just joined go back.
                account.clock = clockBefore
                if joined { account.devices.removeValue(forKey: event.device) }
                return .rejected(Self.pathDiagnostic(error.description, event: event))
            }
        }
        if let expiry, !expiry.paths.isEmpty {
            // The expiry's states come first: the event's are made into states after them.
            if !change.isEmpty {
                let decrement = outcome.decrement
                outcome = account.tree.outcome(of: change)
                outcome.decrement = decrement
                change = BadgeTree.Change()
            }
            outcome = Self.merge(expiry.outcome, expired: expiry.paths, then: outcome)
        }
        if settings.icon == .payload, let index {
            if let d = outcome.decrement {
                account.devices.values[index].payloadIcon = max(0, account.devices.values[index].payloadIcon - d.by)
            }
        }
        let happening = event.happening
        var reason: SyncPolicy.Reason? = nil
        if let happening, let index { reason = account.devices.values[index].sync.handle(happening, at: clock) }
        let total = account.tree.total
        // Not `account.icon(_:device:)`: passing the device would copy it (a retain and release
        // of each of its sync policy's sets).
        // The op's delivery decision (`Ops/`): the numbers owed, or the device's own icon.
        let icon: Int
        var updates: [BadgeUpdate] = []
        switch settings.icon {
        case .tree:
            icon = total
            updates = Self.deliver(event, index: index, total: total, to: &account.devices, own: own)
        case .payload:
            if let index {
                icon = Self.deliverPayload(event, index: index, to: &account.devices, own: own)
            } else {
                icon = total
            }
        }
        let readout = event.readout(of: account.tree)
        expiring = account.tree.hasPendingExpiries
        return .applied(
            StreamResult.Effects(
                outcome: outcome, icon: icon, sync: reason, tree: readout.tree, maxDisplay: settings.maxDisplay,
                badgeUpdates: updates, expiredPaths: expiry.flatMap { $0.paths.isEmpty ? nil : $0.paths },
                explain: readout.explain, change: change))
    }

    /// The rejection the tree would give for `path`, checked without changing it.
    private static func refusedPath(_ path: String, event: borrowing Event, rules: RuleSet) -> Diagnostic? {
        do { try BadgePath.validate(path) } catch { return pathDiagnostic(error.description, event: event) }
        let root = rules.tree.root
        guard path == root || path.hasPrefix(root + ".") else {
            // The tree's own words for it (`BadgePathError`).
            return pathDiagnostic("invalid path \"\(path)\": a path must start with the root \"\(root)\"", event: event)
        }
        return nil
    }

    private static func pathDiagnostic(_ message: String, event: borrowing Event) -> Diagnostic {
        event.op == .push
            ? .error(.invalidPath, "rule \"\(event.rule ?? "")\" made an invalid path: \(message)", at: "")
            : .error(.invalidPath, message, at: "/path")
    }

    /// The expiry's outcome followed by the event's: changes in that order, one decrement
    /// for both (the drops added, the paths merged in byte order). `expired`: the expiry's
    /// marks, listed in the event's decrement too when only the event lowered the total (a
    /// dot that expired lowers nothing by itself, yet the app must forget it as well).
    private static func merge(_ first: Outcome, expired: [String], then second: Outcome) -> Outcome {
        var merged = Outcome(changes: first.changes + second.changes)
        switch (first.decrement, second.decrement) {
        case (nil, nil): break
        case (let d?, nil): merged.decrement = d
        case (nil, let d?):
            let paths = Set(expired + d.paths).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            merged.decrement = Decrement(by: d.by, paths: paths)
        case (let a?, let b?):
            let paths = Set(a.paths + b.paths).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            merged.decrement = Decrement(by: a.by + b.by, paths: paths)
        }
        return merged
    }

    /// The devices other than `except` whose delivered number is not `total`, with `adding`,
    /// in byte order of their ids; they then count as delivered.
    static func badgeUpdates(
        _ devices: inout [String: Device], total: Int,
        except: Dictionary<String, Device>.Index?, adding extra: BadgeUpdate? = nil
    ) -> [BadgeUpdate] {
        var updates: [BadgeUpdate] = []
        if let extra { updates.append(extra) }
        var i = devices.startIndex
        while i != devices.endIndex {
            if i != except && devices.values[i].delivered != total {
                devices.values[i].delivered = total
                updates.append(BadgeUpdate(device: devices.keys[i], badge: total))
            }
            i = devices.index(after: i)
        }
        if updates.count > 1 { updates.sort { $0.device.utf8.lexicographicallyPrecedes($1.device.utf8) } }
        return updates
    }

    /// Performs a resolved action other than a forced clear on a tree; its changes as the
    /// tree's nodes.
    private static func performChange(
        _ action: RoutingRule.Action, on path: String, in tree: inout BadgeTree,
        source: MarkSource?, expires: Double?, once: String?
    ) throws(BadgePathError) -> BadgeTree.Change {
        switch action {
        case .dot: return try tree.setChange(path, expires: expires, once: once, source: source)
        case .increment(.literal(let k)):
            return try tree.incrementChange(path, by: k, expires: expires, once: once, source: source)
        case .set(.literal(let n)): return try tree.setChange(path, count: n, expires: expires, once: once, source: source)
        case .clear: return try tree.clearChange(path)
        case .ignore, .increment(.pointer), .set(.pointer): return BadgeTree.Change()
        }
    }

    /// Performs a resolved action on a tree.
    static func perform(
        _ action: RoutingRule.Action, on path: String, in tree: inout BadgeTree,
        source: MarkSource? = nil, expires: Double? = nil, once: String? = nil
    ) throws(BadgePathError) -> Outcome {
        switch action {
        case .dot: return try tree.set(path, expires: expires, once: once, source: source)
        case .increment(.literal(let k)): return try tree.increment(path, by: k, expires: expires, once: once, source: source)
        case .set(.literal(let n)): return try tree.set(path, count: n, expires: expires, once: once, source: source)
        case .clear(let force): return try tree.clear(path, force: force)
        case .ignore, .increment(.pointer), .set(.pointer): return .unchanged
        }
    }
}
