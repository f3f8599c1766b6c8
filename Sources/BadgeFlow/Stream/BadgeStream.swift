#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a ``BadgeStream`` finds accounts it does not hold: a state store that loads them
/// on first use (``SQLiteStore``).
///
/// Called on the thread that applies events, one call at a time.
public protocol AccountSource: AnyObject, Sendable {
    /// The stored account `id`, or nil when the store has none.
    ///
    /// - Throws: `StateFile.Failure` when the stored account cannot be read.
    func loadAccount(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account?

    /// The stored accounts with a mark that may be due at or before `time` (a fleet-wide
    /// `expire`); they need not be loaded.
    ///
    /// - Throws: `StateFile.Failure` when the store cannot be read.
    func accountsDue(through time: Double) throws(StateFile.Failure) -> [String]
}

extension AccountSource {
    /// No stored account is due: a source without a due index.
    public func accountsDue(through time: Double) throws(StateFile.Failure) -> [String] { [] }
}

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
    /// out; the stream then loads it itself, and reports the error.
    func collect() -> [String: Account?]
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
    /// Accounts by id, created on first use. An event without `account` uses the account
    /// whose id is its device id.
    ///
    /// These are the accounts in memory in expanded form: with compaction on
    /// (``compact(keeping:)``) idle accounts are held compactly instead, and with a
    /// ``source`` some are not in memory at all. ``account(_:)``, ``accountCount`` and
    /// ``accountIDs`` see the compact ones too.
    public internal(set) var accounts: [String: Account] = [:]
    /// Idle accounts in compact form (``compact(keeping:)``).
    var compacted = CompactAccounts()
    /// The accounts with expiring marks, by when the first may be due (for `expire`).
    var due = DueIndex()
    /// Lines rejected so far.
    public private(set) var rejected = 0
    /// The `seq` of the first line rejected, if any.
    public private(set) var firstRejectedSeq: Int?

    /// Where an account not in ``accounts`` is looked up before it is created empty (a
    /// database); nil: accounts start empty. Setting it turns change tracking on.
    public var source: (any AccountSource)? {
        didSet { if source != nil { tracksChanges = true } }
    }
    /// Whether the stream records which accounts changed (``takeChanged()``) and when each
    /// was last used (``evict(keeping:)``).
    public var tracksChanges = false
    /// Whether the stream records when each account was last used, for
    /// ``compact(keeping:)`` (on with ``tracksChanges``).
    public var tracksUse = false
    /// Ids of accounts changed since the last ``takeChanged()``.
    private var changed: [String] = []
    private var useCounter: UInt64 = 0
    /// Accounts an ``AccountPrefetcher`` read ahead for the batch being applied (nil: the
    /// store has none); used instead of asking ``source``.
    var prefetched: [String: Account?] = [:]
    /// With a prefetcher: the ids ``evict(keeping:)`` dropped since the last request.
    var evictedSinceRequest: Set<String> = []
    var recordsEvictions = false
    /// With `keepsUndo`: each account as it was before the batch being applied first touched
    /// it (nil: the batch created it), so that ``undoBatch()`` can take the batch back.
    private var undo: [String: Account?] = [:]
    /// Whether ``beginBatch()`` and ``undoBatch()`` work (a JSON state: what is saved after a
    /// failed write must not hold the batch whose results were not written).
    package var keepsUndo = false {
        didSet { undo.removeAll() }
    }

    /// Starts a batch: ``undoBatch()`` takes back what is applied from now on.
    package mutating func beginBatch() { undo.removeAll(keepingCapacity: true) }

    /// Puts back every account the batch since ``beginBatch()`` touched, as it was before.
    package mutating func undoBatch() {
        for (id, before) in undo { accounts[id] = before }
        undo.removeAll()
    }

    /// Accounts taken from ``source`` so far: read ahead by a prefetcher, or loaded on the
    /// applying thread when the line needed them (`--checkpoint-stats`).
    public private(set) var loads: (ahead: Int, inline: Int) = (0, 0)
    /// Set when ``source`` failed to load an account; the event that needed it was rejected.
    public private(set) var sourceFailure: StateFile.Failure?

    /// The part of a split state these accounts were loaded from (nil: a whole state);
    /// saved with them (``StatePartition``).
    public var partition: StatePartition?

    /// Creates a stream with no accounts.
    public init(rules: RuleSet) { self.rules = rules }

    /// The ids of the accounts changed since the last call, with the accounts, which then
    /// count as unchanged (e.g. committed by a checkpoint).
    public mutating func takeChanged() -> [(id: String, account: Account)] {
        var out: [(id: String, account: Account)] = []
        out.reserveCapacity(changed.count)
        for id in changed {
            guard let i = accounts.index(forKey: id) else { continue }
            accounts.values[i].dirty = false
            out.append((id, accounts.values[i]))
        }
        changed.removeAll(keepingCapacity: true)
        return out
    }

    /// ``takeChanged()`` for a commit that runs while the stream goes on: the accounts taken
    /// stay in memory (``evict(keeping:)`` passes them over) until ``endCommit(_:)``.
    package mutating func beginCommit() -> [(id: String, account: Account)] {
        let taken = takeChanged()
        for (id, _) in taken {
            guard let i = accounts.index(forKey: id), !accounts.values[i].inFlight else { continue }
            accounts.values[i].inFlight = true
            inFlightCount += 1
        }
        return taken
    }

    /// Records what the commit begun by ``beginCommit()`` stored (each account's devices and
    /// marks); its accounts may leave memory again.
    package mutating func endCommit(_ stored: [(String, (Int, Int))]) {
        for (id, counts) in stored {
            guard let i = accounts.index(forKey: id) else { continue }
            accounts.values[i].storedCounts = counts
            if accounts.values[i].inFlight {
                accounts.values[i].inFlight = false
                inFlightCount -= 1
            }
        }
    }

    /// Takes back a commit that failed: its accounts (`ids`) count as changed again, so the
    /// next commit writes them, and may leave memory once that one ends.
    package mutating func abortCommit(_ ids: some Sequence<String>) {
        for id in ids {
            guard let i = accounts.index(forKey: id) else { continue }
            if accounts.values[i].inFlight {
                accounts.values[i].inFlight = false
                inFlightCount -= 1
            }
            if tracksChanges && !accounts.values[i].dirty {
                accounts.values[i].dirty = true
                changed.append(id)
            }
        }
    }

    /// The number of accounts of a commit under way (``beginCommit()``).
    package private(set) var inFlightCount = 0

    /// The number of accounts changed since the last ``takeChanged()``.
    public var changedCount: Int { changed.count }

    /// Drops the least recently used unchanged accounts until at most `n` are in memory
    /// (changed ones stay until ``takeChanged()``, and those of a commit under way until it
    /// ends); ``source`` loads them again when needed.
    public mutating func evict(keeping n: Int) {
        guard accounts.count > n else { return }
        // Removed one by one: the accounts kept are neither copied nor rehashed.
        let gone = leastRecentlyUsed(accounts.count - n, onlyClean: true)
        for id in gone { accounts.removeValue(forKey: id) }
        if recordsEvictions { evictedSinceRequest.formUnion(gone) }
    }

    /// The ids of the `count` least recently used accounts in memory (`onlyClean`: of those
    /// neither changed nor in a commit under way; fewer when fewer are). Accounts that share
    /// the cut-off's use count (loaded and never used: 0) all come with it.
    private func leastRecentlyUsed(_ count: Int, onlyClean: Bool) -> [String] {
        // Flags read in place: passing the account to a predicate would copy it.
        func eligible(_ i: Dictionary<String, Account>.Index) -> Bool {
            !onlyClean || (!accounts.values[i].dirty && !accounts.values[i].inFlight)
        }
        var uses: [UInt64] = []
        uses.reserveCapacity(accounts.count)
        for i in accounts.indices where eligible(i) { uses.append(accounts.values[i].lastUse) }
        let excess = min(count, uses.count)
        guard excess > 0 else { return [] }
        // Selected, not sorted.
        let cutoff = Self.select(excess - 1, in: &uses)
        var ids: [String] = []
        ids.reserveCapacity(excess)
        for i in accounts.indices where accounts.values[i].lastUse <= cutoff && eligible(i) {
            ids.append(accounts.keys[i])
        }
        return ids
    }

    /// Holds all but the `n` most recently used expanded accounts in compact form (about
    /// 100 bytes for an account with one device and three marks instead of ~1.5 KB); each
    /// is expanded again by its next event, with the same results as if it had stayed.
    ///
    /// For a stream without ``source`` (a store's accounts leave memory through
    /// ``evict(keeping:)``); turns ``tracksUse`` on. An account too large for the compact
    /// form (over 1 MiB of it) stays expanded.
    public mutating func compact(keeping n: Int) {
        let n = max(n, 0)
        tracksUse = true
        guard source == nil, accounts.count > n else { return }
        let gone = leastRecentlyUsed(accounts.count - n, onlyClean: false)
        for id in gone {
            // Moved out, not copied (a copy retains every part of the account once more).
            guard let i = accounts.index(forKey: id) else { continue }
            var account = accounts.remove(at: i).value
            if !compacted.insert(account, as: id) {
                // Too large for the compact form: it stays, counted as just used so that the
                // next compaction does not encode it again at once.
                useCounter &+= 1
                account.lastUse = useCounter
                accounts[id] = account
            }
        }
    }

    /// The `k`-th smallest of `values` (0-based), moving them around: quickselect, O(n) on
    /// average. `k` must be an index of `values`.
    static func select(_ k: Int, in values: inout [UInt64]) -> UInt64 {
        var low = 0, high = values.count - 1
        while low < high {
            // Median of three as the pivot: use counts often come in runs.
            let mid = low + (high - low) / 2
            let a = values[low], b = values[mid], c = values[high]
            let pivot = max(min(a, b), min(max(a, b), c))
            var i = low, j = high
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j {
                    values.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j {
                high = j
            } else if k >= i {
                low = i
            } else {
                return values[k]
            }
        }
        return values[k]
    }

    /// Adds a loaded account: compact when `compact`, else expanded.
    mutating func addLoaded(_ account: Account, as id: String, compact: Bool) {
        // Indexed for `expire` when it holds expiring marks.
        if let time = account.tree.earliestPendingExpiry { due.insert(id, at: time) }
        // An id met twice (a file that repeats a key) keeps its last value, in one form only.
        if compact {
            tracksUse = true
            if compacted.insert(account, as: id) {
                accounts.removeValue(forKey: id)
                return
            }
        }
        compacted.remove(id)
        accounts[id] = account
    }

    /// The number of accounts, expanded and compact (not those only in ``source``).
    public var accountCount: Int { accounts.count + compacted.count }

    /// The ids of the accounts, expanded and compact, in no particular order.
    public var accountIDs: [String] { Array(accounts.keys) + Array(compacted.ids) }

    /// Account `id`, expanded or a copy of its compact form; nil when the stream holds none
    /// (a ``source`` is not asked).
    ///
    /// - Throws: `StateFile.Failure` when a compact account does not decode (an internal error).
    public func account(_ id: String) throws(StateFile.Failure) -> Account? {
        if let a = accounts[id] { return a }
        return try compacted.account(id, rules: rules)
    }

    /// Takes accounts read ahead for the next batch (``AccountPrefetcher/collect()``),
    /// without those that came into memory or were evicted since they were requested.
    mutating func installPrefetched(_ ahead: [String: Account?]) {
        prefetched = ahead
        for id in ahead.keys where accounts[id] != nil || evictedSinceRequest.contains(id) {
            prefetched.removeValue(forKey: id)
        }
    }

    /// The state of `device` in `account` (by default the device's own account), if it has
    /// joined it.
    public func device(_ device: String, account: String? = nil) -> Device? {
        (try? self.account(account ?? device))??.devices[device]
    }

    /// Applies one analysed line and appends its result line to `out` (nothing for a blank line).
    public mutating func apply(_ line: consuming LineResult, seq: Int, into out: inout JSONWriter) {
        // The result line is written from the event and what applying it did
        // (`StreamResult.Effects`): the event, a few hundred bytes, is never moved into a
        // result nor copied.
        switch consume line {
        case .blank:
            return
        case .rejected(let diagnostic):
            noteRejected(seq)
            ResultLine.error(diagnostic, seq: seq, into: &out)
        case .event(let event):
            var index: Dictionary<String, Account>.Index? = nil
            switch apply(event, seq: seq, at: &index) {
            case .rejected(let d):
                noteRejected(seq)
                ResultLine.error(d, seq: seq, into: &out)
            case .applied(let effects):
                if !effects.change.isEmpty, let index {
                    ResultLine.event(event, effects, tree: &accounts.values[index].tree, seq: seq, into: &out)
                } else {
                    ResultLine.event(event, effects, seq: seq, into: &out)
                }
            }
        }
    }

    private mutating func noteRejected(_ seq: Int) {
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
            var index: Dictionary<String, Account>.Index? = nil
            switch apply(event, seq: seq, at: &index) {
            case .rejected(let d):
                noteRejected(seq)
                return StreamResult(seq: seq, body: .rejected(d))
            case .applied(var effects):
                if !effects.change.isEmpty, let index {
                    // A result leaving the stream holds its states.
                    let decrement = effects.outcome.decrement
                    effects.outcome = accounts.values[index].tree.outcome(of: effects.change)
                    effects.outcome.decrement = decrement
                    effects.change = BadgeTree.Change()
                }
                return StreamResult(seq: seq, body: .applied(StreamResult.Applied(event: event, effects: effects)))
            }
        }
    }

    /// Applies `event`; `at`: the index of its account when it was applied (for its
    /// ``StreamResult/Effects/change``, read from the account's tree).
    private mutating func apply(
        _ event: borrowing Event, seq: Int, at applied: inout Dictionary<String, Account>.Index?
    ) -> StreamResult.Applying {
        if let refused = Self.refusedForNUL(event) { return .rejected(refused) }
        // Only scalars are taken from the rules here: copying the RuleSet would retain its
        // arrays once per event, on the same reference counts the workers touch.
        let settings = Settings(icon: rules.icon, maxDisplay: rules.tree.maxDisplay)
        if event.op == .expire { return expireFleet(event, settings: settings) }
        // Mutate the account in place in the dictionary: one hash, no copy of its tree.
        let id = event.accountID
        let index: Dictionary<String, Account>.Index
        let created: Bool
        switch lookUp(id, pointer: event.account == nil ? "/device" : "/account") {
        case .success(let found): (index, created) = found
        case .failure(let d): return .rejected(d)
        }
        let eventID = event.id
        if let eventID, accounts.values[index].ids.contains(eventID) {
            return Self.duplicate(event, account: accounts.values[index], settings: settings)
        }
        let own = event.account.map { $0 == event.device } ?? true
        // Read in the static apply, which holds the account in place: reading it here through
        // `accounts.values[index]` copies the account (a retain and release of each part).
        var expiring = false
        let body = Self.apply(
            event, seq: seq, settings: settings, rules: rules, own: own, to: &accounts.values[index], expiring: &expiring)
        if case .rejected = body {
            // A rejected line creates no account (one found in the state stays as it was).
            if created { accounts.remove(at: index) }
            return body
        }
        if let eventID { accounts.values[index].ids.insert(eventID) }
        // One branch for an account without expiring marks.
        if expiring { indexDue(index) }
        noteUse(index)
        applied = index
        return body
    }

    /// Puts the account at `index` in ``due`` when its first mark may be due earlier than
    /// the entry it knows of.
    private mutating func indexDue(_ index: Dictionary<String, Account>.Index) {
        guard let time = accounts.values[index].tree.earliestPendingExpiry else { return }
        if let known = accounts.values[index].indexedDue, known <= time { return }
        accounts.values[index].indexedDue = time
        due.insert(accounts.keys[index], at: time)
    }

    /// Records that the account at `index` was used and changed (for eviction, compaction
    /// and checkpoints).
    private mutating func noteUse(_ index: Dictionary<String, Account>.Index) {
        if tracksChanges || tracksUse {
            useCounter &+= 1
            accounts.values[index].lastUse = useCounter
        }
        if tracksChanges {
            if !accounts.values[index].dirty {
                accounts.values[index].dirty = true
                changed.append(accounts.keys[index])
            }
        }
    }

    /// The account `id` in memory: expanded from its compact form, read ahead, loaded from
    /// ``source``, or made empty (`created`).
    private mutating func lookUp(
        _ id: String, pointer: String
    ) -> Result<(Dictionary<String, Account>.Index, created: Bool), Diagnostic> {
        if let found = accounts.index(forKey: id) {
            if keepsUndo, undo.index(forKey: id) == nil { undo.updateValue(accounts.values[found], forKey: id) }
            return .success((found, false))
        }
        var thawed: Account? = nil
        if !compacted.isEmpty {
            do { thawed = try compacted.take(id, rules: rules) } catch {
                sourceFailure = error
                return .failure(.error(.invalidPath, "account \"\(id)\" could not be expanded: \(error.description)", at: ""))
            }
        }
        // Undoing the batch puts an expanded account back as it was (nil: it is dropped).
        if keepsUndo, undo.index(forKey: id) == nil { undo.updateValue(thawed, forKey: id) }
        // An empty account is made only when none is found (making one builds a tree).
        var found = thawed
        if found == nil, let ahead = prefetched.removeValue(forKey: id) {
            loads.ahead += 1
            found = ahead
        } else if found == nil, let source {
            loads.inline += 1
            do { found = try source.loadAccount(id, rules: rules) } catch {
                sourceFailure = error
                return .failure(
                    .error(.invalidPath, "account \"\(id)\" could not be loaded from the state: \(error.description)", at: ""))
            }
        }
        let created = found == nil
        accounts[id] = found ?? Account(rules: rules)
        guard let made = accounts.index(forKey: id) else {
            return .failure(.error(.invalidPath, "account \"\(id)\" could not be created", at: pointer))
        }
        return .success((made, created))
    }

    /// A fleet-wide `expire`: every account with a mark due at or before the event's time
    /// expires it as if its next event came then (its clock moves up to that time), and
    /// is listed with its changes and the badge updates it owes, in byte order of account id.
    private mutating func expireFleet(_ event: borrowing Event, settings: Settings) -> StreamResult.Applying {
        let time = event.at ?? 0
        var entries: [ExpiredAccount] = []
        var seen: Set<String> = []
        // Stored accounts that may be due join the resident ones (each is looked at once).
        if let source {
            do {
                for id in try source.accountsDue(through: time) { due.insert(id, at: time) }
            } catch {
                sourceFailure = error
                return .rejected(.error(.invalidPath, "the state's due index could not be read: \(error.description)", at: ""))
            }
        }
        while let top = due.first, top.time <= time {
            due.removeFirst()
            guard seen.insert(top.account).inserted else { continue }
            guard case .success(let (index, created)) = lookUp(top.account, pointer: "") else { continue }
            if created {
                // Indexed, then gone (not in the state): nothing to expire.
                accounts.remove(at: index)
                continue
            }
            accounts.values[index].indexedDue = nil
            let expiry = accounts.values[index].tree.expire(through: time)
            if source != nil && !accounts.values[index].tree.hasPendingExpiries {
                // No mark left to expire: the stored due entry goes at the next commit.
                accounts.values[index].dueStale = true
                if expiry.paths.isEmpty { noteUse(index) }
            }
            if !expiry.paths.isEmpty {
                accounts.values[index].clock = max(accounts.values[index].clock, time)
                let total = accounts.values[index].tree.total
                if settings.icon == .payload, let d = expiry.outcome.decrement {
                    for i in accounts.values[index].devices.indices {
                        accounts.values[index].devices.values[i].payloadIcon = max(
                            0, accounts.values[index].devices.values[i].payloadIcon - d.by)
                    }
                }
                let updates =
                    settings.icon == .tree
                    ? Self.deliver(event, index: nil, total: total, to: &accounts.values[index].devices, own: false) : []
                entries.append(
                    ExpiredAccount(
                        account: top.account, expired: expiry.paths, outcome: expiry.outcome, icon: total, badgeUpdates: updates))
                noteUse(index)
            }
            if accounts.values[index].tree.hasPendingExpiries { indexDue(index) }
        }
        entries.sort { $0.account.utf8.lexicographicallyPrecedes($1.account.utf8) }
        return .applied(
            StreamResult.Effects(
                outcome: .unchanged, icon: 0, sync: nil, tree: nil, maxDisplay: settings.maxDisplay, badgeUpdates: [],
                expiredPaths: nil, explain: nil, fleet: entries))
    }

    /// The result of an event whose id its account already applied: the usual one with
    /// `"duplicate":true`, no changes and nothing to send (no payload, badge updates or sync).
    private static func duplicate(
        _ event: borrowing Event, account: borrowing Account, settings: Settings
    ) -> StreamResult.Applying {
        let icon =
            settings.icon == .payload ? (account.devices[event.device]?.payloadIcon ?? account.tree.total) : account.tree.total
        let tree = event.op == .snapshot ? account.tree.snapshot() : nil
        let explain = event.op == .explain ? account.tree.explain(event.path ?? "") : nil
        return .applied(
            StreamResult.Effects(
                outcome: .unchanged, icon: icon, sync: nil, tree: tree, maxDisplay: settings.maxDisplay, badgeUpdates: [],
                expiredPaths: nil, explain: explain, duplicate: true))
    }

    /// A rejection when the event's account, device or page holds U+0000: a state keeps them
    /// as object keys, and a key with U+0000 is refused when JSON is read (``JSONParser``),
    /// so the state would be saved and never load again. Checked here, not in the analyzer,
    /// so that events made in code are held to it too.
    private static func refusedForNUL(_ event: borrowing Event) -> Diagnostic? {
        // memchr over the bytes in place (an empty or absent id costs one branch).
        func holdsNUL(_ s: String?) -> Bool {
            guard let s, !s.isEmpty else { return false }
            return s.utf8.withContiguousStorageIfAvailable { b in b.baseAddress.map { memchr($0, 0, b.count) != nil } ?? false }
                ?? s.utf8.contains(0)
        }
        let field =
            holdsNUL(event.account) ? "account" : holdsNUL(event.device) ? "device" : holdsNUL(event.page) ? "page" : nil
        guard let field else { return nil }
        return .error(.invalidValue, "\(field) must not hold U+0000 (\\u0000)", at: "/" + field)
    }

    /// What applying an event needs from the stream besides the account.
    private struct Settings {
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
        if index == nil && !event.isAccountLevel && event.op != .unregister {
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
            outcome = Self.merge(expiry.outcome, then: outcome)
        }
        if settings.icon == .payload, let index {
            if let d = outcome.decrement {
                account.devices.values[index].payloadIcon = max(0, account.devices.values[index].payloadIcon - d.by)
            }
            if event.op == .push, let b = event.badge { account.devices.values[index].payloadIcon = b }
        }
        let happening: SyncPolicy.Happening?
        switch event.op {
        case .login: happening = .login
        case .logout: happening = .logout
        case .foreground: happening = .foreground
        case .background: happening = .background
        case .appear: happening = .appear(event.page ?? "")
        case .disappear: happening = .disappear(event.page ?? "")
        case .push: happening = .push
        case .tick: happening = .tick
        case .set, .clear, .snapshot, .explain, .reconcile: happening = .other
        case .unregister, .expire: happening = nil
        }
        var reason: SyncPolicy.Reason? = nil
        if let happening, let index { reason = account.devices.values[index].sync.handle(happening, at: clock) }
        let total = account.tree.total
        // Not `account.icon(_:device:)`: passing the device would copy it (a retain and release
        // of each of its sync policy's sets).
        let icon = settings.icon == .payload ? (index.map { account.devices.values[$0].payloadIcon } ?? total) : total
        var updates: [BadgeUpdate] = []
        if settings.icon == .tree {
            updates = Self.deliver(event, index: index, total: total, to: &account.devices, own: own)
        } else if let index, event.op == .logout && !own {
            account.devices.remove(at: index)
        } else if let index, event.op == .unregister {
            account.devices.remove(at: index)
        }
        let tree = event.op == .snapshot ? account.tree.snapshot() : nil
        let explain = event.op == .explain ? account.tree.explain(event.path ?? "") : nil
        expiring = account.tree.hasPendingExpiries
        return .applied(
            StreamResult.Effects(
                outcome: outcome, icon: icon, sync: reason, tree: tree, maxDisplay: settings.maxDisplay,
                badgeUpdates: updates, expiredPaths: expiry.flatMap { $0.paths.isEmpty ? nil : $0.paths },
                explain: explain, change: change))
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

    /// Updates the delivered numbers after an applied event (icon policy `tree`, see
    /// <doc:EventLines>) and returns the badge updates the server owes: every device whose
    /// delivered number is not the account's `total`, in byte order of device id, which then
    /// count as delivered; a device that logs out is sent 0 when it shows anything.
    private static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] {
        var except = index
        var leaving: BadgeUpdate? = nil
        switch event.op {
        case .push:
            if event.kind?.setsIcon ?? true {
                // The payload (stamped, or sent with aps.badge = icon) sets the icon.
                if let index {
                    devices.values[index].delivered = total
                } else {
                    for i in devices.indices { devices.values[i].delivered = total }
                }
            } else {
                except = nil
            }
        case .reconcile:
            except = nil
            if let index, let shown = event.badge {
                devices.values[index].delivered = shown
            } else {
                // Every device is sent the total, whatever it was last given.
                for i in devices.indices { devices.values[i].delivered = -1 }
            }
        case .logout:
            if let index {
                if devices.values[index].delivered != 0 { leaving = BadgeUpdate(device: event.device, badge: 0) }
                if own {
                    devices.values[index].delivered = 0
                } else {
                    devices.remove(at: index)
                }
            }
            except = nil
            if own, let index {
                // The device stays in its own account, showing 0: it is not owed the total.
                return Self.badgeUpdates(&devices, total: total, except: index, adding: leaving)
            }
        case .unregister:
            if let index { devices.remove(at: index) }
            except = nil
        default:
            // The device's own app reported: it set its icon to the total.
            if let index { devices.values[index].delivered = total }
        }
        return Self.badgeUpdates(&devices, total: total, except: except, adding: leaving)
    }
    /// The expiry's outcome followed by the event's: changes in that order, one decrement
    /// for both (the drops added, the paths merged in byte order).
    private static func merge(_ first: Outcome, then second: Outcome) -> Outcome {
        var merged = Outcome(changes: first.changes + second.changes)
        switch (first.decrement, second.decrement) {
        case (nil, nil): break
        case (let d?, nil), (nil, let d?): merged.decrement = d
        case (let a?, let b?):
            let paths = Set(a.paths + b.paths).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            merged.decrement = Decrement(by: a.by + b.by, paths: paths)
        }
        return merged
    }

    /// The devices other than `except` whose delivered number is not `total`, with `adding`,
    /// in byte order of their ids; they then count as delivered.
    private static func badgeUpdates(
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
