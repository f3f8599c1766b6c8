/// A long-lived reader of a state that a filter may be writing (a format that can be read
/// live, `StateFormat/isLiveReadable`: one with checkpoints): what
/// `badgeflow serve` answers its HTTP reads with, in microseconds instead of the
/// milliseconds of ``StoredAccount/read(state:account:)``, which opens the state per read.
///
/// The state stays open read-only. ``refresh()``, called by its owner (at most every
/// checkpoint interval), looks at the state's files (a few `stat` calls) and the store's
/// change counter (SQLite's `data_version`), and, when a checkpoint has been committed since, opens the state again and swaps the new handle in;
/// reads go on from the old one meanwhile, so they never wait for an open. A read sees the
/// last checkpoint committed when the state was opened, or a later one (a format whose reads
/// are transactions of their own), never a torn account; the meta (``Figures``: seq, counts)
/// and the recorded rules are read again at ``refresh()``. A reader never blocks the writer.
///
/// A state saved whole at the end of a run is refused: it is never written while one goes on.
///
/// Reads are serialised by a lock (one connection, used by one thread at a time); a read
/// takes tens of microseconds. That lock is why this class is `Sendable`: its only stored
/// values are the path and two `Locked` boxes, and the open store (not itself `Sendable`)
/// is reached only inside the lock, by one thread at a time.
public final class LiveState: Sendable {
    /// What the state's meta said when it was last opened (``refresh()``).
    public struct Figures: Sendable, Equatable {
        /// The format (`StateFormat/name`).
        public var format: String
        /// The seq of the last committed checkpoint.
        public var seq: Int
        /// Accounts, devices and marks the state holds.
        public var accounts: Int, devices: Int, marks: Int
        /// How many times the state was opened again since this reader was made.
        public var reopens: Int
    }

    /// The state's path.
    public let path: String

    /// One open of the state.
    private final class Generation {
        let store: any StateStore
        let rules: RuleSet
        let figures: Figures
        let stamp: [Int64]
        /// The store's change counter when it was opened (nil: its files tell).
        let counter: Int64?

        init(path: String, stamp: [Int64], reopens: Int) throws(StateFile.Failure) {
            let store = try StateFormat.open(path: path, readOnly: true)
            do throws(StateFile.Failure) {
                rules = try store.recordedRules() ?? RuleSet.builtIn
                let info = try store.info()
                figures = Figures(
                    format: info.format, seq: info.resume?.seq ?? 0, accounts: info.accounts, devices: info.devices, marks: info.marks,
                    reopens: reopens)
            } catch {
                store.close()
                throw error
            }
            self.store = store
            self.stamp = stamp
            counter = store.changeCounter()
        }

        deinit { store.close() }
    }

    private let lock = Locked<Generation?>(nil)
    /// Serialises ``refresh()`` calls (an open happens outside ``lock``).
    private let refreshing = Locked(0)

    /// Opens the state at `path` (of a format that can be read live) for reading.
    ///
    /// - Throws: `StateFile.Failure` when the state is missing, unreadable, corrupt or
    ///   foreign, or of a format saved whole at the end of a run (nothing to read live).
    public init(path: String) throws(StateFile.Failure) {
        let format = StateFormat.of(path)
        guard format.isLiveReadable else {
            throw StateFile.Failure(file: path, at: "", message: StateFormat.notLive(format))
        }
        self.path = path
        let stamp = Self.stamp(path)
        let first = try Generation(path: path, stamp: stamp, reopens: 0)
        lock.withLock { $0 = first }
    }

    /// Reads `account` as the last committed checkpoint this reader sees holds it.
    ///
    /// - Returns: the account, or nil when the state does not hold it.
    /// - Throws: `StateFile.Failure` when its stored value cannot be read, or after ``close()``.
    public func account(_ id: String) throws(StateFile.Failure) -> StoredAccount? {
        let read: Result<StoredAccount?, StateFile.Failure> = lock.withLock { current in
            guard let current else { return .failure(StateFile.Failure(file: path, at: "", message: "closed")) }
            do throws(StateFile.Failure) {
                let found = try current.store.account(id, rules: current.rules)
                return .success(found.map { StoredAccount(id: id, account: $0, icon: current.rules.icon) })
            } catch {
                return .failure(error)
            }
        }
        return try read.get()
    }

    /// The state's figures as of the last open.
    public var figures: Figures? { lock.withLock { $0?.figures } }

    /// Opens the state again when a checkpoint was committed since the last open (its files
    /// changed), and swaps the new handle in.
    ///
    /// - Returns: whether it opened the state again.
    /// - Throws: `StateFile.Failure` when the new open fails; reads go on from the old one.
    @discardableResult
    public func refresh() throws(StateFile.Failure) -> Bool {
        let result: Result<Bool, StateFile.Failure> = refreshing.withLock { _ in
            let stamp = Self.stamp(path)
            guard let old = lock.withLock({ $0 }) else { return .success(false) }
            // Read on the open connection, under the lock that serialises its use.
            let counter = lock.withLock { $0?.store.changeCounter() }
            guard stamp != old.stamp || counter != old.counter else { return .success(false) }
            do throws(StateFile.Failure) {
                let next = try Generation(path: path, stamp: stamp, reopens: old.figures.reopens + 1)
                // The old handle closes when the last reference goes, outside the lock.
                let previous = lock.withLock { current -> Generation? in
                    defer { if current != nil { current = next } }
                    return current
                }
                _ = previous
                return .success(true)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Closes the state; reads after this fail.
    public func close() {
        let last = lock.withLock { current -> Generation? in
            defer { current = nil }
            return current
        }
        _ = last
    }

    /// What changes on disk when a checkpoint commits (the format's
    /// `StateFormat/liveStamp`): file sizes, times and inodes, and what else tells one
    /// commit from the next.
    static func stamp(_ path: String) -> [Int64] {
        StateFormat.of(path).liveStamp?(path) ?? []
    }
}
