import Dispatch

/// Reads the accounts of the next batch from an SQLite state on its own thread and
/// connection, while the filter applies the batch before (``AccountPrefetcher``).
///
/// In WAL mode a reader sees the last committed transaction and never blocks the writer,
/// so reading ahead costs the applying thread nothing but the hand-over. Decoding an
/// account (JSON text to a tree) is the larger part of loading one, and it happens here
/// too.
public final class SQLitePrefetcher: AccountPrefetcher, @unchecked Sendable {
    private let worker: StoreWorker<[String: Account?]>
    private let rules: RuleSet

    /// Opens a second, read-only connection to the state at `path`.
    ///
    /// - Throws: `StateFile.Failure` when the database cannot be opened.
    public init(path: String, rules: RuleSet) throws(StateFile.Failure) {
        let store = try SQLiteStore(path: path, readOnly: true)
        store.setCacheSize(kib: 16 << 10)
        worker = StoreWorker(store, label: "badgeflow.sqlite.prefetch")
        // Its own copy: decoding on this thread touches no reference count of the rules the
        // applying thread uses.
        self.rules = rules.independentCopy()
    }

    /// Starts reading `ids`; at most one request is outstanding (call ``collect()`` first).
    public func request(_ ids: [String]) {
        let rules = rules
        worker.start { store in
            var found: [String: Account?] = [:]
            found.reserveCapacity(ids.count)
            store.read {
                for id in ids {
                    // An account that cannot be read is left out: the stream reads it
                    // itself and reports the error with the line that needed it.
                    do throws(StateFile.Failure) { found[id] = .some(try store.loadAccount(id, rules: rules)) } catch {}
                }
            }
            return found
        }
    }

    /// Waits for the last request's accounts (empty when there was none).
    public func collect() -> [String: Account?] { worker.wait() ?? [:] }

    /// Closes the reading connection (after waiting for a request under way). Close it
    /// before the writing connections: the last connection to close removes the WAL files,
    /// and a read-only one cannot.
    public func close() { worker.close() }
}
