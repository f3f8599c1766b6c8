import Dispatch

/// Commits checkpoints of an SQLite state on its own thread and connection, so that
/// encoding the changed accounts, writing them and waiting for the disk overlap the filter.
///
/// ``begin(_:seq:input:)`` takes the changed accounts from the stream (copies that share
/// storage with the stream's until it changes them) and returns at once; ``finish(_:)``
/// waits for that commit. An account may leave memory only once its last change is
/// committed, or loading it again would read an older row: the accounts of the commit under
/// way are marked in the stream, and ``BadgeStream/evict(keeping:)`` passes them over until
/// `finish` records the commit, so evicting others need not wait for it. Each checkpoint
/// finishes the previous commit before it begins the next.
///
/// What a commit records (`seq`) is never ahead of the results written: the caller begins
/// a commit only after writing the results up to `seq`.
///
/// Unchecked Sendable: its connection is used only in its ``StoreWorker``'s jobs, and its
/// own properties only by the applying thread, which begins and finishes each commit.
package final class SQLiteCheckpointer: @unchecked Sendable {
    private let worker: StoreWorker<Result<(stored: [(String, (Int, Int))], accounts: Int), StateFile.Failure>>
    /// The ids of the accounts of the commit under way.
    private var pendingIDs: [String] = []

    /// Opens its own read-write connection to the state at `path`.
    ///
    /// - Throws: `StateFile.Failure` when the database cannot be opened.
    package init(path: String) throws(StateFile.Failure) {
        worker = StoreWorker(try SQLiteStore(path: path), label: "badgeflow.sqlite.checkpoint")
    }

    /// The rules' JSON text recorded with each commit (nil: the recorded rules are kept).
    private var rules: String?

    /// Records `rules` with every commit from now on (in its transaction, when they differ
    /// from the recorded ones): other rules that fit a state are recorded at its next
    /// checkpoint. Rules built in code have no JSON and are not recorded.
    package func recordRules(_ rules: RuleSet) { self.rules = rules.sourceValue?.serialized(pretty: true) }

    /// The accounts the state holds after the last commit that finished (nil: none yet).
    package private(set) var storedAccounts: Int?

    /// Whether a commit was begun and not yet finished.
    package var isPending: Bool { worker.isPending }

    /// Takes the accounts of `stream` changed since the last checkpoint (they then count
    /// as unchanged) and starts committing them with `seq`, read from `input`.
    ///
    /// Call ``finish(_:)`` for the previous commit first.
    package func begin(_ stream: inout BadgeStream, seq: Int, input: String) {
        precondition(!isPending, "SQLiteCheckpointer: finish() the previous commit first")
        let changed = stream.beginCommit()
        pendingIDs = changed.map(\.id)
        let seed = stream.rules.rowCacheSeed
        let rules = self.rules
        worker.start { store in
            do throws(StateFile.Failure) {
                return .success((try store.commit(changed, seq: seq, input: input, cacheSeed: seed, rules: rules), store.accountCount))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Waits for the commit begun last (nothing when none is pending) and records in
    /// `stream` what is now stored.
    ///
    /// - Throws: `StateFile.Failure` when the commit failed; the database then holds the
    ///   previous checkpoint, and the commit's accounts count as changed again in `stream`
    ///   (a later commit writes them).
    package func finish(_ stream: inout BadgeStream) throws(StateFile.Failure) {
        guard let outcome = worker.wait() else { return }
        defer { pendingIDs = [] }
        switch outcome {
        case .success(let done):
            storedAccounts = done.accounts
            stream.endCommit(done.stored)
        case .failure(let failure):
            stream.abortCommit(pendingIDs)
            throw failure
        }
    }

    /// Closes the connection (after waiting for a pending commit, whose outcome is dropped).
    package func close() { worker.close() }
}
