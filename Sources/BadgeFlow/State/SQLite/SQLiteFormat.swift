#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SQLite format's entry in the registry of formats (``StateFormat/all``): a database
/// file (WAL mode) that commits checkpoints and can be read live.
extension StateFormat {
    /// An SQLite state (`FILE.sqlite` or `FILE.db`).
    package static var sqlite: StateFormat {
        StateFormat(
            name: SQLiteStateStore.name, title: "SQLite", article: "an", extensions: [".sqlite", ".db"], isFolder: false,
            store: SQLiteStateStore.self, stateHelp: "FILE.sqlite or FILE.db is an SQLite database",
            split: StateSplit.splitSQLite, merge: StateSplit.mergeSQLite, liveStamp: SQLiteStateStore.liveStamp,
            remove: SQLiteStateStore.remove)
    }
}

extension SQLiteStateStore {
    /// What changes on disk when a checkpoint commits: the sizes, times and inodes of the
    /// database and its WAL, and the WAL index's header.
    ///
    /// A live reader (``LiveState``) of an SQLite state (WAL) makes each read its own read
    /// transaction on the open connection, so it sees the last committed checkpoint; the
    /// meta and the recorded rules are read again when this stamp changes.
    static func liveStamp(_ path: String) -> [Int64] {
        var out: [Int64] = []
        StateFormat.addStamp(path, to: &out)
        StateFormat.addStamp(path + "-wal", to: &out)
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
        return out
    }

    /// Removes the database at `path` and the `-wal` and `-shm` files beside it.
    static func remove(_ path: String) {
        unlink(path)
        unlink(path + "-wal")
        unlink(path + "-shm")
    }
}

/// `close(2)` (inside ``SQLiteStateStore`` the name is its method's).
private func closeDescriptor(_ fd: Int32) { _ = close(fd) }
