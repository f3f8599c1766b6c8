/// A state in an SQLite database (`FILE.sqlite` or `FILE.db`) behind the ``StateStore`` seam,
/// and the one owner of its connections and threads.
///
/// The SQLite path: four connections (`SQLiteConnection`, each with its statements), each
/// used by one thread at a time. The applying thread holds a read-write one that loads an
/// account on first use (what the read-ahead did not bring). Two read-only ones
/// (``StorePrefetcher``) read and decode the next batch's accounts, half each, while the
/// batch before is applied; one read-write one (``StoreCheckpointer``) encodes and commits
/// each checkpoint's changed accounts in key order. Each of those three is used only on the
/// thread of its own ``Worker``, one job at a time; the hand-off is the job: the applying
/// thread starts it with what it needs (ids, or the boxes of the changed accounts, not
/// changed in place until the commit has ended: ``AccountBox``) and later waits for its
/// output under the worker's lock, which orders the two.
/// ``close()`` closes the read-only connections first (the last connection to close
/// removes the WAL files, which a read-only one cannot).
package final class SQLiteStateStore: DatabaseStateStore {
    package static var name: String { "sqlite" }

    package let path: String
    package let store: SQLiteStore
    package private(set) var committer: StoreCheckpointer<SQLiteStore>?
    package private(set) var reader: StorePrefetcher<SQLiteStore>?
    /// The rules the filter runs under (``attach(rules:)``).
    private var rules = RuleSet.builtIn

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
        self.rules = rules
        // Checkpoints commit on their own thread and connection, which gets the large page
        // cache; this one only loads an account now and then (what the read-ahead did not).
        store.setCacheSize(kib: 8 << 10)
        committer = try SQLiteCheckpointer(path: path)
        return stream
    }

    package func readAhead() throws(StateFile.Failure) -> (any AccountPrefetcher)? {
        // Accounts of the next batch are read and decoded while this one is applied.
        reader = try SQLitePrefetcher(path: path, rules: rules)
        return reader
    }

    deinit { close() }
}

/// The read-ahead of an SQLite state: read-only connections of its own.
package typealias SQLitePrefetcher = StorePrefetcher<SQLiteStore>

extension StorePrefetcher where Store == SQLiteStore {
    /// Opens `readers` read-only connections (two by default) to the state at `path`, closed
    /// with the prefetcher.
    ///
    /// Decoding accounts is most of a load and needs a core: with two readers a batch's
    /// accounts are read in about half the time when a core is free.
    ///
    /// - Throws: `StateFile.Failure` when the database cannot be opened.
    package convenience init(path: String, rules: RuleSet, readers: Int = 2) throws(StateFile.Failure) {
        var stores: [SQLiteStore] = []
        for _ in 0..<max(readers, 1) {
            let store = try SQLiteStore(path: path, readOnly: true)
            // 16 MiB of page cache in all, as one reader had.
            store.setCacheSize(kib: (16 << 10) / max(readers, 1))
            stores.append(store)
        }
        self.init(readers: stores, rules: rules, ownsReaders: true)
    }
}

/// The commits of an SQLite state: a read-write connection of its own.
package typealias SQLiteCheckpointer = StoreCheckpointer<SQLiteStore>

extension StoreCheckpointer where Store == SQLiteStore {
    /// Opens its own read-write connection to the state at `path`, closed with the
    /// checkpointer.
    ///
    /// - Throws: `StateFile.Failure` when the database cannot be opened.
    package convenience init(path: String) throws(StateFile.Failure) {
        self.init(store: try SQLiteStore(path: path), ownsStore: true)
    }
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
