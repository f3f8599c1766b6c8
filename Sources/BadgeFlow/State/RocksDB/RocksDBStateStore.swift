/// A state in a RocksDB database (`FILE.rocksdb`, a folder) behind the ``StateStore`` seam:
/// one handle shared by the filter's threads (RocksDB lets a process open a database once),
/// which loads accounts on first use, reads the next batch's accounts ahead with `MultiGet`
/// on two ``Worker`` threads (``StorePrefetcher``) and commits each checkpoint as one
/// `WriteBatch` on another (``StoreCheckpointer``).
package final class RocksDBStateStore: DatabaseStateStore {
    package static var name: String { "rocksdb" }

    package let path: String
    package let store: RocksDBStore
    package private(set) var committer: RocksDBCheckpointer?
    package private(set) var reader: RocksDBPrefetcher?
    /// The rules the filter runs under (``attach(rules:)``).
    private var rules = RuleSet.builtIn

    package init(path: String, readOnly: Bool) throws(StateFile.Failure) {
        self.path = path
        store = try RocksDBStore(path: path, readOnly: readOnly)
    }

    package func info() throws(StateFile.Failure) -> StateInfo {
        try StateInfo(
            format: Self.name, version: "\(store.meta["version"] ?? String(StateFile.version)) (layout \(store.meta["layout"] ?? "?"))",
            accounts: store.accountCount, devices: store.deviceCount, marks: store.markCount, resume: resumePoint,
            size: store.size,
            partition: StatePartition(meta: store.meta, file: path), records: StateRecords(meta: store.meta))
    }

    package func attach(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream {
        let stream = try attachedStream(rules: rules)
        self.rules = rules
        committer = RocksDBCheckpointer(store: store)
        return stream
    }

    package func readAhead() throws(StateFile.Failure) -> (any AccountPrefetcher)? {
        reader = RocksDBPrefetcher(store: store, rules: rules)
        return reader
    }

    /// Sets the block cache of the writer's handle (`filter --block-cache`).
    package func setBlockCache(bytes: Int) -> Bool {
        store.setBlockCache(bytes: bytes)
        return true
    }

    deinit { close() }
}

/// The read-ahead of a RocksDB state: threads that share the writer's handle (RocksDB's
/// reads are thread-safe and see every committed batch, so an account read here is never
/// older than its last checkpoint).
package typealias RocksDBPrefetcher = StorePrefetcher<RocksDBStore>

extension StorePrefetcher where Store == RocksDBStore {
    /// Reads from `store` with `readers` threads (two by default); the store stays open at
    /// ``close()``: its owner closes it.
    package convenience init(store: RocksDBStore, rules: RuleSet, readers: Int = 2) {
        self.init(readers: Array(repeating: store, count: max(readers, 1)), rules: rules, ownsReaders: false)
    }
}

/// The commits of a RocksDB state: the writer's handle, on a thread of its own.
package typealias RocksDBCheckpointer = StoreCheckpointer<RocksDBStore>

extension StoreCheckpointer where Store == RocksDBStore {
    /// Commits to `store`, which the caller closes after ``close()``.
    package convenience init(store: RocksDBStore) { self.init(store: store, ownsStore: false) }
}

extension RocksDBStore: AccountStore {
    /// Commits a checkpoint as one `WriteBatch` (``AccountStore``).
    package func commitCheckpoint(
        _ changed: [ChangedAccount], owed: [Deliveries.Owed], seq: Int, input: String, rules: RuleSet
    ) throws(StateFile.Failure) -> [(String, (Int, Int))] {
        try commit(changed, owed: owed, seq: seq, input: input, rules: rules)
    }
}
