internal import CSQLite

/// One SQLite connection: it owns its `sqlite3` handle, and with ``SQLiteStatement`` it is
/// the only code of BadgeFlow that calls SQLite (as the JSON layer is for json-c).
///
/// A connection is used by one thread at a time (it is opened `SQLITE_OPEN_NOMUTEX`); the
/// types holding one say which thread that is.
final class SQLiteConnection {
    /// How a connection opens its file.
    enum Mode {
        /// Reads only; the file must exist.
        case readOnly
        /// Reads and writes an existing file, creating none.
        case readWrite
        /// Reads and writes, creating the file when it is missing.
        case create
    }

    /// The file the connection's failures name (the path, also when opened by a URI).
    let path: String
    private var db: OpaquePointer?

    /// SQLite's process-wide settings, made once before the first connection opens: no
    /// memory statistics, whose mutex every allocation of every connection takes (the
    /// filter's readers and writer, each on its own thread, spent most of their waits on
    /// it). Its result: SQLITE_MISUSE when SQLite was already initialized in this process
    /// (then it keeps its defaults, which are correct, only slower).
    static let configured: Int32 = badgeflow_sqlite_disable_memstatus()

    /// Opens `name` (a path, or with `uri` a `file:` URI) and sets a 5 s busy timeout.
    ///
    /// - Parameter path: the file failures name; `name` when nil.
    /// - Throws: `StateFile.Failure` when SQLite cannot open it.
    init(_ name: String, mode: Mode, uri: Bool = false, path: String? = nil) throws(StateFile.Failure) {
        self.path = path ?? name
        _ = Self.configured
        var flags: Int32
        switch mode {
        case .readOnly: flags = SQLITE_OPEN_READONLY
        case .readWrite: flags = SQLITE_OPEN_READWRITE
        case .create: flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        if uri { flags |= SQLITE_OPEN_URI }
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(name, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        db = handle
        guard rc == SQLITE_OK else {
            let f = failure("cannot open")
            close()
            throw f
        }
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { close() }

    /// Closes the handle (also done on deinit). The statements prepared on it are closed
    /// first by their owners: SQLite closes a connection for good (and the last one to close
    /// removes the WAL files) only once its statements are finalized.
    func close() {
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    /// `what`, with SQLite's message for the connection's last failure, in `path`.
    func failure(_ what: String) -> StateFile.Failure {
        let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
        return StateFile.Failure(file: path, at: "", message: "\(what): \(reason)")
    }

    /// Runs `sql` (one or more statements, no results).
    ///
    /// - Throws: `StateFile.Failure` "cannot run …" when a statement fails.
    func exec(_ sql: String) throws(StateFile.Failure) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw failure("cannot run \(sql.prefix(40))") }
    }

    /// Runs `sql`, whose failure leaves nothing to undo (a pragma that only tunes); returns
    /// whether it ran.
    @discardableResult
    func tryExec(_ sql: String) -> Bool { sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK }

    /// Prepares `sql`; `persistent`: a statement kept for the connection's life.
    ///
    /// - Parameter what: the failure's message (SQLite's reason is added).
    /// - Throws: `StateFile.Failure` when SQLite cannot prepare it.
    func prepare(_ sql: String, persistent: Bool = false, failing what: String? = nil) throws(StateFile.Failure) -> SQLiteStatement {
        var stmt: OpaquePointer?
        let rc =
            persistent
            ? sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
            : sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            sqlite3_finalize(stmt)
            throw failure(what ?? "cannot prepare \(sql.prefix(60))")
        }
        return SQLiteStatement(stmt, on: self)
    }

    /// Runs `body` in a transaction begun with `begin` (`BEGIN IMMEDIATE`: a writer's) and
    /// commits it; when `body` or the commit throws, rolls it back and rethrows.
    func transaction<R>(_ begin: String = "BEGIN IMMEDIATE", _ body: () throws(StateFile.Failure) -> R) throws(StateFile.Failure) -> R {
        try exec(begin)
        do throws(StateFile.Failure) {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            tryExec("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in one read transaction: one snapshot and one lock for many reads (in
    /// WAL mode a reader never waits for the writer). When the transaction cannot begin, the
    /// reads in `body` each take their own.
    func read(_ body: () -> Void) {
        let began = tryExec("BEGIN")
        body()
        // Never left open: later reads would all see this snapshot.
        if began, !tryExec("COMMIT") { tryExec("ROLLBACK") }
    }
}

/// One prepared statement: it owns its `sqlite3_stmt` handle, finalized by ``close()`` or
/// on deinit, and holds its connection open until then.
///
/// Column bytes it hands out are SQLite's, valid until the statement steps, resets or
/// closes.
final class SQLiteStatement {
    private var stmt: OpaquePointer?
    /// The connection it was prepared on (for its failures).
    let connection: SQLiteConnection

    fileprivate init(_ stmt: OpaquePointer, on connection: SQLiteConnection) {
        self.stmt = stmt
        self.connection = connection
    }

    deinit { close() }

    /// Finalizes the statement (also done on deinit).
    func close() {
        sqlite3_finalize(stmt)
        stmt = nil
    }

    /// Resets it to run again (its bindings stay).
    func reset() { sqlite3_reset(stmt) }

    /// Steps it: true for a row, false when done.
    ///
    /// - Parameter what: the failure's message (SQLite's reason is added).
    /// - Throws: `StateFile.Failure` when the step fails.
    func step(or what: @autoclosure () -> String) throws(StateFile.Failure) -> Bool {
        switch sqlite3_step(stmt) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(what())
        }
    }

    /// Binds `text` (copied) to parameter `index` (from 1).
    func bind(_ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bind(index, text: UnsafeRawBufferPointer($0)) }
    }

    /// Binds the UTF-8 `text` (copied) to parameter `index`.
    func bind(_ index: Int32, text: UnsafeRawBufferPointer) {
        // A zero-length text needs an address: a null one would bind NULL.
        let base = text.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
        _ = badgeflow_sqlite_bind_text(stmt, index, base?.assumingMemoryBound(to: CChar.self), Int32(text.count))
    }

    /// Binds the bytes `blob` (copied) to parameter `index`; NULL when nil.
    func bind(_ index: Int32, blob: UnsafeRawBufferPointer?) {
        guard let blob else {
            sqlite3_bind_null(stmt, index)
            return
        }
        _ = badgeflow_sqlite_bind_blob(stmt, index, blob.baseAddress, Int32(blob.count))
    }

    /// Binds `value` to parameter `index`.
    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(stmt, index, value) }

    /// Binds `value` to parameter `index`.
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(stmt, index, value) }

    /// Binds the value in column `column` of `row`'s current row, as it is, to parameter
    /// `index`.
    func bind(_ index: Int32, valueOf row: SQLiteStatement, column: Int32) {
        sqlite3_bind_value(stmt, index, sqlite3_column_value(row.stmt, column))
    }

    /// The text of column `column` (from 0) by its length; empty for NULL.
    func text(_ column: Int32) -> String { String(decoding: bytes(column), as: UTF8.self) }

    /// The bytes of text column `column` (empty for NULL).
    func bytes(_ column: Int32) -> UnsafeRawBufferPointer {
        guard let p = sqlite3_column_text(stmt, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, column)))
    }

    /// The bytes of blob column `column` (empty for NULL).
    func blob(_ column: Int32) -> UnsafeRawBufferPointer {
        guard let p = sqlite3_column_blob(stmt, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, column)))
    }

    /// The integer in column `column`.
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }
}
