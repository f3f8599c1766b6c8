/// A state in a RocksDB database (`FILE.rocksdb`, a folder) behind the ``StateStore`` seam:
/// one handle shared by the filter's threads (RocksDB lets a process open a database once),
/// which loads accounts before the batch that first uses them, and which a run's ``FilterPipeline`` also hands to two
/// ``Worker`` threads that read the next batch's accounts ahead with `MultiGet`
/// (``StorePrefetcher``) and to another that commits each checkpoint as one `WriteBatch`
/// (``StoreCheckpointer``). RocksDB's reads are thread-safe and see every committed batch,
/// so an account read ahead is never older than its last checkpoint.
package final class RocksDBStateStore: DatabaseStateStore {
    package static var name: String { "rocksdb" }

    package let path: String
    package let store: RocksDBStore

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
        try attachedStream(rules: rules)
    }

    /// The shared handle (closed with the store).
    package func commitConnection() throws(StateFile.Failure) -> StoreConnection? {
        StoreConnection(store, owned: false)
    }

    /// The shared handle, for two readers (closed with the store).
    package func readConnections() throws(StateFile.Failure) -> [StoreConnection] {
        [StoreConnection(store, owned: false), StoreConnection(store, owned: false)]
    }

    /// Sets the block cache of the writer's handle (`filter --block-cache`).
    package func setBlockCache(bytes: Int) -> Bool {
        store.setBlockCache(bytes: bytes)
        return true
    }

    deinit { close() }
}

extension RocksDBStore: AccountStore {
    /// Commits a checkpoint as one `WriteBatch` (``AccountStore``).
    package func commitCheckpoint(
        _ changed: [ChangedAccount], owed: [Deliveries.Owed], seq: Int, input: String, rules: RuleSet
    ) throws(StateFile.Failure) -> [(String, (Int, Int))] {
        try commit(changed, owed: owed, seq: seq, input: input, rules: rules)
    }
}
