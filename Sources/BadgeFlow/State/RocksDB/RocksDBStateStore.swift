/// A state in a RocksDB database (`FILE.rocksdb`, a folder) behind the ``StateStore`` seam:
/// one handle shared by the filter's threads (RocksDB lets a process open a database once),
/// which loads accounts on first use, reads the next batch's accounts ahead with `MultiGet`
/// (``RocksDBPrefetcher``) and commits each checkpoint as one `WriteBatch` on its own thread
/// (``RocksDBCheckpointer``).
package final class RocksDBStateStore: StateStore {
    package static func handles(_ path: String) -> Bool { RocksDBStore.isRocksDBPath(path) }
    package static var checkpoints: Bool { true }
    package static var name: String { "rocksdb" }

    package let path: String
    private let store: RocksDBStore
    private var checkpointer: RocksDBCheckpointer?
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
        StateInfo(
            format: Self.name, version: "\(StateFile.version) (layout \(store.meta["layout"] ?? "?"))",
            accounts: store.accountCount, devices: store.deviceCount, marks: store.markCount, resume: resumePoint,
            size: store.size)
    }

    package func account(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        try store.loadAccount(id, rules: rules)
    }

    package func stream(rules: RuleSet, accounts ids: [String]?, compact: Bool) throws(StateFile.Failure) -> BadgeStream {
        try store.stream(rules: rules, accounts: ids, compact: compact)
    }

    package func write(_ stream: BadgeStream) throws(StateFile.Failure) { try store.store(stream) }

    package func attach(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream {
        // A new state records its rules now; other rules that fit, with the first checkpoint
        // (the values it writes are checked under them).
        if try store.recordedRules() == nil { try store.recordRules(rules) }
        self.rules = rules
        var stream = BadgeStream(rules: rules)
        stream.source = store
        checkpointer = RocksDBCheckpointer(store: store)
        return stream
    }

    package func readAhead() throws(StateFile.Failure) -> (any AccountPrefetcher)? {
        reader = RocksDBPrefetcher(store: store, rules: rules)
        return reader
    }

    package var isCommitPending: Bool { checkpointer?.isPending ?? false }

    /// Accounts the state holds after the last checkpoint committed.
    package var storedAccounts: Int? { store.accountCount }

    package func beginCheckpoint(_ stream: inout BadgeStream, seq: Int, input: String) {
        checkpointer?.begin(&stream, seq: seq, input: input)
    }

    package func finishCheckpoint(_ stream: inout BadgeStream) throws(StateFile.Failure) {
        try checkpointer?.finish(&stream)
    }

    package func prepareFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {
        try finishCheckpoint(&stream)
    }

    package func commitFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {
        beginCheckpoint(&stream, seq: seq, input: input)
        try finishCheckpoint(&stream)
    }

    package func close() {
        guard !closed else { return }
        closed = true
        // The threads first: they use the handle the store closes.
        reader?.close()
        checkpointer?.close()
        store.close()
    }

    deinit { close() }
}
