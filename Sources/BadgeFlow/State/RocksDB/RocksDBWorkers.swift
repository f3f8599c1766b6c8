import Dispatch

/// One job at a time on a thread of its own: what ``RocksDBPrefetcher`` and
/// ``RocksDBCheckpointer`` run on. A job's output is written on `queue` and read by
/// ``wait()`` after `done` is signalled, which orders the two.
final class RocksDBWorker<Output: Sendable>: @unchecked Sendable {
    private let queue: DispatchQueue
    private let done = DispatchSemaphore(value: 0)
    private var output: Output?
    /// Whether a job was started and its output not yet taken.
    private(set) var isPending = false

    init(label: String) { queue = DispatchQueue(label: label) }

    /// Starts `job`; the previous job's output must have been taken (``wait()``).
    func start(_ job: @escaping @Sendable () -> Output) {
        precondition(!isPending, "RocksDBWorker: wait() for the previous job first")
        isPending = true
        queue.async { [self] in
            output = job()
            done.signal()
        }
    }

    /// Waits for the job started last and takes its output; nil when none is pending.
    func wait() -> Output? {
        guard isPending else { return nil }
        done.wait()
        isPending = false
        defer { output = nil }
        return output
    }

    deinit {
        if isPending { done.wait() }
    }
}

/// Reads the accounts of the next batch from a RocksDB state (`MultiGet`) on its own
/// threads, while the filter applies the batch before (``AccountPrefetcher``).
///
/// The threads share the writer's handle: RocksDB reads are thread-safe and see every
/// committed batch, so an account read here is never older than its last checkpoint.
public final class RocksDBPrefetcher: AccountPrefetcher, @unchecked Sendable {
    private let store: RocksDBStore
    private let workers: [RocksDBWorker<[String: Account?]>]
    /// The rules for each reader (each its own copy: no shared reference counts).
    private let rules: [RuleSet]

    /// Requests of fewer accounts than this go to one reader.
    static let splitAbove = 256

    /// Reads from `store` with `readers` threads (two by default).
    public init(store: RocksDBStore, rules: RuleSet, readers: Int = 2) {
        self.store = store
        let workers = (0..<max(readers, 1)).map { RocksDBWorker<[String: Account?]>(label: "badgeflow.rocksdb.prefetch.\($0)") }
        self.workers = workers
        self.rules = workers.map { _ in rules.independentCopy() }
    }

    /// Starts reading `ids`; at most one request is outstanding (call ``collect()`` first).
    public func request(_ ids: [String]) {
        let parts = ids.count < Self.splitAbove ? 1 : workers.count
        let size = (ids.count + parts - 1) / parts
        for (n, worker) in workers.prefix(parts).enumerated() {
            let part = Array(ids[min(n * size, ids.count)..<min((n + 1) * size, ids.count)])
            let rules = rules[n]
            let store = store
            worker.start { store.loadAccounts(part, rules: rules) }
        }
    }

    /// Waits for the last request's accounts (empty when there was none).
    public func collect() -> [String: Account?] {
        var all: [String: Account?] = [:]
        for worker in workers {
            guard let found = worker.wait() else { continue }
            if all.isEmpty { all = found } else { all.merge(found) { a, _ in a } }
        }
        return all
    }

    /// Waits for the request under way (the store stays open: its owner closes it).
    public func close() { for worker in workers { _ = worker.wait() } }
}

/// Commits checkpoints of a RocksDB state on its own thread, so that encoding the changed
/// accounts and writing the batch overlap the filter; the same contract as
/// `SQLiteCheckpointer` (an account stays in memory while its commit is under way, and
/// what a commit records is never ahead of the results written).
public final class RocksDBCheckpointer: @unchecked Sendable {
    private let store: RocksDBStore
    private let worker = RocksDBWorker<Result<[(String, (Int, Int))], StateFile.Failure>>(label: "badgeflow.rocksdb.checkpoint")
    /// The ids of the accounts of the commit under way.
    private var pendingIDs: [String] = []

    /// Commits to `store` (which the caller closes, after ``close()``).
    public init(store: RocksDBStore) { self.store = store }

    /// Whether a commit was begun and not yet finished.
    public var isPending: Bool { worker.isPending }

    /// Takes the accounts of `stream` changed since the last checkpoint and starts
    /// committing them with `seq`, read from `input`, and the stream's rules when the state
    /// has not recorded them. Call ``finish(_:)`` for the previous commit first.
    public func begin(_ stream: inout BadgeStream, seq: Int, input: String) {
        precondition(!isPending, "RocksDBCheckpointer: finish() the previous commit first")
        let changed = stream.beginCommit()
        pendingIDs = changed.map(\.id)
        let rules = stream.rules
        let store = store
        worker.start {
            do throws(StateFile.Failure) {
                return .success(try store.commit(changed, seq: seq, input: input, rules: rules))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Waits for the commit begun last (nothing when none is pending) and records in
    /// `stream` what is now stored.
    ///
    /// - Throws: `StateFile.Failure` when the commit failed; the state then holds the
    ///   previous checkpoint, and the commit's accounts count as changed again.
    public func finish(_ stream: inout BadgeStream) throws(StateFile.Failure) {
        guard let outcome = worker.wait() else { return }
        defer { pendingIDs = [] }
        switch outcome {
        case .success(let stored):
            stream.endCommit(stored)
        case .failure(let failure):
            stream.abortCommit(pendingIDs)
            throw failure
        }
    }

    /// Waits for a pending commit, whose outcome is dropped.
    public func close() { _ = worker.wait() }
}
