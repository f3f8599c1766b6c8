#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A long-lived reader of an SQLite or RocksDB state that a filter may be writing: what
/// `badgeflow serve` answers its HTTP reads with, in microseconds instead of the
/// milliseconds of ``StoredAccount/read(state:account:)``, which opens the state per read.
///
/// The state stays open read-only. ``refresh()``, called by its owner (at most every
/// checkpoint interval), looks at the state's files (a few `stat` calls) and, when a
/// checkpoint has been committed since, opens the state again and swaps the new handle in;
/// reads go on from the old one meanwhile, so they never wait for an open. What a read
/// sees:
///
/// - RocksDB: a read-only handle sees the checkpoints committed when it was opened, so an
///   account is at most one ``refresh()`` behind. Each account is one value, written by one
///   checkpoint's `WriteBatch`: never a torn account.
/// - SQLite (WAL): each read is its own read transaction on the open connection, so it sees
///   the last committed checkpoint; the meta (``Figures``: seq, counts) and the recorded
///   rules are read again at ``refresh()``. A reader never blocks the writer.
///
/// A JSON state is refused: it is written whole at the end of a run, never while one goes on.
///
/// Reads are serialised by a lock (one connection, used by one thread at a time); a read
/// takes tens of microseconds.
public final class LiveState: Sendable {
    /// What the state's meta said when it was last opened (``refresh()``).
    public struct Figures: Sendable, Equatable {
        /// The format: `sqlite` or `rocksdb`.
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
        }

        deinit { store.close() }
    }

    private let lock = Locked<Generation?>(nil)
    /// Serialises ``refresh()`` calls (an open happens outside ``lock``).
    private let refreshing = Locked(0)

    /// Opens the state at `path` (`.sqlite`, `.db` or `.rocksdb`) for reading.
    ///
    /// - Throws: `StateFile.Failure` when the state is missing, unreadable, corrupt or
    ///   foreign, or a JSON state (written whole at the end of a run: nothing to read live).
    public init(path: String) throws(StateFile.Failure) {
        guard StateFormat.of(path).checkpoints else {
            throw StateFile.Failure(
                file: path, at: "",
                message:
                    "a JSON state is saved whole at the end of a run, so it cannot be read live; serve an SQLite (.sqlite, .db) or RocksDB (.rocksdb) state (badgeflow state convert)"
            )
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
            guard stamp != old.stamp else { return .success(false) }
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

    /// What changes on disk when a checkpoint commits: for SQLite the sizes, times and inodes
    /// of the database and its WAL and the WAL index's header; for RocksDB the folder's (each checkpoint flushes a new
    /// table file) and those of `CURRENT` and the manifest it names.
    static func stamp(_ path: String) -> [Int64] {
        func add(_ file: String, _ out: inout [Int64]) {
            var st = stat()
            guard stat(file, &st) == 0 else { return out.append(-1) }
            #if canImport(Darwin)
            let time = st.st_mtimespec
            #else
            let time = st.st_mtim
            #endif
            out.append(contentsOf: [Int64(st.st_ino), Int64(st.st_size), Int64(time.tv_sec), Int64(time.tv_nsec)])
        }
        var out: [Int64] = []
        if RocksDBStore.isRocksDBPath(path) {
            add(path, &out)
            add(path + "/CURRENT", &out)
            if let current = try? FileIO.readString(path + "/CURRENT") {
                let name = current.split(separator: "\n").first.map(String.init) ?? ""
                if !name.isEmpty, !name.contains("/") { add(path + "/" + name, &out) }
            }
        } else {
            add(path, &out)
            add(path + "-wal", &out)
            // The WAL index's header (in `-shm`, which SQLite maps shared, so a read sees it
            // as it stands): its change counter moves with every commit, also when the file
            // times do not (they tick every few milliseconds) and the WAL restarts at the
            // same size.
            let fd = open(path + "-shm", O_RDONLY)
            if fd >= 0 {
                var header = [UInt8](repeating: 0, count: 48)
                let n = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
                closeDescriptor(fd)
                for i in stride(from: 0, to: max(n, 0) & ~7, by: 8) {
                    out.append(header.withUnsafeBytes { Int64(bitPattern: $0.loadUnaligned(fromByteOffset: i, as: UInt64.self)) })
                }
            }
        }
        return out
    }
}

/// `close(2)` (inside ``LiveState`` the name is its method's).
private func closeDescriptor(_ fd: Int32) { _ = close(fd) }
