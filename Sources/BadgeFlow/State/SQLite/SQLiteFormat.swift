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
    /// database and its WAL (`stat` only).
    ///
    /// A live reader (``LiveState``) of an SQLite state (WAL) makes each read its own read
    /// transaction on the open connection, so it sees the last committed checkpoint; the
    /// meta and the recorded rules are read again when this stamp or the connection's
    /// `data_version` (``SQLiteStateStore/changeCounter()``) changes. The stamp never opens a
    /// file of the database: closing a descriptor drops every POSIX lock the process holds on
    /// that file, SQLite's own included, and a process that dropped its lock on `-shm` may
    /// see another process shrink the file under its mapping (SIGBUS).
    static func liveStamp(_ path: String) -> [Int64] {
        var out: [Int64] = []
        StateFormat.addStamp(path, to: &out)
        StateFormat.addStamp(path + "-wal", to: &out)
        return out
    }

    /// Removes the database at `path` and the `-wal` and `-shm` files beside it.
    static func remove(_ path: String) {
        System.removeFile(path)
        System.removeFile(path + "-wal")
        System.removeFile(path + "-shm")
    }
}

/// `close(2)` (inside ``SQLiteStateStore`` the name is its method's).
