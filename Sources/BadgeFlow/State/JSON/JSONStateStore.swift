/// A state in a JSON file behind the ``StateStore`` seam: loaded whole when a filter
/// starts (its accounts held compactly) and saved atomically at the end, with no resume
/// point.
package final class JSONStateStore: StateStore {
    package static var checkpoints: Bool { false }
    package static var name: String { "json" }

    package let path: String
    /// The last save, written and synced, waiting for ``commitFinal(_:seq:input:)``.
    private var pending: FileIO.AtomicWriter?

    package init(path: String, readOnly: Bool) throws(StateFile.Failure) {
        self.path = path
        // A killed save leaves its temporary file behind.
        if !readOnly { StateFile.removeStaleTemporaryFiles(of: path) }
    }

    package func recordedRules() throws(StateFile.Failure) -> RuleSet? { try StateFile.recordedRules(path) }

    /// Nothing: ``attach(rules:)`` loads every account with the rules, and the first
    /// mark that does not fit is its error.
    package func checkFits(_ rules: RuleSet) throws(StateFile.Failure) {}

    package var resumePoint: ResumePoint? { nil }

    package func info() throws(StateFile.Failure) -> StateInfo {
        guard FileIO.exists(path) else { throw StateFile.Failure(file: path, at: "", message: "no such state file") }
        // Held compactly (~100 bytes an account) and expanded one at a time to count.
        let stream = try StateFile.load(path, rules: try recordedRules() ?? RuleSet.builtIn, compact: true)
        var devices = 0, marks = 0
        for id in stream.accountIDs {
            guard let a = try stream.account(id) else { continue }
            devices += a.devices.count
            marks += a.tree.markCount
        }
        return StateInfo(
            format: Self.name, version: "\(StateFile.version)", accounts: stream.accountCount, devices: devices, marks: marks,
            resume: nil, size: StateFormat.size(path), partition: stream.partition, records: stream.records)
    }

    package func account(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        try StateFile.load(path, rules: rules, only: [id]).account(id)
    }

    package func stream(rules: RuleSet, accounts ids: [String]?, compact: Bool) throws(StateFile.Failure) -> BadgeStream {
        try StateFile.load(path, rules: rules, compact: compact, only: ids.map(Set.init))
    }

    /// Read through a mapping, front to back (as `state split` reads it), each account
    /// decoded; nil when the file cannot be mapped or is in another layout (the whole read
    /// then names its error exactly).
    package func streamedAccounts(
        rules: RuleSet, batch: Int, into write: (BadgeStream) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) -> BadgeStream? {
        guard let mapped = MappedFile(path) else { return nil }
        // The read calls `write` only while it runs.
        return try withoutActuallyEscaping(write) { (flush) throws(StateFile.Failure) -> BadgeStream? in
            try StateFile.streamedLoad(mapped, path: path, rules: rules, compact: false, batches: (batch, flush))
        }
    }

    package func write(_ stream: BadgeStream) throws(StateFile.Failure) {
        do { try StateFile.save(stream, to: path) } catch { throw StateFile.Failure(file: error.path, at: "", message: error.message) }
    }

    package func attach(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream {
        try StateFile.load(path, rules: rules, compact: true)
    }

    /// None: the state is saved at the end.
    package func commitConnection() throws(StateFile.Failure) -> StoreConnection? { nil }
    /// None: every account is in memory.
    package func readConnections() throws(StateFile.Failure) -> [StoreConnection] { [] }
    package var storedAccounts: Int? { nil }

    /// None: the stream holds every account.
    package var accountSource: (any AccountSource)? { nil }

    /// Writes and syncs the whole state to a temporary file beside `path`.
    package func prepareFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {
        do { pending = try StateFile.prepareSave(stream, to: path) } catch {
            throw StateFile.Failure(file: error.path, at: "", message: error.message)
        }
    }

    /// Renames the prepared file over `path`.
    package func commitFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {
        defer { pending = nil }
        do { try pending?.commit() } catch { throw StateFile.Failure(file: error.path, at: "", message: error.message) }
    }

    /// Drops a save not committed: `path` keeps its content.
    package func close() { pending = nil }
}
