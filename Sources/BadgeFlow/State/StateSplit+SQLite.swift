import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A raw connection for copying rows between SQLite states (split and merge): the states
/// are opened (created, checked) by ``SQLiteStore`` first, and only their rows go through
/// here, each value copied as it is (`sqlite3_bind_value`).
final class SQLiteRowCopier {
    let path: String
    private(set) var db: OpaquePointer?
    private var statements: [OpaquePointer?] = []

    init(_ path: String, readOnly: Bool) throws(StateSplit.Failure) {
        self.path = path
        _ = SQLiteStore.configured
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        db = handle
        guard rc == SQLITE_OK else {
            let f = failure("cannot open")
            close()
            throw f
        }
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { close() }

    func close() {
        for s in statements { sqlite3_finalize(s) }
        statements = []
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    func failure(_ what: String) -> StateSplit.Failure {
        let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
        return .state(StateFile.Failure(file: path, at: "", message: "\(what): \(reason)"))
    }

    func exec(_ sql: String) throws(StateSplit.Failure) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw failure("cannot run \(sql.prefix(40))") }
    }

    /// A statement finalized with the connection.
    func prepare(_ sql: String) throws(StateSplit.Failure) -> OpaquePointer? {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK else { throw failure("cannot prepare \(sql.prefix(60))") }
        statements.append(stmt)
        return stmt
    }

    /// The names of `table`'s columns (empty when there is no such table).
    func columns(_ table: String) throws(StateSplit.Failure) -> [String] {
        let stmt = try prepare("SELECT name FROM pragma_table_info('\(table)')")
        defer { sqlite3_reset(stmt) }
        var names: [String] = []
        while sqlite3_step(stmt) == SQLITE_ROW { names.append(Self.text(stmt, 0)) }
        return names
    }

    static func text(_ stmt: OpaquePointer?, _ column: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, column) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, column))), as: UTF8.self)
    }

    /// The bytes of a text column, valid until the statement steps.
    static func bytes(_ stmt: OpaquePointer?, _ column: Int32) -> UnsafeRawBufferPointer {
        guard let p = sqlite3_column_text(stmt, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, column)))
    }

    /// Steps `insert` with the first `count` columns of `row` as its parameters.
    func insert(_ insert: OpaquePointer?, from row: OpaquePointer?, count: Int32) throws(StateSplit.Failure) {
        for c in 0..<count { sqlite3_bind_value(insert, c + 1, sqlite3_column_value(row, c)) }
        defer { sqlite3_reset(insert) }
        guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("cannot insert a row") }
    }

    func setMeta(_ key: String, _ value: String) throws(StateSplit.Failure) {
        let stmt = try prepare("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        _ = key.withCString { badgeflow_sqlite_bind_text(stmt, 1, $0, Int32(key.utf8.count)) }
        _ = value.withCString { badgeflow_sqlite_bind_text(stmt, 2, $0, Int32(value.utf8.count)) }
        guard sqlite3_step(stmt) == SQLITE_DONE else { throw failure("cannot write meta \(key)") }
    }

    /// Commits, folds the log into the file and closes (the last connection removes the
    /// `-wal` and `-shm` files).
    func finish() throws(StateSplit.Failure) {
        try exec("COMMIT")
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
        close()
    }
}

/// fsync(2) of `path` (a database closed by SQLite, before it is renamed into place).
private func syncFile(_ path: String) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    close(fd)
}

extension StateSplit {
    /// Rows copied per transaction of a part being written.
    static let batch = 20_000
    /// Meta rows a split or merge writes itself (the rest are copied).
    static let ownMeta: Set<String> = [
        "writer", "accounts", "devices", "marks", "partition.parts", "partition.index", "partition.hash",
    ]

    /// Checks an SQLite state (format, version, rules) and returns its meta table.
    private static func checkedMeta(_ path: String) throws(Failure) -> [String: String] {
        do {
            let store = try SQLiteStore(path: path, readOnly: true)
            defer { store.close() }
            _ = try store.recordedRules()
            return store.meta
        } catch {
            throw .state(error)
        }
    }

    /// Creates an empty state at `path` (tables, WAL) and opens it for copying rows.
    private static func created(_ path: String) throws(Failure) -> SQLiteRowCopier {
        do { try SQLiteStore(path: path).close() } catch { throw .state(error) }
        let db = try SQLiteRowCopier(path, readOnly: false)
        try db.exec("PRAGMA synchronous = NORMAL")
        try db.exec("BEGIN IMMEDIATE")
        return db
    }

    private static func accountsQuery(_ db: SQLiteRowCopier) throws(Failure) -> OpaquePointer? {
        let cache = try db.columns("accounts").contains("compact") ? "compact" : "NULL"
        return try db.prepare("SELECT id, data, devices, marks, \(cache) FROM accounts ORDER BY id")
    }

    private static let insertAccount = "INSERT INTO accounts(id, data, devices, marks, compact) VALUES (?1, ?2, ?3, ?4, ?5)"
    private static let insertDue = "INSERT INTO due(account, at) VALUES (?1, ?2)"

    static func splitSQLite(_ file: String, into paths: [String]) throws(Failure) {
        let meta = try checkedMeta(file)
        do throws(StateFile.Failure) {
            if let p = try StatePartition(meta: meta, file: file) {
                throw StateFile.Failure(file: file, at: "meta.partition", message: "already a split state's \(p); merge its parts first")
            }
        } catch {
            throw .state(error)
        }
        var done = false
        defer { if !done { removeAll(paths) } }
        let source = try SQLiteRowCopier(file, readOnly: true)
        try source.exec("BEGIN")  // one snapshot, also while a filter commits
        let rows = try accountsQuery(source)
        let dueRows = try source.columns("due").isEmpty ? nil : try source.prepare("SELECT account, at FROM due")
        var parts: [SQLiteRowCopier] = []
        var inserts: [OpaquePointer?] = []
        for path in paths {
            let db = try created(path)
            parts.append(db)
            inserts.append(try db.prepare(insertAccount))
        }
        var counts = [(accounts: Int, devices: Int64, marks: Int64)](repeating: (0, 0, 0), count: paths.count)
        while true {
            let rc = sqlite3_step(rows)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw source.failure("cannot read the accounts") }
            let id = SQLiteRowCopier.bytes(rows, 0)
            let p = Int(StatePartition.crc32(id) % UInt32(paths.count))
            try parts[p].insert(inserts[p], from: rows, count: 5)
            counts[p].accounts += 1
            counts[p].devices += sqlite3_column_int64(rows, 2)
            counts[p].marks += sqlite3_column_int64(rows, 3)
            if counts[p].accounts % batch == 0 {
                try parts[p].exec("COMMIT")
                try parts[p].exec("BEGIN IMMEDIATE")
            }
        }
        if let dueRows {
            let dues = try parts.map { db throws(Failure) in try db.prepare(insertDue) }
            while sqlite3_step(dueRows) == SQLITE_ROW {
                let p = Int(StatePartition.crc32(SQLiteRowCopier.bytes(dueRows, 0)) % UInt32(paths.count))
                try parts[p].insert(dues[p], from: dueRows, count: 2)
            }
        }
        for (i, db) in parts.enumerated() {
            for (key, value) in meta.sorted(by: { $0.key < $1.key }) where !ownMeta.contains(key) { try db.setMeta(key, value) }
            for (key, value) in StatePartition(parts: paths.count, index: i)?.metaRows ?? [] { try db.setMeta(key, value) }
            try db.setMeta("accounts", String(counts[i].accounts))
            try db.setMeta("devices", String(counts[i].devices))
            try db.setMeta("marks", String(counts[i].marks))
            try db.finish()
        }
        try source.exec("COMMIT")
        for p in paths { syncFile(p) }
        if let first = paths.first { FileIO.syncFolder(of: first) }
        done = true
    }

    static func mergeSQLite(_ paths: [String], into out: String) throws(Failure) {
        var opened: [(path: String, partition: StatePartition?, value: [String: String])] = []
        for path in paths {
            let meta = try checkedMeta(path)
            do { opened.append((path, try StatePartition(meta: meta, file: path), meta)) } catch { throw .state(error) }
        }
        let parts = try ordered(opened)
        let first = parts[0]
        for part in parts where part.value["rules"] != first.value["rules"] {
            throw .state(
                StateFile.Failure(
                    file: part.path, at: "meta.rules",
                    message: "its rules differ from \(first.path)'s; the parts of one split were run with the same rules"))
        }
        let temp = out + ".tmp.\(getpid())"
        var done = false
        defer { if !done { removeAll([temp]) } }
        removeAll([temp])
        let target = try created(temp)
        let insert = try target.prepare(insertAccount)
        let insertDueRow = try target.prepare(insertDue)
        var sources: [SQLiteRowCopier] = []
        var cursors: [OpaquePointer?] = []
        var live: [Int] = []
        for (i, part) in parts.enumerated() {
            let db = try SQLiteRowCopier(part.path, readOnly: true)
            try db.exec("BEGIN")
            sources.append(db)
            let rows = try accountsQuery(db)
            cursors.append(rows)
            switch sqlite3_step(rows) {
            case SQLITE_ROW: live.append(i)
            case SQLITE_DONE: break
            default: throw db.failure("cannot read the accounts")
            }
        }
        func less(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool { a.lexicographicallyPrecedes(b) }
        var accounts = 0
        var devices: Int64 = 0
        var marks: Int64 = 0
        while !live.isEmpty {
            var best = 0
            for k in 1..<live.count where less(SQLiteRowCopier.bytes(cursors[live[k]], 0), SQLiteRowCopier.bytes(cursors[live[best]], 0)) {
                best = k
            }
            let i = live[best]
            let rows = cursors[i]
            let id = SQLiteRowCopier.bytes(rows, 0)
            let partition = parts[i].partition
            guard Int(StatePartition.crc32(id) % UInt32(partition.parts)) == partition.index else {
                let name = String(decoding: id, as: UTF8.self)
                throw misplaced(name, in: partition, path: parts[i].path, at: "accounts")
            }
            for k in live where k != i && SQLiteRowCopier.bytes(cursors[k], 0).elementsEqual(id) {
                throw .state(
                    StateFile.Failure(
                        file: parts[k].path, at: "accounts",
                        message:
                            "account \(JSONValue.string(String(decoding: id, as: UTF8.self)).serialized()) is also in \(parts[i].path); the parts overlap"
                    ))
            }
            try target.insert(insert, from: rows, count: 5)
            accounts += 1
            devices += sqlite3_column_int64(rows, 2)
            marks += sqlite3_column_int64(rows, 3)
            if accounts % batch == 0 {
                try target.exec("COMMIT")
                try target.exec("BEGIN IMMEDIATE")
            }
            switch sqlite3_step(rows) {
            case SQLITE_ROW: break
            case SQLITE_DONE: live.remove(at: best)
            default: throw sources[i].failure("cannot read the accounts")
            }
        }
        for db in sources where try !db.columns("due").isEmpty {
            let dueRows = try db.prepare("SELECT account, at FROM due ORDER BY account")
            while sqlite3_step(dueRows) == SQLITE_ROW { try target.insert(insertDueRow, from: dueRows, count: 2) }
        }
        for (key, value) in first.value.sorted(by: { $0.key < $1.key }) where !ownMeta.contains(key) {
            try target.setMeta(key, value)
        }
        let seqs = Set(parts.map { $0.value["seq"] ?? "0" })
        if seqs.count > 1 { try target.setMeta("seq", String(seqs.compactMap { Int($0) }.max() ?? 0)) }
        if Set(parts.map { $0.value["input"] ?? "" }).count > 1 { try target.setMeta("input", "") }
        try target.setMeta("accounts", String(accounts))
        try target.setMeta("devices", String(devices))
        try target.setMeta("marks", String(marks))
        try target.finish()
        for db in sources { db.close() }
        syncFile(temp)
        guard rename(temp, out) == 0 else {
            throw .io(FileIO.Failure(path: out, message: "cannot rename \(temp) over it: \(String(cString: strerror(errno)))"))
        }
        FileIO.syncFolder(of: out)
        done = true
    }
}
