import BadgeFlow

/// What `filter` needs of a state that commits checkpoints (SQLite or RocksDB): its meta,
/// its rules, and the read-ahead and checkpointer that work beside the filter.
protocol DurableStore: AccountSource {
    /// The state's path.
    var path: String { get }
    /// The seq of the last checkpoint.
    var seq: Int { get }
    /// What the last checkpoint's lines were read from.
    var input: String { get }
    /// The number of accounts stored.
    var accountCount: Int { get }
    /// The rules the state recorded (nil: none).
    func recordedRules() throws(StateFile.Failure) -> RuleSet?
    /// Checks that every stored account fits `rules`.
    func checkFits(_ rules: RuleSet) throws(StateFile.Failure)
    /// Records `rules`.
    func recordRules(_ rules: RuleSet) throws(StateFile.Failure)
    /// Reads the accounts of the next batch ahead of it.
    func makePrefetcher(rules: RuleSet) throws(StateFile.Failure) -> any DurablePrefetcher
    /// Commits checkpoints on a thread of its own, recording `rules` when they differ.
    func makeCheckpointer(rules: RuleSet) throws(StateFile.Failure) -> any DurableCheckpointer
    /// Closes the store (after its prefetcher and checkpointer).
    func close()
}

/// A read-ahead of a ``DurableStore``.
protocol DurablePrefetcher: AccountPrefetcher {
    /// Closes it (before the store).
    func close()
}

/// The background checkpoints of a ``DurableStore``.
protocol DurableCheckpointer: AnyObject {
    var isPending: Bool { get }
    func begin(_ stream: inout BadgeStream, seq: Int, input: String)
    func finish(_ stream: inout BadgeStream) throws(StateFile.Failure)
    func close()
}

extension SQLitePrefetcher: DurablePrefetcher {}
extension SQLiteCheckpointer: DurableCheckpointer {}
extension RocksDBPrefetcher: DurablePrefetcher {}
extension RocksDBCheckpointer: DurableCheckpointer {}

extension SQLiteStore: DurableStore {
    func makePrefetcher(rules: RuleSet) throws(StateFile.Failure) -> any DurablePrefetcher {
        try SQLitePrefetcher(path: path, rules: rules)
    }

    func makeCheckpointer(rules: RuleSet) throws(StateFile.Failure) -> any DurableCheckpointer {
        // The writing connection gets the large page cache; this one only loads an account
        // now and then (what the read-ahead did not).
        setCacheSize(kib: 8 << 10)
        let checkpointer = try SQLiteCheckpointer(path: path)
        checkpointer.recordRules(rules)
        return checkpointer
    }
}

extension RocksDBStore: DurableStore {
    // One handle for the filter's threads: RocksDB lets one process open a database once.
    func makePrefetcher(rules: RuleSet) throws(StateFile.Failure) -> any DurablePrefetcher {
        RocksDBPrefetcher(store: self, rules: rules)
    }

    func makeCheckpointer(rules: RuleSet) throws(StateFile.Failure) -> any DurableCheckpointer {
        RocksDBCheckpointer(store: self)
    }
}

/// The kinds of state a path names, by its extension.
enum StateKind: Equatable {
    case json, sqlite, rocksdb

    init(_ path: String) {
        self = RocksDBStore.isRocksDBPath(path) ? .rocksdb : SQLiteStore.isSQLitePath(path) ? .sqlite : .json
    }

    /// SQLite or RocksDB: committed at checkpoints.
    var isDurable: Bool { self != .json }

    /// Opens a durable state at `path` (nil for JSON).
    static func open(_ path: String) throws(StateFile.Failure) -> (any DurableStore)? {
        switch StateKind(path) {
        case .json: return nil
        case .sqlite: return try SQLiteStore(path: path)
        case .rocksdb: return try RocksDBStore(path: path)
        }
    }
}
