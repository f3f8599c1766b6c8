/// A connection for copying rows between SQLite states (split and merge): the states are
/// opened (created, checked) by ``SQLiteStore`` first, and only their rows go through here,
/// each value copied as it is (``SQLiteStatement/bind(_:valueOf:column:)``).
final class SQLiteRowCopier {
    let path: String
    private var db: SQLiteConnection?
    private var statements: [SQLiteStatement] = []

    init(_ path: String, readOnly: Bool) throws(StateSplit.Failure) {
        self.path = path
        do { db = try SQLiteConnection(path, mode: readOnly ? .readOnly : .readWrite) } catch { throw .state(error) }
    }

    deinit { close() }

    func close() {
        for s in statements { s.close() }
        statements = []
        db?.close()
        db = nil
    }

    func failure(_ what: String) -> StateSplit.Failure {
        .state(db?.failure(what) ?? StateFile.Failure(file: path, at: "", message: "\(what): the database is closed"))
    }

    private func connection() throws(StateSplit.Failure) -> SQLiteConnection {
        guard let db else { throw failure("cannot use it") }
        return db
    }

    func exec(_ sql: String) throws(StateSplit.Failure) {
        let db = try connection()
        do { try db.exec(sql) } catch { throw .state(error) }
    }

    /// A statement finalized with the connection.
    func prepare(_ sql: String) throws(StateSplit.Failure) -> SQLiteStatement {
        let db = try connection()
        do {
            let stmt = try db.prepare(sql)
            statements.append(stmt)
            return stmt
        } catch {
            throw .state(error)
        }
    }

    /// Steps `stmt` (one of this connection's): true for a row, false when done.
    func step(_ stmt: SQLiteStatement, or what: @autoclosure () -> String) throws(StateSplit.Failure) -> Bool {
        do { return try stmt.step(or: what()) } catch { throw .state(error) }
    }

    /// The names of `table`'s columns (empty when there is no such table).
    func columns(_ table: String) throws(StateSplit.Failure) -> [String] {
        let stmt = try prepare("SELECT name FROM pragma_table_info('\(table)')")
        defer { stmt.reset() }
        var names: [String] = []
        while try step(stmt, or: "cannot read the columns of \(table)") { names.append(stmt.text(0)) }
        return names
    }

    /// Steps `insert` with the first `count` columns of `row` as its parameters.
    func insert(_ insert: SQLiteStatement, from row: SQLiteStatement, count: Int32) throws(StateSplit.Failure) {
        for c in 0..<count { insert.bind(c + 1, valueOf: row, column: c) }
        defer { insert.reset() }
        _ = try step(insert, or: "cannot insert a row")
    }

    func setMeta(_ key: String, _ value: String) throws(StateSplit.Failure) {
        let stmt = try prepare("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        stmt.bind(1, key)
        stmt.bind(2, value)
        _ = try step(stmt, or: "cannot write meta \(key)")
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
    let fd = System.openForReading(path)
    guard fd >= 0 else { return }
    System.sync(fd)
    System.closeDescriptor(fd)
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

    private static func accountsQuery(_ db: SQLiteRowCopier) throws(Failure) -> SQLiteStatement {
        let cache = try db.columns("accounts").contains("compact") ? "compact" : "NULL"
        return try db.prepare("SELECT id, data, devices, marks, \(cache) FROM accounts ORDER BY id")
    }

    private static let insertAccount = "INSERT INTO accounts(id, data, devices, marks, compact) VALUES (?1, ?2, ?3, ?4, ?5)"
    private static let insertDue = "INSERT INTO due(account, at) VALUES (?1, ?2)"

    static func splitSQLite(_ file: String, into paths: [String]) throws(Failure) {
        let meta = try checkedMeta(file)
        try refuseSplitPart(meta: meta, file: file)
        var done = false
        defer { if !done { removeAll(paths) } }
        let source = try SQLiteRowCopier(file, readOnly: true)
        try source.exec("BEGIN")  // one snapshot, also while a filter commits
        let rows = try accountsQuery(source)
        let dueRows = try source.columns("due").isEmpty ? nil : try source.prepare("SELECT account, at FROM due")
        var parts: [SQLiteRowCopier] = []
        var inserts: [SQLiteStatement] = []
        for path in paths {
            let db = try created(path)
            parts.append(db)
            inserts.append(try db.prepare(insertAccount))
        }
        var counts = [(accounts: Int, devices: Int64, marks: Int64)](repeating: (0, 0, 0), count: paths.count)
        while try source.step(rows, or: "cannot read the accounts") {
            let id = rows.bytes(0)
            let p = Int(StatePartition.crc32(id) % UInt32(paths.count))
            try parts[p].insert(inserts[p], from: rows, count: 5)
            counts[p].accounts += 1
            counts[p].devices += rows.int64(2)
            counts[p].marks += rows.int64(3)
            if counts[p].accounts % batch == 0 {
                try parts[p].exec("COMMIT")
                try parts[p].exec("BEGIN IMMEDIATE")
            }
        }
        if let dueRows {
            let dues = try parts.map { db throws(Failure) in try db.prepare(insertDue) }
            while try source.step(dueRows, or: "cannot read the due index") {
                let p = Int(StatePartition.crc32(dueRows.bytes(0)) % UInt32(paths.count))
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
        let temp = out + ".tmp.\(System.processID)"
        var done = false
        defer { if !done { removeAll([temp]) } }
        removeAll([temp])
        let target = try created(temp)
        let insert = try target.prepare(insertAccount)
        let insertDueRow = try target.prepare(insertDue)
        var sources: [SQLiteRowCopier] = []
        var cursors: [SQLiteStatement] = []
        var live: [Int] = []
        for (i, part) in parts.enumerated() {
            let db = try SQLiteRowCopier(part.path, readOnly: true)
            try db.exec("BEGIN")
            sources.append(db)
            let rows = try accountsQuery(db)
            cursors.append(rows)
            if try db.step(rows, or: "cannot read the accounts") { live.append(i) }
        }
        var accounts = 0
        var devices: Int64 = 0
        var marks: Int64 = 0
        while !live.isEmpty {
            var best = 0
            for k in 1..<live.count where precedes(cursors[live[k]].bytes(0), cursors[live[best]].bytes(0)) {
                best = k
            }
            let i = live[best]
            let rows = cursors[i]
            let id = rows.bytes(0)
            let partition = parts[i].partition
            guard Int(StatePartition.crc32(id) % UInt32(partition.parts)) == partition.index else {
                let name = String(decoding: id, as: UTF8.self)
                throw misplaced(name, in: partition, path: parts[i].path, at: "accounts")
            }
            for k in live where k != i && cursors[k].bytes(0).elementsEqual(id) {
                throw .state(
                    StateFile.Failure(
                        file: parts[k].path, at: "accounts",
                        message:
                            "account \(JSONValue.string(String(decoding: id, as: UTF8.self)).serialized()) is also in \(parts[i].path); the parts overlap"
                    ))
            }
            try target.insert(insert, from: rows, count: 5)
            accounts += 1
            devices += rows.int64(2)
            marks += rows.int64(3)
            if accounts % batch == 0 {
                try target.exec("COMMIT")
                try target.exec("BEGIN IMMEDIATE")
            }
            if try !sources[i].step(rows, or: "cannot read the accounts") { live.remove(at: best) }
        }
        for db in sources where try !db.columns("due").isEmpty {
            let dueRows = try db.prepare("SELECT account, at FROM due ORDER BY account")
            while try db.step(dueRows, or: "cannot read the due index") { try target.insert(insertDueRow, from: dueRows, count: 2) }
        }
        for (key, value) in first.value.sorted(by: { $0.key < $1.key }) where !ownMeta.contains(key) {
            try target.setMeta(key, value)
        }
        // A part holding settings per account (version 3) makes the merge version 3.
        let versions = parts.compactMap { Int64($0.value["version"] ?? "") }
        try target.setMeta("version", String(versions.max() ?? StateFile.version))
        let seqs = Set(parts.map { $0.value["seq"] ?? "0" })
        if seqs.count > 1 { try target.setMeta("seq", String(seqs.compactMap { Int($0) }.max() ?? 0)) }
        if Set(parts.map { $0.value["input"] ?? "" }).count > 1 { try target.setMeta("input", "") }
        // Every input any part recorded, and a queue offset when any part's seq is one.
        for (key, value) in StateRecords(merging: parts.map { StateRecords(meta: $0.value) }).meta { try target.setMeta(key, value) }
        try target.setMeta("accounts", String(accounts))
        try target.setMeta("devices", String(devices))
        try target.setMeta("marks", String(marks))
        try target.finish()
        for db in sources { db.close() }
        syncFile(temp)
        guard System.rename(temp, over: out) else {
            throw .io(FileIO.Failure(path: out, message: "cannot rename \(temp) over it: \(System.errorMessage)"))
        }
        FileIO.syncFolder(of: out)
        done = true
    }
}
