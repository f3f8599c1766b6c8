import Dispatch

/// Reads the accounts of the next batch from an SQLite state on its own threads and
/// connections (two readers, each with half of the batch), while the filter applies the
/// batch before (``AccountPrefetcher``).
///
/// In WAL mode a reader sees the last committed transaction and never blocks the writer,
/// so reading ahead costs the applying thread nothing but the hand-over. Decoding an
/// account (JSON text to a tree) is the larger part of loading one, and it happens here
/// too.
///
/// Unchecked Sendable: its connections are used only in their ``StoreWorker``'s jobs, and
/// `request`/`collect` are called by the applying thread alone.
package final class SQLitePrefetcher: AccountPrefetcher, @unchecked Sendable {
    /// Readers, each with its own connection and thread; a request is split among them.
    private let workers: [StoreWorker<[String: Account?]>]
    /// The rules for each reader.
    private let rules: [RuleSet]

    /// Requests of fewer accounts than this go to one reader: splitting them would cost
    /// more hand-overs than it saves.
    static let splitAbove = 256

    /// Opens `readers` read-only connections (two by default) to the state at `path`.
    ///
    /// Decoding accounts is most of a load and needs a core: with two readers a batch's
    /// accounts are read in about half the time when a core is free.
    ///
    /// - Throws: `StateFile.Failure` when the database cannot be opened.
    package init(path: String, rules: RuleSet, readers: Int = 2) throws(StateFile.Failure) {
        var workers: [StoreWorker<[String: Account?]>] = []
        for i in 0..<max(readers, 1) {
            let store = try SQLiteStore(path: path, readOnly: true)
            // 16 MiB of page cache in all, as one reader had.
            store.setCacheSize(kib: (16 << 10) / max(readers, 1))
            workers.append(StoreWorker(store, label: "badgeflow.sqlite.prefetch.\(i)"))
        }
        self.workers = workers
        // Each reader its own copy: decoding touches no reference count of the rules another
        // thread uses.
        self.rules = workers.map { _ in rules.independentCopy() }
    }

    /// Starts reading `ids`; at most one request is outstanding (call ``collect()`` first).
    package func request(_ ids: [String]) {
        let parts = ids.count < Self.splitAbove ? 1 : workers.count
        let size = (ids.count + parts - 1) / parts
        for (n, worker) in workers.prefix(parts).enumerated() {
            let part = Array(ids[min(n * size, ids.count)..<min((n + 1) * size, ids.count)])
            let rules = rules[n]
            worker.start { store in
                var found: [String: Account?] = [:]
                found.reserveCapacity(part.count)
                store.read {
                    for id in part {
                        // An account that cannot be read is left out: the stream reads it
                        // itself and reports the error with the line that needed it.
                        do throws(StateFile.Failure) { found[id] = .some(try store.loadAccount(id, rules: rules)) } catch {}
                    }
                }
                return found
            }
        }
    }

    /// Waits for the last request's accounts (empty when there was none).
    package func collect() -> [String: Account?] {
        var all: [String: Account?] = [:]
        for worker in workers {
            guard let found = worker.wait() else { continue }
            if all.isEmpty { all = found } else { all.merge(found) { a, _ in a } }
        }
        return all
    }

    /// Closes the reading connections (after waiting for requests under way). Close them
    /// before the writing connections: the last connection to close removes the WAL files,
    /// and a read-only one cannot.
    package func close() { for worker in workers { worker.close() } }
}
