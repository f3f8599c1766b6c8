/// A state in an SQLite database (`FILE.sqlite` or `FILE.db`) behind the ``StateStore`` seam,
/// and the one owner of its connections and threads.
///
/// The SQLite path: four connections (`SQLiteConnection`, each with its statements), each
/// used by one thread at a time. The applying thread holds a read-write one that loads,
/// before a batch, the accounts it uses that the read-ahead did not bring. Two read-only ones
/// (``readConnections()``, read by a ``StorePrefetcher``) read and decode the next batch's
/// accounts, half each, while the batch before is applied; one read-write one
/// (``commitConnection()``, a ``StoreCheckpointer``'s) encodes and commits each checkpoint's
/// changed accounts in key order. The store opens those three and starts no thread: the
/// run's ``FilterPipeline`` uses each on a ``Worker`` of its own, and closes the read-only
/// ones first (the last connection to close removes the WAL files, which a read-only one
/// cannot), then the committing one, then this store.
package final class SQLiteStateStore: DatabaseStateStore {
    package static var name: String { "sqlite" }

    package let path: String
    package let store: SQLiteStore

    package init(path: String, readOnly: Bool) throws(StateFile.Failure) {
        // A reader never creates a database.
        if readOnly, !FileIO.exists(path) { throw StateFile.Failure(file: path, at: "", message: "no such state file") }
        self.path = path
        store = try SQLiteStore(path: path, readOnly: readOnly)
    }

    /// SQLite's `data_version` on this store's connection (``SQLiteStore/dataVersion()``).
    package func changeCounter() -> Int64? { store.dataVersion() }

    package func info() throws(StateFile.Failure) -> StateInfo {
        try StateInfo(
            format: Self.name, version: "\(store.meta["version"] ?? String(StateFile.version)) (schema \(store.meta["schema"] ?? "?"))",
            accounts: store.accountCount, devices: store.deviceCount, marks: store.markCount, resume: resumePoint,
            size: StateFormat.size(path) + StateFormat.size(path + "-wal"),
            partition: StatePartition(meta: store.meta, file: path), records: StateRecords(meta: store.meta))
    }

    package func attach(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream {
        let stream = try attachedStream(rules: rules)
        // Checkpoints commit on their own thread and connection, which gets the large page
        // cache; this one only loads an account now and then (what the read-ahead did not).
        store.setCacheSize(kib: 8 << 10)
        return stream
    }

    /// A read-write connection of the run's own.
    package func commitConnection() throws(StateFile.Failure) -> StoreConnection? {
        StoreConnection(try SQLiteStore(path: path), owned: true)
    }

    /// Two read-only connections of the run's own: decoding accounts is most of a load and
    /// needs a core, and with two readers a batch's accounts are read in about half the time
    /// when a core is free.
    package func readConnections() throws(StateFile.Failure) -> [StoreConnection] {
        try Self.readConnections(path: path)
    }

    /// `readers` read-only connections to the state at `path`, with 16 MiB of page cache in
    /// all (as one reader had).
    package static func readConnections(path: String, readers: Int = 2) throws(StateFile.Failure) -> [StoreConnection] {
        var connections: [StoreConnection] = []
        for _ in 0..<max(readers, 1) {
            let store: SQLiteStore
            do throws(StateFile.Failure) { store = try SQLiteStore(path: path, readOnly: true) } catch {
                for opened in connections { opened.store.close() }
                throw error
            }
            store.setCacheSize(kib: (16 << 10) / max(readers, 1))
            connections.append(StoreConnection(store, owned: true))
        }
        return connections
    }

    deinit { close() }
}

extension SQLiteStore: AccountStore {
    /// Reads the accounts `ids` in one read transaction (``AccountStore``).
    package func readAccounts(_ ids: [String], rules: RuleSet) -> ReadAccounts {
        var found = ReadAccounts(capacity: ids.count)
        read {
            for id in ids {
                do throws(StateFile.Failure) { found.append(id, try loadAccount(id, rules: rules)) } catch {}
            }
        }
        return found
    }

    /// Commits a checkpoint in key order, each row with its cache (``AccountStore``).
    package func commitCheckpoint(
        _ changed: [ChangedAccount], owed: [Deliveries.Owed], seq: Int, input: String, rules: RuleSet
    ) throws(StateFile.Failure) -> [(String, (Int, Int))] {
        try commit(
            changed, seq: seq, input: input, cacheSeed: rules.rowCacheSeed, rules: rules.sourceValue?.serialized(pretty: true),
            owed: owed, ruleSet: rules)
    }
}
