/// A state in a RocksDB database (`FILE.rocksdb`, a folder) behind the ``StateStore`` seam:
/// one handle shared by the filter's threads (RocksDB lets a process open a database once),
/// which loads accounts on first use, reads the next batch's accounts ahead with `MultiGet`
/// (`RocksDBPrefetcher`) and commits each checkpoint as one `WriteBatch` on its own thread
/// (`RocksDBCheckpointer`).
package final class RocksDBStateStore: CheckpointingStateStore {
    package static func handles(_ path: String) -> Bool { RocksDBStore.isRocksDBPath(path) }
    package static var name: String { "rocksdb" }

    package let path: String
    private let store: RocksDBStore
    private var committer: RocksDBCheckpointer?
    package var checkpointer: (any Checkpointer)? { committer }
    private var reader: RocksDBPrefetcher?
    private var closed = false
    /// The rules the filter runs under (``attach(rules:)``).
    private var rules = RuleSet.builtIn

    package init(path: String, readOnly: Bool) throws(StateFile.Failure) {
        self.path = path
        store = try RocksDBStore(path: path, readOnly: readOnly)
    }

    package func recordedRules() throws(StateFile.Failure) -> RuleSet? { try store.recordedRules() }

    package func checkFits(_ rules: RuleSet) throws(StateFile.Failure) {
        if store.accountCount > 0 { try store.checkFits(rules) }
    }

    package var resumePoint: ResumePoint? { ResumePoint(seq: store.seq, input: store.input) }

    package func info() throws(StateFile.Failure) -> StateInfo {
        try StateInfo(
            format: Self.name, version: "\(StateFile.version) (layout \(store.meta["layout"] ?? "?"))",
            accounts: store.accountCount, devices: store.deviceCount, marks: store.markCount, resume: resumePoint,
            size: store.size,
            partition: StatePartition(meta: store.meta, file: path))
    }

    package func account(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        try store.loadAccount(id, rules: rules)
    }

    package func stream(rules: RuleSet, accounts ids: [String]?, compact: Bool) throws(StateFile.Failure) -> BadgeStream {
        var stream = try store.stream(rules: rules, accounts: ids, compact: compact)
        stream.partition = try StatePartition(meta: store.meta, file: path)
        return stream
    }

    package func write(_ stream: BadgeStream) throws(StateFile.Failure) {
        try store.store(stream)
        if let partition = stream.partition { try store.writeMeta(Dictionary(uniqueKeysWithValues: partition.metaRows)) }
    }

    package func attach(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream {
        // A new state records its rules now; other rules that fit, with the first checkpoint
        // (the values it writes are checked under them).
        if try store.recordedRules() == nil { try store.recordRules(rules) }
        self.rules = rules
        var stream = BadgeStream(rules: rules)
        stream.source = store
        committer = RocksDBCheckpointer(store: store)
        return stream
    }

    package func readAhead() throws(StateFile.Failure) -> (any AccountPrefetcher)? {
        reader = RocksDBPrefetcher(store: store, rules: rules)
        return reader
    }

    /// Accounts the state holds after the last checkpoint committed.
    package var storedAccounts: Int? { store.accountCount }

    package func close() {
        guard !closed else { return }
        closed = true
        // The threads first: they use the handle the store closes.
        reader?.close()
        committer?.close()
        store.close()
    }

    deinit { close() }
}
