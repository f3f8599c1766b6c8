import BadgeTree

/// An account a commit takes from the stream (``AccountTable/takeChanged()``), with what
/// the store needs to know of it besides its state.
package struct ChangedAccount: Sendable {
    /// The account's id.
    package var id: String
    /// The account as it was when taken: the stream's own box, shared. The stream copies
    /// the account out of it before it next changes it (``AccountBox``), so what a commit
    /// reads here on its own thread stays as it was taken.
    package let box: AccountBox
    /// Its devices and marks as last stored in the state it was loaded from or committed
    /// to; nil when not known (the store then reads them, if it holds the account).
    package var storedCounts: (devices: Int, marks: Int)?
    /// An `expire` found nothing due where the state's due index said there might be: the
    /// commit drops the entry.
    package var dueStale: Bool

    /// An account with no stored counts known and no stale due entry (e.g. one of a whole
    /// stream written to a new state).
    package init(id: String, account: Account, storedCounts: (devices: Int, marks: Int)? = nil, dueStale: Bool = false) {
        self.init(id: id, box: AccountBox(account), storedCounts: storedCounts, dueStale: dueStale)
    }

    /// An account taken in the box the stream keeps it in.
    init(id: String, box: AccountBox, storedCounts: (devices: Int, marks: Int)?, dueStale: Bool) {
        self.id = id
        self.box = box
        self.storedCounts = storedCounts
        self.dueStale = dueStale
    }
}

/// The accounts a ``BadgeStream`` holds in memory, and their residency: when each was last
/// used, which changed since the last commit, which a commit under way holds, what a store
/// last stored of each, which were read ahead, which left memory; and the idle accounts
/// held compactly.
///
/// Each account lives in a slot of one contiguous array, found by an id → slot table
/// (``IDIndex``) keyed by the id's hash, which each slot keeps: the stream hashes an id
/// once a line, finds its account with that hash and changes it in place in its slot (no
/// copy of it), and the bookkeeping (changes, commits, eviction, read-ahead) goes by slot
/// and stored hash, without hashing an id again or touching the accounts it passes over.
/// A slot freed by an eviction goes on a free list for the next account that comes in,
/// which releases the account the slot still held.
///
/// The rules it keeps: an account changed since the last ``takeChanged()`` or
/// ``beginCommit()``, or taken by a commit that has not ended (``endCommit(_:)``,
/// ``abortCommit(_:)``), never leaves memory through ``evict(keeping:)``; eviction takes
/// the least recently used of the others.
package struct AccountTable: Sendable {
    /// One account in memory and what the table keeps about it.
    struct Slot: Sendable {
        /// The account's id (in a free slot: of the account that left it, or "").
        var id: String
        /// The id's hash (``IDIndex/hash(_:)``), for the id → slot table.
        var hash: Int
        /// The account's box (in a free slot: ``AccountTable/vacant``, shared).
        var box: AccountBox
        /// The box is the one a commit under way was given (``AccountTable/beginCommit()``):
        /// changing the account copies it into a box of the slot's own first, even once the
        /// commit has let go of the box, until the commit has ended
        /// (``AccountTable/endCommit(_:)``, after the wait for it). The commit's last read of
        /// the account is then ordered before any write here by that wait, not by a reference
        /// count alone (which ThreadSanitizer does not see).
        var boxInCommit = false
        /// Whether the slot holds an account (false: it is on the free list).
        var live = true
        /// When the account was last used (the table's use counter), for eviction and
        /// compaction.
        var lastUse: UInt64 = 0
        /// Changed since the last ``AccountTable/takeChanged()``.
        var changed = false
        /// Taken by a commit that has not ended (``AccountTable/beginCommit()``): the account
        /// stays in memory until it has, or a reload could read the row before it.
        var inFlight = false
        /// Devices and marks as last stored in the state the account was loaded from or
        /// committed to (nil: not known).
        var storedCounts: (devices: Int, marks: Int)?
        /// The time of the stream's ``DueIndex`` entry for the account, when it has one
        /// that the account knows of.
        var indexedDue: Double?
        /// An `expire` found nothing due where a state's due index said there might be: the
        /// next commit drops the entry.
        var dueStale = false
    }

    /// What a slot holds once its account moved out (``compact(keeping:)``): one shared
    /// box of an empty account, so that it allocates nothing.
    private static let vacant = AccountBox(Account(tree: BadgeTree()))

    /// The slot of each account in memory, by the hash of its id.
    private var index = IDIndex()
    /// The slots, live and free; ``BadgeStream`` changes accounts in place here.
    var slots: [Slot] = []
    /// Free slots, reused last freed first.
    private var free: [Int] = []
    /// Slots changed since the last ``takeChanged()``, in the order they changed (a slot
    /// freed and reused may be listed twice; only a live, changed slot is taken).
    private var changedSlots: [Int] = []
    /// The slots of the commit under way, in the order ``beginCommit()`` handed them out.
    private var commitSlots: [Int] = []
    private var useCounter: UInt64 = 0
    /// With `keepsUndo`: each account as it was before the batch being applied first
    /// touched it (nil: the batch created it).
    private var undo: [String: Account?] = [:]

    /// Idle accounts in compact form (``compact(keeping:rules:)``).
    var compacted = CompactAccounts()
    /// Whether the table records which accounts changed (``takeChanged()``) and when each
    /// was last used (``evict(keeping:)``).
    var tracksChanges = false
    /// Whether the table records when each account was last used, for
    /// ``compact(keeping:rules:)`` (on with ``tracksChanges``).
    var tracksUse = false
    /// The ids of the accounts read for the batch (or line) being applied, by an
    /// ``AccountPrefetcher`` ahead of it or by the applying layer just before it
    /// (``provide(_:hash:_:)``), with ``aheadAccounts`` and ``aheadIndex``.
    private var aheadIDs: [String] = []
    /// Per id of ``aheadIDs``: the account read ahead (`.some(nil)`: the store has none),
    /// nil once taken.
    private var aheadAccounts: [Account??] = []
    /// ``aheadIDs`` by hash.
    private var aheadIndex = IDIndex()
    /// Per id of ``aheadIDs``: whether the applying layer loaded it itself (``provide(_:hash:_:)``),
    /// not a read-ahead (for ``BadgeStream/loads``).
    private var aheadInline: [Bool] = []
    /// The accounts the applying layer could not read for the line or batch being applied,
    /// by id (``provideFailure(_:_:)``).
    private var loadFailures: [String: StateFile.Failure] = [:]
    /// With ``recordsEvictions``: the ids ``evict(keeping:)`` dropped, in order (an id once
    /// per time it left), from eviction number ``evictionsForgotten`` on, with their hashes
    /// and their index. A read-ahead request notes ``evictionMark``; its accounts that left
    /// memory from then on are not installed (``installPrefetched(parts:evictedSince:)``).
    private(set) var evictedIDs: [String] = []
    private var evictedHashes: [Int] = []
    private var evictedIndex = IDIndex()
    /// The number of evictions recorded and then forgotten (``forgetEvictions(before:)``).
    private var evictionsForgotten = 0
    /// Whether ``evict(keeping:)`` records the ids it drops (a prefetcher reads ahead).
    var recordsEvictions = false
    /// Whether an account leaving memory is kept in ``released`` for another thread to free
    /// (``takeReleased()``), instead of being freed here: a read-ahead's reader frees them.
    /// On the fleet bench evicting took 2.4 s of the applying thread's 13 s, 2 s of it freeing
    /// accounts (cold in the cache, allocated on a reader's thread).
    var deferredRelease = false
    /// With ``deferredRelease``: the accounts that left memory since ``takeReleased()``.
    private var released: [AccountBox] = []
    /// How many accounts left memory and wait to be freed (``takeReleased()``).
    var releasedCount: Int { released.count }

    /// The accounts that left memory since the last call, for another thread to free (with
    /// ``deferredRelease``; else none).
    mutating func takeReleased() -> [AccountBox] {
        guard !released.isEmpty else { return [] }
        var out: [AccountBox] = []
        swap(&out, &released)
        return out
    }
    /// Whether ``beginBatch()`` and ``undoBatch()`` work.
    var keepsUndo = false {
        didSet { undo.removeAll() }
    }

    /// The number of accounts of a commit under way (``beginCommit()``).
    private(set) var inFlightCount = 0

    /// An empty table.
    init() {}

    /// The number of accounts in memory in expanded form.
    var count: Int { index.count }

    /// The number of accounts changed since the last ``takeChanged()``.
    var changedCount: Int { changedSlots.count }

    /// The slot of account `id`, if it is in memory expanded.
    func slot(of id: String) -> Int? { slot(of: id, hash: IDIndex.hash(id)) }

    /// The slot of account `id`, whose hash is `hash` (``IDIndex/hash(_:)``), if it is in
    /// memory expanded.
    @inline(__always)
    func slot(of id: String, hash: Int) -> Int? {
        index.find(hash) { slots[$0].id == id }
    }

    /// The ids and accounts in memory in expanded form, in slot order.
    var resident: some Sequence<(id: String, account: Account)> {
        slots.lazy.filter(\.live).map { (id: $0.id, account: $0.account) }
    }

    /// The accounts in memory in expanded form as changed accounts (with what the table
    /// knows of their stored counts), for writing them all to a store.
    var residentForStore: some Collection<ChangedAccount> {
        slots.lazy.filter(\.live).map {
            ChangedAccount(id: $0.id, box: $0.box, storedCounts: $0.storedCounts, dueStale: $0.dueStale)
        }
    }

    /// Account `id` in memory expanded. Setting an account keeps its slot's bookkeeping
    /// (or makes a new slot); setting nil drops it from memory.
    package subscript(id: String) -> Account? {
        get { slot(of: id).map { slots[$0].account } }
        set {
            let hash = IDIndex.hash(id)
            if let newValue {
                if let s = slot(of: id, hash: hash) {
                    slots[s].account = newValue
                } else {
                    insert(newValue, as: id, hash: hash)
                }
            } else if let s = slot(of: id, hash: hash) {
                remove(s)
            }
        }
    }

    /// Puts `account` in memory as `id`, which must not be there yet, in a new slot (unused
    /// and unchanged); `loaded`: the account was read from the store it commits to, so its
    /// stored counts are its own. Returns the slot.
    @discardableResult
    mutating func insert(_ account: consuming Account, as id: String, loaded: Bool = false) -> Int {
        insert(account, as: id, hash: IDIndex.hash(id), loaded: loaded)
    }

    /// ``insert(_:as:loaded:)`` with the hash of `id` (``IDIndex/hash(_:)``).
    @discardableResult
    mutating func insert(_ account: consuming Account, as id: String, hash: Int, loaded: Bool = false) -> Int {
        let s: Int
        if let reused = free.popLast() {
            s = reused
            slots[s] = Slot(id: id, hash: hash, box: AccountBox(account))
        } else {
            s = slots.count
            slots.append(Slot(id: id, hash: hash, box: AccountBox(account)))
        }
        index.insert(hash, position: s)
        if loaded { slots[s].storedCounts = (slots[s].account.devices.count, slots[s].account.tree.markCount) }
        return s
    }

    /// Drops the account in slot `s` from memory (its slot goes on the free list).
    ///
    /// The account is released here (with ``deferredRelease``, handed to
    /// ``takeReleased()``), an empty one shared by every free slot put in its place: kept
    /// until its slot was reused, the accounts evicted in a burst (slots freed together go to
    /// the bottom of the free list, which is reused last in, first out) stayed in memory for
    /// the rest of the run, above `--max-resident`.
    mutating func remove(_ s: Int) {
        guard slots[s].live else { return }
        var gone = Self.vacant
        swap(&gone, &slots[s].box)
        if deferredRelease { released.append(gone) }
        slots[s].live = false
        slots[s].changed = false
        if slots[s].inFlight {
            slots[s].inFlight = false
            inFlightCount -= 1
        }
        index.remove(slots[s].hash, position: s)
        free.append(s)
    }

    /// Takes the account in slot `s` out of memory and returns its slot as it was (its slot
    /// goes on the free list).
    private mutating func vacate(_ s: Int) -> Slot {
        var gone = Slot(id: "", hash: 0, box: Self.vacant, live: false)
        guard slots[s].live else { return gone }
        swap(&gone, &slots[s])
        index.remove(gone.hash, position: s)
        if gone.inFlight { inFlightCount -= 1 }
        free.append(s)
        return gone
    }

    /// Puts back `slot`, which ``vacate(_:)`` took out of slot `s` last.
    private mutating func restore(_ slot: consuming Slot, in s: Int) {
        if free.last == s { free.removeLast() }
        if slot.inFlight { inFlightCount += 1 }
        index.insert(slot.hash, position: s)
        slots[s] = slot
    }

    /// Records that the account in slot `s` was used and changed (for eviction, compaction
    /// and commits).
    mutating func noteUse(_ s: Int) {
        if tracksChanges || tracksUse {
            useCounter &+= 1
            slots[s].lastUse = useCounter
        }
        if tracksChanges && !slots[s].changed {
            slots[s].changed = true
            changedSlots.append(s)
        }
    }

    // MARK: Commits

    /// The accounts changed since the last call, which then count as unchanged (e.g.
    /// committed by a checkpoint).
    mutating func takeChanged() -> [ChangedAccount] { take(forCommit: false) }

    /// ``takeChanged()`` for a commit that runs while the stream goes on: the accounts taken
    /// stay in memory (``evict(keeping:)`` passes them over) until ``endCommit(_:)``.
    mutating func beginCommit() -> [ChangedAccount] {
        commitSlots.removeAll(keepingCapacity: true)
        return take(forCommit: true)
    }

    /// The changed accounts, their boxes shared with their slots (the commit reads them on
    /// its own thread; the stream copies an account out of a shared box before it changes
    /// it); `forCommit`: marked as in a commit under way, their slots kept in ``commitSlots``.
    private mutating func take(forCommit: Bool) -> [ChangedAccount] {
        var out: [ChangedAccount] = []
        out.reserveCapacity(changedSlots.count)
        for s in changedSlots where slots[s].live && slots[s].changed {
            slots[s].changed = false
            if forCommit {
                slots[s].boxInCommit = true
                commitSlots.append(s)
                if !slots[s].inFlight {
                    slots[s].inFlight = true
                    inFlightCount += 1
                }
            }
            out.append(
                ChangedAccount(
                    id: slots[s].id, box: slots[s].box, storedCounts: slots[s].storedCounts,
                    dueStale: slots[s].dueStale))
        }
        changedSlots.removeAll(keepingCapacity: true)
        return out
    }

    /// Records what a commit stored (each account's devices and marks, in the order the
    /// commit was handed its accounts); the accounts of the commit begun by
    /// ``beginCommit()`` may leave memory again.
    mutating func endCommit(_ stored: [(String, (Int, Int))]) {
        for (k, (id, counts)) in stored.enumerated() {
            // The commit's own slot when it still holds the account (no hash), else by id.
            let s: Int
            if k < commitSlots.count, slots[commitSlots[k]].live, slots[commitSlots[k]].id == id {
                s = commitSlots[k]
            } else if let found = slot(of: id) {
                s = found
            } else {
                continue
            }
            slots[s].storedCounts = counts
            slots[s].boxInCommit = false
            if slots[s].inFlight {
                slots[s].inFlight = false
                inFlightCount -= 1
            }
        }
        commitSlots.removeAll(keepingCapacity: true)
    }

    /// Takes back a commit that failed: its accounts (`ids`) count as changed again, so the
    /// next commit writes them, and may leave memory once that one ends.
    mutating func abortCommit(_ ids: some Sequence<String>) {
        for id in ids {
            guard let s = slot(of: id) else { continue }
            slots[s].boxInCommit = false
            if slots[s].inFlight {
                slots[s].inFlight = false
                inFlightCount -= 1
            }
            if tracksChanges && !slots[s].changed {
                slots[s].changed = true
                changedSlots.append(s)
            }
        }
        commitSlots.removeAll(keepingCapacity: true)
    }

    // MARK: Numbers a fleet-wide reconcile owes stored accounts

    /// What fleet-wide `reconcile` lines delivered to accounts read only from the store,
    /// oldest first (``Deliveries``); each stays until the commit that writes it has ended.
    private var deliveries: [Deliveries] = []
    /// Per set of ``deliveries``, per account: it came into memory with its numbers, and is
    /// committed whole from then on (the numbers are not applied twice).
    private var deliveriesTaken: [[Bool]] = []
    /// The first this many sets of ``deliveries`` are in the commit under way.
    private var deliveriesInCommit = 0
    /// An eviction mark (``evictionMark``): accounts read ahead on a request made before it
    /// may predate a commit of ``deliveries`` that has since been dropped, and are not used.
    private var readsStaleBefore = 0

    /// Whether numbers owed to stored accounts are waiting for, or in, a commit.
    var holdsDeliveries: Bool { !deliveries.isEmpty }

    /// Keeps `owed`, what a fleet-wide `reconcile` sent to accounts read only from the store,
    /// until a commit writes it (``beginDeliveries()``).
    mutating func addDeliveries(_ owed: consuming Deliveries) {
        guard !owed.isEmpty else { return }
        deliveriesTaken.append([Bool](repeating: false, count: owed.count))
        deliveries.append(owed)
    }

    /// Gives the stored account `id`, just read from the store (or read ahead), the numbers
    /// a fleet-wide `reconcile` sent its devices since the stored row was last committed;
    /// `coming`: it comes into memory, and is then committed whole (the numbers are not
    /// applied again to a later read). Returns whether any number was applied. Applying one
    /// to a row that a commit already gave it changes nothing.
    mutating func applyDeliveries(_ id: String, to account: inout Account, coming: Bool) -> Bool {
        var applied = false
        for k in deliveries.indices {
            guard let i = deliveries[k].index(of: id), !deliveriesTaken[k][i] else { continue }
            deliveries[k].apply(i, to: &account)
            if coming { deliveriesTaken[k][i] = true }
            applied = true
        }
        return applied
    }

    /// The numbers owed to stored accounts, for the commit being begun (with
    /// ``beginCommit()``): written into their rows in its transaction.
    mutating func beginDeliveries() -> [Deliveries.Owed] {
        deliveriesInCommit = deliveries.count
        return deliveries.indices.map { Deliveries.Owed(deliveries: deliveries[$0], skipped: deliveriesTaken[$0]) }
    }

    /// The commit begun with ``beginDeliveries()`` has ended: its numbers are in the store.
    /// Accounts read ahead before now may lack them, and are not used (the applying layer
    /// then loads them before the next batch).
    mutating func endDeliveries() {
        guard deliveriesInCommit > 0 else { return }
        deliveries.removeFirst(deliveriesInCommit)
        deliveriesTaken.removeFirst(deliveriesInCommit)
        deliveriesInCommit = 0
        clearAhead()
        if recordsEvictions {
            // A mark of its own: no account has this id (ids never hold U+0000).
            let id = "\u{0}deliveries"
            let hash = IDIndex.hash(id)
            evictedIndex.insert(hash, position: evictedIDs.count)
            evictedIDs.append(id)
            evictedHashes.append(hash)
            readsStaleBefore = evictionMark
        }
    }

    /// The commit begun with ``beginDeliveries()`` failed: its numbers wait for the next.
    mutating func abortDeliveries() { deliveriesInCommit = 0 }

    // MARK: Leaving memory

    /// Drops the least recently used unchanged accounts until at most `n` are in memory
    /// (changed ones stay until ``takeChanged()``, and those of a commit under way until it
    /// ends).
    mutating func evict(keeping n: Int) {
        guard count > n else { return }
        for s in leastRecentlyUsed(count - n, onlyClean: true) {
            if recordsEvictions { noteEvicted(s) }
            remove(s)
        }
    }

    /// Records that the account in slot `s` leaves memory while a read-ahead may be under way.
    private mutating func noteEvicted(_ s: Int) {
        evictedIndex.insert(slots[s].hash, position: evictedIDs.count)
        evictedIDs.append(slots[s].id)
        evictedHashes.append(slots[s].hash)
    }

    /// The number of evictions recorded so far: what a read-ahead request notes when it is
    /// made, to tell the accounts that left memory after it.
    var evictionMark: Int { evictionsForgotten + evictedIDs.count }

    /// Whether `id` (whose hash is `hash`) left memory at or after eviction number `mark`.
    private func evicted(_ id: String, hash: Int, since mark: Int) -> Bool {
        let first = mark - evictionsForgotten
        return evictedIndex.find(hash, where: { $0 >= first && evictedIDs[$0] == id }) != nil
    }

    /// Forgets the evictions before number `mark` (no request outstanding was made before
    /// them).
    mutating func forgetEvictions(before mark: Int) {
        let drop = min(mark - evictionsForgotten, evictedIDs.count)
        guard drop > 0 else { return }
        evictionsForgotten += drop
        evictedIndex.removeAll()
        if drop == evictedIDs.count {
            evictedIDs.removeAll(keepingCapacity: true)
            evictedHashes.removeAll(keepingCapacity: true)
            return
        }
        evictedIDs.removeFirst(drop)
        evictedHashes.removeFirst(drop)
        for (p, hash) in evictedHashes.enumerated() { evictedIndex.insert(hash, position: p) }
    }

    /// Holds all but the `n` most recently used expanded accounts in compact form (see
    /// ``BadgeStream/compact(keeping:)``); an account too large for it stays expanded.
    mutating func compact(keeping n: Int) {
        tracksUse = true
        guard count > n else { return }
        for s in leastRecentlyUsed(count - n, onlyClean: false) {
            // Moved out of its slot, not copied (a copy retains every part of the account).
            var gone = vacate(s)
            if !compacted.insert(gone.account, as: gone.id) {
                // Too large for the compact form: it stays, counted as just used so that
                // the next compaction does not encode it again at once.
                useCounter &+= 1
                gone.lastUse = useCounter
                restore(gone, in: s)
            }
        }
    }

    /// The slots of the `count` least recently used accounts in memory (`onlyClean`: of
    /// those neither changed nor in a commit under way; fewer when fewer are). Accounts
    /// that share the cut-off's use count (loaded and never used: 0) all come with it.
    private func leastRecentlyUsed(_ count: Int, onlyClean: Bool) -> [Int] {
        // Flags read in place in the slot: the accounts are not touched.
        func eligible(_ s: Int) -> Bool {
            slots[s].live && (!onlyClean || (!slots[s].changed && !slots[s].inFlight))
        }
        var uses: [UInt64] = []
        uses.reserveCapacity(self.count)
        for s in slots.indices where eligible(s) { uses.append(slots[s].lastUse) }
        let excess = min(count, uses.count)
        guard excess > 0 else { return [] }
        // Selected, not sorted.
        let cutoff = Self.select(excess - 1, in: &uses)
        var out: [Int] = []
        out.reserveCapacity(excess)
        for s in slots.indices where slots[s].lastUse <= cutoff && eligible(s) { out.append(s) }
        return out
    }

    /// The `k`-th smallest of `values` (0-based), moving them around: quickselect, O(n) on
    /// average. `k` must be an index of `values`.
    ///
    /// The pivot is the median of three values at pseudo-random places (a fixed xorshift
    /// sequence, so a run is repeatable): slot order follows the order accounts came in and
    /// the free list's reuse, and a pivot taken at fixed places (first, middle, last) made
    /// that order quadratic, 7% of a whole stateless run's instructions (callgrind).
    static func select(_ k: Int, in values: inout [UInt64]) -> UInt64 {
        var low = 0, high = values.count - 1
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func place() -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return low + Int(state % UInt64(high - low + 1))
        }
        while low < high {
            let a = values[place()], b = values[place()], c = values[place()]
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

    // MARK: Coming into memory

    /// Adds a loaded account: compact when `compact`, else expanded; `stored`: read from a
    /// store it may be committed back to (its stored counts are its own). An id met twice
    /// (a file that repeats a key) keeps its last value, in one form only.
    mutating func addLoaded(_ account: Account, as id: String, compact: Bool, stored: Bool) {
        let hash = IDIndex.hash(id)
        if compact {
            tracksUse = true
            if compacted.insert(account, as: id) {
                if let s = slot(of: id, hash: hash) { remove(s) }
                return
            }
        }
        compacted.remove(id)
        if let s = slot(of: id, hash: hash) { remove(s) }
        insert(account, as: id, hash: hash, loaded: stored)
    }

    /// Takes accounts read ahead for the next batch (``AccountPrefetcher/collect()``),
    /// without those that came into memory or were evicted since they were requested.
    mutating func installPrefetched(_ ahead: consuming [String: Account?]) {
        installPrefetched(parts: [ReadAccounts(ahead)])
    }

    /// ``installPrefetched(_:)`` from the parts each reader read (``StorePrefetcher/collectParts()``),
    /// not merged first: no id is hashed here (each part carries its hashes), and each
    /// account is moved out of its part (not copied). `mark`: the ``evictionMark`` when they
    /// were requested (an account evicted from then on is left out); by default every
    /// eviction recorded counts.
    mutating func installPrefetched(parts: consuming [ReadAccounts], evictedSince mark: Int? = nil) {
        clearAhead()
        // Requested before a commit of a reconcile's numbers ended: they may lack them.
        if let mark, mark < readsStaleBefore { return }
        let mark = mark ?? evictionsForgotten
        // Each part taken out of the array (so that it is the only reference, and its
        // accounts move out of it in place), in order: an id in two parts keeps the first.
        parts.reverse()
        while var part = parts.popLast() {
            for i in part.ids.indices {
                let id = part.ids[i], hash = part.hashes[i]
                let stale =
                    slot(of: id, hash: hash) != nil
                    || evicted(id, hash: hash, since: mark)
                    || aheadIndex.find(hash, where: { aheadIDs[$0] == id }) != nil
                guard !stale else { continue }
                var account: Account? = nil
                swap(&account, &part.accounts[i])
                aheadIndex.insert(hash, position: aheadIDs.count)
                aheadIDs.append(id)
                aheadAccounts.append(.some(account))
                aheadInline.append(false)
            }
        }
    }

    /// Forgets every account read ahead or provided, and every failure to read one.
    mutating func clearAhead() {
        if aheadIDs.count > Self.aheadKept {
            // A fleet-wide `expire` loaded every due account: its tables are let go, not
            // kept (and their buckets zeroed) for every batch after it.
            aheadIDs = []
            aheadAccounts = []
            aheadInline = []
            aheadIndex = IDIndex()
        } else {
            aheadIDs.removeAll(keepingCapacity: true)
            aheadAccounts.removeAll(keepingCapacity: true)
            aheadInline.removeAll(keepingCapacity: true)
            aheadIndex.removeAll()
        }
        if !loadFailures.isEmpty { loadFailures.removeAll() }
    }

    /// The room the read accounts' table keeps (for tests of ``clearAhead()``).
    var aheadCapacity: Int { aheadIDs.capacity }

    /// The most accounts read for a batch whose tables are kept for the next: two batches'
    /// worth of lines (a read-ahead and the applying layer's own loads for one batch).
    static let aheadKept = 4096

    /// Adds account `id` (whose hash is `hash`), just read from the store by the applying
    /// layer (nil: the store has none), for the line that needs it; replaces what was read
    /// ahead as `id` before.
    mutating func provide(_ id: String, hash: Int, _ account: consuming Account?) {
        if let p = aheadIndex.find(hash, where: { aheadIDs[$0] == id }) {
            aheadAccounts[p] = .some(account)
            aheadInline[p] = true
            return
        }
        aheadIndex.insert(hash, position: aheadIDs.count)
        aheadIDs.append(id)
        aheadAccounts.append(.some(account))
        aheadInline.append(true)
    }

    /// Records that account `id` could not be read from the store: the line that needs it is
    /// rejected with `failure`.
    mutating func provideFailure(_ id: String, _ failure: StateFile.Failure) { loadFailures[id] = failure }

    /// Why account `id` could not be read, if the applying layer failed to read it.
    func loadFailure(_ id: String) -> StateFile.Failure? { loadFailures.isEmpty ? nil : loadFailures[id] }

    /// Whether account `id` is neither in memory nor read (ahead or by the applying layer),
    /// nor known to be unreadable: whether a store-backed stream needs it loaded before a
    /// line that uses it.
    func needsLoad(_ id: String, hash: Int) -> Bool {
        if slot(of: id, hash: hash) != nil { return false }
        if let p = aheadIndex.find(hash, where: { aheadIDs[$0] == id }), aheadAccounts[p] != nil { return false }
        if !compacted.isEmpty, compacted.contains(id) { return false }
        return loadFailure(id) == nil
    }

    /// The account read ahead or provided as `id` (whose hash is `hash`), taken out, and
    /// whether the applying layer loaded it (``provide(_:hash:_:)``): `.some(nil)` when the
    /// store has none; nil when it was not read.
    mutating func takePrefetched(_ id: String, hash: Int) -> (account: Account?, inline: Bool)? {
        guard let p = aheadIndex.find(hash, where: { aheadIDs[$0] == id }), let account = aheadAccounts[p].take() else {
            return nil
        }
        return (account, aheadInline[p])
    }

    // MARK: Undo

    /// Starts a batch: ``undoBatch()`` takes back what is applied from now on.
    mutating func beginBatch() { undo.removeAll(keepingCapacity: true) }

    /// With ``keepsUndo``: keeps account `id` as it is before the batch first changes it
    /// (`slot`: its slot, nil when it is not in memory yet and `before` is what it comes in as).
    mutating func keepForUndo(_ id: String, slot: Int?, before: Account? = nil) {
        guard keepsUndo, undo.index(forKey: id) == nil else { return }
        undo.updateValue(slot.map { slots[$0].account } ?? before, forKey: id)
    }

    /// Puts back every account the batch since ``beginBatch()`` touched, as it was before.
    mutating func undoBatch() {
        for (id, before) in undo { self[id] = before }
        undo.removeAll()
    }
}
