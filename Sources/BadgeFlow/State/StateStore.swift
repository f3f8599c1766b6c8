/// Where a state lives: the one seam between the filter (and `tree`, `state`) and the state
/// formats. `StateFormat/open(path:readOnly:)` picks the format from the path, in one
/// place (the registry of formats, `StateFormat/all`); ``StateSession`` drives a store
/// through a filter run.
///
/// A format either commits checkpoints while a filter runs and keeps a resume point
/// (``checkpoints``), or is held whole in memory and saved at the end. Both
/// finish a run in the same order: ``prepareFinal(_:seq:input:)``, then the caller puts its
/// results file in place, then ``commitFinal(_:seq:input:)``; a state is so never ahead of
/// the results its reader has.
///
/// A store is used from one thread at a time (a format whose handle is thread-safe, RocksDB,
/// may hand it to the run's threads as well), and starts no thread: the connections it
/// hands a filter run (``commitConnection()``, ``readConnections()``) are driven by the
/// run's ``FilterPipeline``, which owns every thread and closes them in order.
package protocol StateStore: AnyObject {
    /// Whether states of this format commit checkpoints while a filter runs and keep a
    /// resume point (`--resume`, `--max-resident`); otherwise they are saved at the end.
    static var checkpoints: Bool { get }
    /// The format's name (`state info`, `state convert`).
    static var name: String { get }

    /// Opens the state at `path`; `readOnly`: to read it (`tree`, `state`), while a filter
    /// may be writing it. A missing file is an empty state when the format allows it.
    init(path: String, readOnly: Bool) throws(StateFile.Failure)

    /// The path the state was opened from.
    var path: String { get }
    /// The rules the state recorded (nil: none).
    func recordedRules() throws(StateFile.Failure) -> RuleSet?
    /// Checks that every stored account fits `rules` (rules other than the recorded ones).
    /// A format that checks while it loads (``attach(rules:)``) does nothing here.
    func checkFits(_ rules: RuleSet) throws(StateFile.Failure)
    /// Where a run goes on from: the seq of the last result committed and what it was read
    /// from; nil for a format without checkpoints.
    var resumePoint: ResumePoint? { get }
    /// Counts for `state info`.
    func info() throws(StateFile.Failure) -> StateInfo

    /// The stored account `id` read with `rules` (`state get`, `tree --account`); nil when the
    /// state holds none.
    func account(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account?
    /// The stored accounts (`ids`: only these) in a new stream, with the state's
    /// ``BadgeStream/partition`` record; `compact`: held compactly.
    func stream(rules: RuleSet, accounts ids: [String]?, compact: Bool) throws(StateFile.Failure) -> BadgeStream
    /// Reads the state front to back and hands its accounts to `write`, `batch` at a time,
    /// never holding it whole (`state convert` into a format with checkpoints).
    ///
    /// - Returns: the accounts after the last batch handed over, or nil when the state is
    ///   not read so: a format without such a read, or a file the read does not take (then
    ///   `write` may have had some batches: the caller starts again).
    func streamedAccounts(
        rules: RuleSet, batch: Int, into write: (BadgeStream) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) -> BadgeStream?
    /// Writes every account of `stream` into this (new) state (`state convert`), and its
    /// ``BadgeStream/partition`` record when it has one; may be called again with more
    /// accounts (a conversion in batches).
    func write(_ stream: BadgeStream) throws(StateFile.Failure)

    /// The stream a filter runs on, under `rules`: the whole state (JSON), or a store-backed
    /// stream whose accounts are loaded from ``accountSource`` before first use. Called
    /// once. Starts no thread.
    func attach(rules: RuleSet) throws(StateFile.Failure) -> BadgeStream
    /// Where the stream of ``attach(rules:)`` finds the accounts it does not hold (nil: it
    /// holds every account): the ``FilterPipeline`` reads it on the applying thread, before
    /// the lines that need what it reads (``ParallelFilter/source``).
    var accountSource: (any AccountSource)? { get }
    /// The connection checkpoints commit through (nil: the format is saved at the end);
    /// called at most once, after ``attach(rules:)``. The ``FilterPipeline`` runs the
    /// commits on a thread of its own.
    func commitConnection() throws(StateFile.Failure) -> StoreConnection?
    /// The connections the read-ahead reads the next batch's accounts through, one a
    /// reader (empty: the format has none); called at most once, after ``attach(rules:)``,
    /// by a filter with worker threads. The ``FilterPipeline`` runs the reads on threads of
    /// its own.
    func readConnections() throws(StateFile.Failure) -> [StoreConnection]

    /// The accounts the state holds as of its last commit (nil: the format learns it only
    /// when saved).
    var storedAccounts: Int? { get }

    /// The part of the last save that may fail before the results are put in place: the
    /// checkpoint under way is finished, or the file written and synced.
    func prepareFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure)
    /// Commits the last save prepared (after the results are in place).
    func commitFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure)

    /// Records `records` after the last save; a format that saves them with its accounts
    /// (JSON: ``BadgeStream/records``) does nothing.
    func record(_ records: StateRecords) throws(StateFile.Failure)

    /// Closes the store (its shared handle; the pipeline closed the run's own connections,
    /// read-ahead ones before the writing one, and joined their threads).
    func close()

    /// Sets the memory the format caches the database's blocks in to `bytes`; false when
    /// the format has no such cache (`StateFormat/hasBlockCache`: `filter --block-cache`).
    func setBlockCache(bytes: Int) -> Bool

    /// A number that moves whenever another connection commits to this state and only then,
    /// read on this store's own connection (SQLite's `data_version`); nil for a format whose
    /// files tell it (``LiveState`` stamps them).
    func changeCounter() -> Int64?
}

extension StateStore {
    package func record(_ records: StateRecords) throws(StateFile.Failure) {}

    /// No streamed read: the accounts are read whole.
    package func streamedAccounts(
        rules: RuleSet, batch: Int, into write: (BadgeStream) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) -> BadgeStream? { nil }

    /// No block cache.
    package func setBlockCache(bytes: Int) -> Bool { false }
}

/// What commits a checkpointing format's checkpoints on a thread the run owns
/// (``StoreCheckpointer``): one commit under way at a time, begun and finished by the
/// applying thread.
package protocol Checkpointer: AnyObject {
    /// Whether a commit was begun and not yet finished.
    var isPending: Bool { get }
    /// The accounts the state holds after the last commit that finished (nil: none yet).
    var storedAccounts: Int? { get }
    /// Takes the changed accounts of `stream` and starts committing them with `seq`, read
    /// from `input`; returns at once.
    func begin(_ stream: inout BadgeStream, seq: Int, input: String)
    /// Waits for the commit under way (none: returns) and records it in `stream`.
    func finish(_ stream: inout BadgeStream) throws(StateFile.Failure)
}

/// A format with checkpoints: its commits go through a ``Checkpointer`` the pipeline makes
/// on the store's ``StateStore/commitConnection()``, and its last save is the run's last
/// checkpoint, so the two steps of a save at the end have nothing to do.
package protocol CheckpointingStateStore: StateStore {}

extension CheckpointingStateStore {
    package static var checkpoints: Bool { true }

    /// Nothing: the last checkpoint was committed before.
    package func prepareFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {}

    /// Nothing: the last checkpoint was committed before.
    package func commitFinal(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {}
}

/// Where a run on a state with checkpoints goes on from.
package struct ResumePoint: Sendable, Equatable {
    /// The seq of the last result the last checkpoint covers (0: none yet).
    package var seq: Int
    /// What those lines were read from (see ``StateSession/identity(of:)``; empty: unknown).
    package var input: String

    /// Creates a resume point.
    package init(seq: Int, input: String) {
        self.seq = seq
        self.input = input
    }
}

/// What `state info` prints about a state.
package struct StateInfo: Sendable, Equatable {
    /// The format (`StateFormat/name`).
    package var format: String
    /// The version line (`2`, `2 (schema 2)`).
    package var version: String
    /// Accounts, devices and marks stored.
    package var accounts: Int, devices: Int, marks: Int
    /// The resume point; nil for a format without checkpoints.
    package var resume: ResumePoint?
    /// Bytes on disk.
    package var size: Int64
    /// The record of a part of a split state (``StatePartition``); nil for a whole state.
    package var partition: StatePartition? = nil
    /// The inputs applied and whether the seq is a queue offset.
    package var records = StateRecords()
}

extension StateStore {
    /// Nil: the state's files tell a live reader that a checkpoint was committed.
    package func changeCounter() -> Int64? { nil }
}
