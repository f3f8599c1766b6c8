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
package final class SQLiteStateStore: StateStore {
    package static func handles(_ path: String) -> Bool { path.hasSuffix(".sqlite") || path.hasSuffix(".db") }
    package static var checkpoints: Bool { true }
    package static var name: String { "sqlite" }

    package let path: String
    private let store: SQLiteStore
    private var checkpointer: SQLiteCheckpointer?
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
        StateInfo(
            format: Self.name, version: "\(StateFile.version) (schema \(store.meta["schema"] ?? "?"))",
            accounts: store.accountCount, devices: store.deviceCount, marks: store.markCount, resume: resumePoint,
            size: StateFormat.size(path) + StateFormat.size(path + "-wal"))
    }

    package func account(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        try store.loadAccount(id, rules: rules)
    }

    package func stream(rules: RuleSet, accounts ids: [String]?, compact: Bool) throws(StateFile.Failure) -> BadgeStream {
        try store.stream(rules: rules, accounts: ids, compact: compact)
    }

    package func write(_ stream: BadgeStream) throws(StateFile.Failure) { try store.store(stream) }

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
        let checkpointer = try SQLiteCheckpointer(path: path)
        checkpointer.recordRules(rules)
        self.checkpointer = checkpointer
        return stream
    }

    package func readAhead() throws(StateFile.Failure) -> (any AccountPrefetcher)? {
        // Accounts of the next batch are read and decoded while this one is applied.
        reader = try SQLitePrefetcher(path: path, rules: rules)
        return reader
    }

    package var isCommitPending: Bool { checkpointer?.isPending ?? false }

    package var storedAccounts: Int? { checkpointer?.storedAccounts ?? store.accountCount }

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
        // The read-only connections first: the last one to close removes the WAL files.
        reader?.close()
        checkpointer?.close()
        store.close()
    }

    deinit { close() }
}
