/// A state in an SQLite database (`FILE.sqlite` or `FILE.db`) behind the ``StateStore`` seam,
/// and the one owner of its connections and threads.
///
/// The SQLite path: four connections (`SQLiteConnection`, each with its statements), each
/// used by one thread at a time. The applying thread holds a read-write one that loads an
/// account on first use (what the read-ahead did not bring). Two read-only ones
/// (``SQLitePrefetcher``) read and decode the next batch's accounts, half each, while the
/// batch before is applied; one read-write one (``SQLiteCheckpointer``) encodes and commits
/// each checkpoint's changed accounts in key order. Each of those three runs on the thread
/// of its own serial queue (`StoreWorker`), one job at a time; the hand-off is the job: the
/// applying thread starts it with what it needs (ids, or copy-on-write copies of the changed
/// accounts) and later waits on the job's semaphore for its output, which orders the two, so
/// no lock is shared. ``close()`` closes the read-only connections first (the last
/// connection to close removes the WAL files, which a read-only one cannot).
package final class SQLiteStateStore: CheckpointingStateStore {
    package static func handles(_ path: String) -> Bool { path.hasSuffix(".sqlite") || path.hasSuffix(".db") }
    package static var name: String { "sqlite" }

    package let path: String
    private let store: SQLiteStore
    private var committer: SQLiteCheckpointer?
    package var checkpointer: (any Checkpointer)? { committer }
    private var reader: SQLitePrefetcher?
    private var closed = false
    /// The rules the filter runs under (``attach(rules:)``).
    private var rules = RuleSet.builtIn

    package init(path: String, readOnly: Bool) throws(StateFile.Failure) {
        // A reader never creates a database.
        if readOnly, !FileIO.exists(path) { throw StateFile.Failure(file: path, at: "", message: "no such state file") }
        self.path = path
        store = try SQLiteStore(path: path, readOnly: readOnly)
    }

    package func recordedRules() throws(StateFile.Failure) -> RuleSet? { try store.recordedRules() }

    package func checkFits(_ rules: RuleSet) throws(StateFile.Failure) {
        if store.accountCount > 0 { try store.checkFits(rules) }
    }

    package var resumePoint: ResumePoint? { ResumePoint(seq: store.seq, input: store.input) }

    package func info() throws(StateFile.Failure) -> StateInfo {
        try StateInfo(
            format: Self.name, version: "\(StateFile.version) (schema \(store.meta["schema"] ?? "?"))",
            accounts: store.accountCount, devices: store.deviceCount, marks: store.markCount, resume: resumePoint,
            size: StateFormat.size(path) + StateFormat.size(path + "-wal"),
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
        if let partition = stream.partition { try store.recordPartition(partition) }
    }

    package func attach(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream {
        // A new state records its rules now; other rules that fit, at the first checkpoint
        // (with its accounts and seq).
        if try store.recordedRules() == nil { try store.recordRules(rules) }
        self.rules = rules
        var stream = BadgeStream(rules: rules)
        stream.source = store
        // Checkpoints commit on their own thread and connection, which gets the large page
        // cache; this one only loads an account now and then (what the read-ahead did not).
        store.setCacheSize(kib: 8 << 10)
        let committer = try SQLiteCheckpointer(path: path)
        committer.recordRules(rules)
        self.committer = committer
        return stream
    }

    package func readAhead() throws(StateFile.Failure) -> (any AccountPrefetcher)? {
        // Accounts of the next batch are read and decoded while this one is applied.
        reader = try SQLitePrefetcher(path: path, rules: rules)
        return reader
    }

    package var storedAccounts: Int? { committer?.storedAccounts ?? store.accountCount }

    package func close() {
        guard !closed else { return }
        closed = true
        // The read-only connections first: the last one to close removes the WAL files.
        reader?.close()
        committer?.close()
        store.close()
    }

    deinit { close() }
}
