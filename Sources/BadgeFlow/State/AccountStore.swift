/// What the database of a checkpointing format offers (each format's store in its folder):
/// one protocol over both, so that the read-ahead (``StorePrefetcher``), the commits
/// (``StoreCheckpointer``) and the forwarding half of ``StateStore``
/// (``DatabaseStateStore``) are written once.
package protocol AccountStore: AccountSource {
    /// The database's path.
    var path: String { get }
    /// The number of input lines whose results were written when the last checkpoint committed.
    var seq: Int { get }
    /// What those lines were read from; empty when unknown.
    var input: String { get }
    /// The number of accounts stored.
    var accountCount: Int { get }
    /// The number of devices of all stored accounts.
    var deviceCount: Int { get }
    /// The number of marks of all stored accounts.
    var markCount: Int { get }

    /// The rules the state was written with; nil when none were recorded.
    func recordedRules() throws(StateFile.Failure) -> RuleSet?
    /// Records `rules` as the state's rules.
    func recordRules(_ rules: RuleSet) throws(StateFile.Failure)
    /// Checks that every stored account fits `rules`.
    func checkFits(_ rules: RuleSet) throws(StateFile.Failure)
    /// Reads the accounts `ids`, in order: each id with its account, or with nil when the
    /// state has none. An id that could not be read is left out (the applying thread loads
    /// it again before the batch, and the line that needs it reports the error).
    func readAccounts(_ ids: [String], rules: RuleSet) -> ReadAccounts
    /// The stored accounts (`ids`: only these) in a new stream; `compact`: held compactly.
    func stream(rules: RuleSet, accounts ids: [String]?, compact: Bool) throws(StateFile.Failure) -> BadgeStream
    /// Writes every account of `stream` (`state convert`).
    func store(_ stream: BadgeStream) throws(StateFile.Failure)
    /// The meta entries (`schema` or `layout`, `seq`, `rules`, `partition.*` …).
    var meta: [String: String] { get }
    /// Records `partition` (a part of a split state) as its meta entries
    /// (``StatePartition/metaRows``).
    func recordPartition(_ partition: StatePartition) throws(StateFile.Failure)
    /// Writes the meta entries `entries` in one transaction (``StateRecords/meta``).
    func recordMeta(_ entries: [String: String]) throws(StateFile.Failure)
    /// Commits a checkpoint: `changed`, the numbers `owed` to stored accounts by fleet-wide
    /// `reconcile` lines (each such row read, given its devices' numbers and written back;
    /// `changed` written after them), and `seq` read from `input`, and `rules` when they are
    /// not the recorded ones, in one transaction; returns each changed account's stored
    /// device and mark counts.
    func commitCheckpoint(
        _ changed: [ChangedAccount], owed: [Deliveries.Owed], seq: Int, input: String, rules: RuleSet
    ) throws(StateFile.Failure) -> [(String, (Int, Int))]
    /// Closes the database (or this connection to it).
    func close()
}

/// Accounts handed to another thread to be freed there (``StorePrefetcher/request(_:releasing:)``).
///
/// Unchecked Sendable: the applying thread gives up every reference to the accounts when it
/// makes the box, and only the thread that calls ``now()`` touches them after.
private final class Release: @unchecked Sendable {
    private var accounts: [AccountBox] = []

    /// Takes `accounts` (leaving it empty).
    init(_ accounts: inout [AccountBox]) { swap(&self.accounts, &accounts) }

    /// Frees the accounts.
    func now() { accounts = [] }
}

/// A connection a filter run commits to or reads ahead from (``StateStore/commitConnection()``,
/// ``StateStore/readConnections()``): a passive handle, which the run's ``FilterPipeline``
/// drives from a ``Worker`` it makes. A connection of the run's own (SQLite's) is used on
/// that one thread; a shared handle (RocksDB's, thread-safe) by every thread of the run.
package struct StoreConnection: Sendable {
    /// The database, or this connection to it.
    package let store: any AccountStore
    /// Whether the connection is the run's own (closed once the thread that uses it ended),
    /// or the state's shared handle (closed with the state).
    package let owned: Bool

    /// A connection; `owned`: closed by whoever ends its thread.
    package init(_ store: any AccountStore, owned: Bool) {
        self.store = store
        self.owned = owned
    }
}

/// Reads the accounts of the next batches from a state's database on threads it is given
/// (two readers by default, each with part of a large request; up to ``requestsAhead``
/// requests queued, each reader taking its parts in order), while the filter applies the
/// batches before (``AccountPrefetcher``). Decoding an account is the larger part of loading
/// it, and it happens on the readers' threads too.
///
/// Each reader is a ``Worker`` (made by the ``FilterPipeline``, which owns every thread of a
/// run) with a ``StoreConnection`` to read from: a format gives each its own read-only
/// connection (SQLite: in WAL mode a reader sees the last commit and never blocks the
/// writer), or the writer's handle when its reads are thread-safe. Each reader has its own
/// copy of the rules, so decoding touches no reference count another thread uses.
/// `request`/`collect` are called by the applying thread alone.
package final class StorePrefetcher: PartedAccountPrefetcher {
    private let readers: [StoreConnection]
    private let workers: [Worker<ReadAccounts>]
    private let rules: [RuleSet]
    private var closed = false
    /// Per request not collected yet, oldest first: how many readers have a part of it.
    private var partsPending: [Int] = []

    /// The requests that may be under way at once: a reader starts the next one as soon as
    /// it ends one, while the applying thread is still on the batch before.
    package var requestsAhead: Int { 2 }

    /// Requests of fewer accounts than this go to one reader: splitting them would cost
    /// more hand-overs than it saves.
    static var splitAbove: Int { 256 }

    /// Reads through each of `readers` (at least one) on the matching worker of `workers`
    /// (one each); ``close()`` ends the workers, then closes the connections they own.
    package init(readers: [StoreConnection], workers: [Worker<ReadAccounts>], rules: RuleSet) {
        precondition(!readers.isEmpty && readers.count == workers.count, "StorePrefetcher: one worker a reader")
        self.readers = readers
        self.workers = workers
        self.rules = readers.map { _ in rules.independentCopy() }
    }

    /// Starts reading `ids`, after the requests before it; at most ``requestsAhead`` may be
    /// outstanding (``collect()`` takes the oldest).
    package func request(_ ids: [String]) { request(ids, releasing: []) }

    /// Starts reading `ids` and freeing `released` (accounts that left memory), each reader
    /// its share of both, the accounts freed first: the memory they held is then at hand
    /// for the accounts read, on the same thread (mimalloc frees fastest on the thread that
    /// allocated, and readers allocated most of them).
    package func request(_ ids: [String], releasing released: consuming [AccountBox]) {
        var released = consume released
        // Split when either is large: one reader freeing a whole eviction would hold up the
        // collect while the other idles.
        precondition(partsPending.count < requestsAhead, "StorePrefetcher: collect() an earlier request first")
        let parts = ids.count < Self.splitAbove && released.count < Self.splitAbove ? 1 : workers.count
        partsPending.append(parts)
        let size = (ids.count + parts - 1) / parts
        let share = (released.count + parts - 1) / parts
        for n in 0..<parts {
            let part = Array(ids[min(n * size, ids.count)..<min((n + 1) * size, ids.count)])
            // Moved, never copied: the applying thread keeps no reference to them (the last
            // reader's share is what is left of the array).
            var mine: [AccountBox] = []
            if n == parts - 1 {
                swap(&mine, &released)
            } else {
                mine.reserveCapacity(share)
                while mine.count < share, let a = released.popLast() { mine.append(a) }
            }
            let freed = Release(&mine)
            let store = readers[n].store, rules = rules[n]
            workers[n].start(
                {
                    freed.now()
                    return store.readAccounts(part, rules: rules)
                }, limit: requestsAhead)
        }
    }

    /// Waits for the oldest outstanding request's accounts (empty when there is none).
    package func collect() -> [String: Account?] {
        var all: [String: Account?] = [:]
        for part in collectParts() { part.add(to: &all) }
        return all
    }

    /// Waits for the oldest outstanding request's accounts, as each reader read its part
    /// (none when there is no request). Each reader runs its parts in the order requested,
    /// so the first `n` readers' oldest outputs are this request's.
    package func collectParts() -> [ReadAccounts] {
        guard !partsPending.isEmpty else { return [] }
        let n = partsPending.removeFirst()
        var parts: [ReadAccounts] = []
        for worker in workers.prefix(n) {
            guard let found = worker.wait() else { continue }
            parts.append(found)
        }
        return parts
    }

    /// Whether the readers' threads have ended (for tests, as ``Worker/threadEnded``).
    package var threadsEnded: @Sendable () -> Bool {
        let ended = workers.map(\.threadEnded)
        return { ended.allSatisfy { $0() } }
    }

    /// Waits for the requests under way (their accounts are dropped), ends the workers'
    /// threads and closes the connections of their own.
    /// Close an SQLite state's readers before its writing connections: the last connection
    /// to close removes the WAL files, and a read-only one cannot.
    package func close() {
        guard !closed else { return }
        closed = true
        partsPending = []
        for worker in workers { worker.close() }
        for reader in readers where reader.owned { reader.store.close() }
    }

    deinit { close() }
}

/// Commits checkpoints of a state's database through a ``StoreConnection`` on the ``Worker``
/// the run's ``FilterPipeline`` gives it (a thread of the commits' own), so that encoding
/// the changed accounts, writing them and waiting for the disk overlap the filter.
///
/// ``begin(_:seq:input:)`` takes the changed accounts from the stream (their boxes, which the
/// stream copies an account out of before changing it until the commit has ended) and
/// returns at once; ``finish(_:)``
/// waits for that commit. An account may leave memory only once its last change is
/// committed, or loading it again would read an older row: the accounts of the commit under
/// way are marked in the stream, and ``BadgeStream/evict(keeping:)`` passes them over until
/// `finish` records the commit, so evicting others need not wait for it. Each checkpoint
/// finishes the previous commit before it begins the next.
///
/// What a commit records (`seq`) is never ahead of the results written: the caller begins
/// a commit only after writing the results up to `seq`. The stream's rules are recorded
/// with a commit when they differ from the recorded ones (rules built in code have no JSON
/// and are not recorded).
package final class StoreCheckpointer: Checkpointer {
    /// What a commit's job returns: each changed account's stored counts and the accounts
    /// stored, or why it failed.
    package typealias Output = Result<(stored: [(String, (Int, Int))], accounts: Int), StateFile.Failure>

    private let connection: StoreConnection
    private let worker: Worker<Output>
    private var closed = false
    /// The ids of the accounts of the commit under way.
    private var pendingIDs: [String] = []

    /// Commits through `connection` on `worker` (the pipeline's); ``close()`` ends the
    /// worker, then closes the connection when it is the checkpointer's own.
    package init(connection: StoreConnection, worker: Worker<Output>) {
        self.connection = connection
        self.worker = worker
    }

    /// The accounts the state holds after the last commit that finished (nil: none yet).
    package private(set) var storedAccounts: Int?

    /// Whether a commit was begun and not yet finished.
    package var isPending: Bool { worker.isPending }

    /// Takes the accounts of `stream` changed since the last checkpoint (they then count
    /// as unchanged) and starts committing them with `seq`, read from `input`.
    ///
    /// Call ``finish(_:)`` for the previous commit first.
    package func begin(_ stream: inout BadgeStream, seq: Int, input: String) {
        precondition(!isPending, "StoreCheckpointer: finish() the previous commit first")
        let changed = stream.beginCommit()
        // What fleet-wide reconcile lines up to `seq` sent to accounts only in the store.
        let owed = stream.table.beginDeliveries()
        pendingIDs = changed.map(\.id)
        let rules = stream.rules, store = connection.store
        worker.start {
            do throws(StateFile.Failure) {
                return .success(
                    (try store.commitCheckpoint(changed, owed: owed, seq: seq, input: input, rules: rules), store.accountCount))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Waits for the commit begun last (nothing when none is pending) and records in
    /// `stream` what is now stored.
    ///
    /// - Throws: `StateFile.Failure` when the commit failed; the database then holds the
    ///   previous checkpoint, and the commit's accounts count as changed again in `stream`
    ///   (a later commit writes them).
    package func finish(_ stream: inout BadgeStream) throws(StateFile.Failure) {
        guard let outcome = worker.wait() else { return }
        defer { pendingIDs = [] }
        switch outcome {
        case .success(let done):
            storedAccounts = done.accounts
            stream.endCommit(done.stored)
            stream.table.endDeliveries()
        case .failure(let failure):
            stream.abortCommit(pendingIDs)
            stream.table.abortDeliveries()
            throw failure
        }
    }

    /// Whether the commit thread has ended (for tests, as ``Worker/threadEnded``).
    package var threadEnded: @Sendable () -> Bool { worker.threadEnded }

    /// Waits for a pending commit (whose outcome is dropped), ends the worker's thread and
    /// closes the connection when it is its own.
    package func close() {
        guard !closed else { return }
        closed = true
        worker.close()
        if connection.owned { connection.store.close() }
    }

    deinit { close() }
}

/// A checkpointing state over an ``AccountStore``: the calls that only forward to the
/// database are written here once; a format keeps what differs (opening, ``StateStore/attach(rules:)``,
/// its connections, ``StateStore/info()``, closing). It starts no thread: a filter run's
/// ``FilterPipeline`` runs the commits and reads through the connections it hands out.
package protocol DatabaseStateStore: CheckpointingStateStore {
    associatedtype Store: AccountStore
    /// The database the applying thread (or `tree`, `state`) reads and loads from.
    var store: Store { get }
}

extension DatabaseStateStore {
    package var storedAccounts: Int? { store.accountCount }

    /// The database: the applying thread loads accounts from it.
    package var accountSource: (any AccountSource)? { store }

    /// Closes the database; the pipeline closed the connections of its own before, and
    /// ended the threads that used this one. Later calls do nothing.
    package func close() {
        store.close()
    }

    package func recordedRules() throws(StateFile.Failure) -> RuleSet? { try store.recordedRules() }

    package func record(_ records: StateRecords) throws(StateFile.Failure) { try store.recordMeta(records.meta) }

    /// Records `point` as the state's committed seq and input, with no account (`state
    /// convert` keeps a converted state's resume point).
    package func recordResume(_ point: ResumePoint, rules: RuleSet) throws(StateFile.Failure) {
        _ = try store.commitCheckpoint([], owed: [], seq: point.seq, input: point.input, rules: rules)
    }

    package func checkFits(_ rules: RuleSet) throws(StateFile.Failure) {
        if store.accountCount > 0 { try store.checkFits(rules) }
    }

    package var resumePoint: ResumePoint? { ResumePoint(seq: store.seq, input: store.input) }

    package func account(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        try store.loadAccount(id, rules: rules)
    }

    package func stream(rules: RuleSet, accounts ids: [String]?, compact: Bool) throws(StateFile.Failure) -> BadgeStream {
        var stream = try store.stream(rules: rules, accounts: ids, compact: compact)
        stream.partition = try StatePartition(meta: store.meta, file: path)
        stream.records = StateRecords(meta: store.meta)
        return stream
    }

    package func write(_ stream: BadgeStream) throws(StateFile.Failure) {
        try store.store(stream)
        if let partition = stream.partition { try store.recordPartition(partition) }
        try store.recordMeta(stream.records.meta)
    }

    /// The stream a filter runs on: a store-backed one, whose accounts the pipeline loads
    /// from ``store`` (``accountSource``) before first use. A new state records `rules`
    /// now; other rules that fit, with the first checkpoint.
    func attachedStream(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream {
        if try store.recordedRules() == nil { try store.recordRules(rules) }
        var stream = BadgeStream(rules: rules)
        stream.isStoreBacked = true
        stream.records = StateRecords(meta: store.meta)
        return stream
    }
}
