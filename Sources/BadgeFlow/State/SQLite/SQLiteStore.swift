#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A state kept in an SQLite database (`--state FILE.sqlite` or `FILE.db`), in WAL mode.
///
/// Its connection and statements are `SQLiteConnection` and `SQLiteStatement`, the only
/// code of BadgeFlow that calls SQLite.
///
/// Schema (schema 2; a database of another version or schema, or without `compact`, is
/// refused at open):
///
/// ```sql
/// CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
/// CREATE TABLE accounts(id TEXT PRIMARY KEY, data TEXT NOT NULL,
///                       devices INTEGER NOT NULL, marks INTEGER NOT NULL,
///                       compact BLOB) WITHOUT ROWID;
/// CREATE TABLE due(account TEXT PRIMARY KEY, at REAL NOT NULL) WITHOUT ROWID;
/// CREATE INDEX due_at ON due(at);
/// ```
///
/// `due` lists the accounts with expiring marks and when the first may be due (a bound:
/// the entry of an account whose marks went is dropped once an `expire` finds nothing
/// there), for a fleet-wide `expire` to find the stored accounts it must load. A writer
/// opening a database without it makes it from the rows' `expires`.
///
/// `meta` holds `format` (`badgeflow-state`), `version` (of the per-account encoding,
/// ``StateFile/version``), `schema` (2), `rules` (the rules' JSON text, when they have one),
/// `seq` (the number of input lines whose results had been written when the last checkpoint
/// committed), `input` (what those lines were read from), and the totals `accounts`,
/// `devices` and `marks`. `accounts.data` is what `StateFile.encodeAccount(_:compact:)`
/// writes for the account with `compact` (compact JSON, a device's default values left out),
/// so both stores hold the same thing. `accounts.compact` is a decode cache of `data` (see
/// <doc:StateFileFormat>), used only while it matches `data`.
///
/// Use from one thread at a time: that is why it is an unchecked Sendable (a connection
/// moves to a `Worker`'s thread once, in a `StorePrefetcher` or `StoreCheckpointer`, and is
/// used there alone, each job handed over and its output back under the worker's lock; its
/// connection is opened without SQLite's own mutex).
package final class SQLiteStore: AccountSource, @unchecked Sendable {
    /// The database's path.
    public let path: String
    /// The schema version written into `meta` and the only one read: 2, rows whose devices
    /// leave out their default values and carry a cache (`compact`).
    public static let schema = 2
    private var db: SQLiteConnection?
    private var selectAccount: SQLiteStatement?
    private var upsertAccount: SQLiteStatement?
    private var upsertMeta: SQLiteStatement?
    private var selectCounts: SQLiteStatement?
    private var selectMeta: SQLiteStatement?
    private var upsertDue: SQLiteStatement?
    private var deleteDue: SQLiteStatement?
    private var selectDue: SQLiteStatement?
    /// `meta.writer` as this connection found it when it opened (nil: none).
    private var openedWriter: String?
    private var writer = JSONWriter()
    /// Reads the accounts' JSON (a connection is used by one thread at a time, as is this).
    private let parser = JSONParser()
    /// The row cache of the account being written (``RowCache``).
    private var cache: [UInt8] = []
    /// Opened read-only on a database without tables: an empty state.
    private var isEmptyDatabase = false
    /// The `meta` table as read at open time and updated by each commit.
    public private(set) var meta: [String: String] = [:]

    /// True when `path` names an SQLite state (ends in `.sqlite` or `.db`).
    public static func isSQLitePath(_ path: String) -> Bool {
        path.hasSuffix(".sqlite") || path.hasSuffix(".db")
    }

    private func failure(_ what: String) -> StateFile.Failure {
        db?.failure(what) ?? StateFile.Failure(file: path, at: "", message: "\(what): the database is closed")
    }

    /// The open connection.
    private func connection() throws(StateFile.Failure) -> SQLiteConnection {
        guard let db else { throw StateFile.Failure(file: path, at: "", message: "the database is closed") }
        return db
    }

    /// Opens (with `create`, creating) the database at `path` and checks that it is a
    /// BadgeFlow state of a version this build reads.
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - readOnly: open for reading only (a missing file is then an error).
    /// - Throws: `StateFile.Failure` when the file is not an SQLite database, is foreign,
    ///   or of another version, or (for writing) has other hard links; the file is left as
    ///   it is.
    public init(path: String, readOnly: Bool = false) throws(StateFile.Failure) {
        self.path = path
        try StateFormat.refuseEmptyFile(path)
        guard readOnly else {
            // SQLite names the WAL and its lock after the path: a writer through another
            // hard link would keep a second log and never see this one's commits.
            var st = stat()
            if stat(path, &st) == 0, st.st_nlink > 1 {
                throw StateFile.Failure(
                    file: path, at: "",
                    message:
                        "the database has \(st.st_nlink) hard links; SQLite keeps its log per name, so writers through the other names would not see each other (keep one name, or copy the file)"
                )
            }
            if !FileIO.exists(path) {
                // Made beside it and renamed into place once its tables are committed: a
                // filter killed while it creates the database leaves no empty file, which
                // would not be a state (`StateFormat/refuseEmptyFile(_:)`).
                let temp = path + ".new-\(getpid())"
                unlink(temp)
                do throws(StateFile.Failure) { try open(temp, readOnly: false) } catch {
                    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temp + suffix) }
                    throw error
                }
                close()
                guard rename(temp, path) == 0 else {
                    let why = String(cString: strerror(errno))
                    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temp + suffix) }
                    throw StateFile.Failure(file: path, at: "", message: "cannot create the database: \(why)")
                }
                meta = [:]
            }
            try open(path, readOnly: false)
            return
        }
        // A reader opens the file for writing when it may, and only reads (`query_only`):
        // the last connection to close removes the `-wal` and `-shm` files, which a read-only
        // one cannot, so `state info` or `tree` would leave them behind.
        if (try? open(path, readOnly: true, writableHandle: true)) != nil {
            db?.tryExec("PRAGMA query_only = 1")
            return
        }
        meta = [:]
        do throws(StateFile.Failure) {
            try open(path, readOnly: true)
        } catch {
            // A WAL database read where its `-shm` file can be neither found nor made (a
            // read-only mount, a copy without it): nobody can be writing it, so it is read
            // as an immutable file. Anything else fails as it did, and so does a database
            // with a rollback journal beside it (immutable reads would not roll it back).
            guard !FileIO.exists(path + "-shm"), !FileIO.exists(path + "-wal"), !FileIO.exists(path + "-journal"), FileIO.exists(path)
            else { throw error }
            meta = [:]
            try open(Self.immutableURI(path), readOnly: true, uri: true)
        }
    }

    /// Opens `name` and checks it; `readOnly`: nothing is written (with `writableHandle`,
    /// through a read-write handle that creates nothing).
    private func open(_ name: String, readOnly: Bool, uri: Bool = false, writableHandle: Bool = false) throws(StateFile.Failure) {
        let mode: SQLiteConnection.Mode = writableHandle ? .readWrite : readOnly ? .readOnly : .create
        db = try SQLiteConnection(name, mode: mode, uri: uri, path: path)
        do throws(StateFile.Failure) {
            try load(readOnly: readOnly)
        } catch {
            close()
            throw error
        }
    }

    /// `file:PATH?immutable=1`, with the bytes a URI reserves percent-encoded.
    static func immutableURI(_ path: String) -> String {
        // An absolute path gets an empty authority (`file:///…`): `file://x/…` would read
        // the first folder of `//x/…` as a host.
        var out = path.hasPrefix("/") ? "file://" : "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out + "?immutable=1"
    }

    deinit { close() }

    /// Closes the database (also done on deinit).
    public func close() {
        for s in [selectAccount, upsertAccount, upsertMeta, selectCounts, selectMeta, upsertDue, deleteDue, selectDue] { s?.close() }
        upsertDue = nil
        deleteDue = nil
        selectDue = nil
        selectMeta = nil
        selectAccount = nil
        upsertAccount = nil
        upsertMeta = nil
        selectCounts = nil
        db?.close()
        db = nil
    }

    private func exec(_ sql: String) throws(StateFile.Failure) { try connection().exec(sql) }

    /// A statement kept until the store closes.
    /// `PRAGMA data_version` on this connection: it moves whenever another connection
    /// commits (a filter's checkpoint), and only then; nil when the database is closed or
    /// the pragma fails. Values compare only with earlier ones of the same connection.
    func dataVersion() -> Int64? {
        guard let db, let rows = try? db.prepare("PRAGMA data_version") else { return nil }
        defer { rows.close() }
        guard (try? rows.step(or: "cannot read data_version")) == true else { return nil }
        return rows.int64(0)
    }

    private func prepare(_ sql: String) throws(StateFile.Failure) -> SQLiteStatement {
        try connection().prepare(sql, persistent: true, failing: "not a BadgeFlow state database (cannot prepare \(sql.prefix(40)))")
    }

    private func load(readOnly: Bool) throws(StateFile.Failure) {
        // A file that is not a database fails here ("file is not a database").
        let db = try connection()
        var tables: [String] = []
        let list = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'", failing: "not an SQLite database")
        while try list.step(or: "not an SQLite database") { tables.append(list.text(0)) }
        list.close()
        if tables.isEmpty {
            if readOnly {
                // An empty database (an empty file, or a filter killed while it created the
                // tables) is an empty state, as a missing file is; a writer creates the tables.
                meta = [
                    "format": StateFile.format, "version": String(StateFile.version), "schema": String(Self.schema),
                    "seq": "0", "input": "", "accounts": "0", "devices": "0", "marks": "0",
                ]
                isEmptyDatabase = true
                return
            }
            try exec("PRAGMA journal_mode = WAL")
            try db.transaction("BEGIN") { () throws(StateFile.Failure) in
                try db.exec(
                    """
                    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
                    CREATE TABLE accounts(id TEXT PRIMARY KEY, data TEXT NOT NULL,
                                          devices INTEGER NOT NULL, marks INTEGER NOT NULL,
                                          compact BLOB) WITHOUT ROWID;
                    INSERT INTO meta VALUES ('format', '\(StateFile.format)'), ('version', '\(StateFile.version)'),
                      ('schema', '\(Self.schema)'), ('seq', '0'), ('input', ''), ('accounts', '0'), ('devices', '0'), ('marks', '0');
                    """)
            }
        } else if !readOnly {
            try exec("PRAGMA journal_mode = WAL")
        }
        guard tables.isEmpty || (tables.contains("meta") && tables.contains("accounts")) else {
            throw StateFile.Failure(file: path, at: "", message: "not a BadgeFlow state database (no meta and accounts tables)")
        }
        if !readOnly {
            try exec("PRAGMA synchronous = FULL")
            try exec("PRAGMA cache_size = -49152")
        }
        let rows = try db.prepare("SELECT key, value FROM meta", failing: "cannot read meta")
        while try rows.step(or: "cannot read meta") { meta[rows.text(0)] = rows.text(1) }
        rows.close()
        guard meta["format"] == StateFile.format else {
            throw StateFile.Failure(
                file: path, at: "meta.format", message: "not a BadgeFlow state database (no format \(StateFile.format))")
        }
        // Earlier schemas (and databases without the cache column) were written only by
        // pre-release builds.
        guard let version = meta["version"], StateFile.databaseVersions.contains(version), meta["schema"] == String(Self.schema),
            try columns("accounts").contains("compact")
        else {
            let column = meta["schema"] == String(Self.schema) ? ", without the compact column" : ""
            throw StateFile.Failure(
                file: path, at: "meta.version",
                message:
                    "state version \(meta["version"] ?? "none") (schema \(meta["schema"] ?? "none")\(column)) is not supported; this BadgeFlow reads version \(StateFile.version) or \(StateFile.settingsVersion), schema \(Self.schema)"
            )
        }
        if !readOnly {
            upsertMeta = try prepare("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            selectMeta = try prepare("SELECT value FROM meta WHERE key = ?1")
            openedWriter = meta["writer"]
            if !tables.contains("due") { try createDueIndex() }
            upsertDue = try prepare("INSERT INTO due(account, at) VALUES (?1, ?2) ON CONFLICT(account) DO UPDATE SET at = excluded.at")
            deleteDue = try prepare("DELETE FROM due WHERE account = ?1")
            selectDue = try prepare("SELECT account FROM due WHERE at <= ?1 ORDER BY at, account")
            upsertAccount = try prepare(
                "INSERT INTO accounts(id, data, devices, marks, compact) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(id) DO UPDATE SET data = excluded.data, devices = excluded.devices, marks = excluded.marks, compact = excluded.compact"
            )
        }
        selectAccount = try prepare("SELECT data, compact FROM accounts WHERE id = ?1")
        selectCounts = try prepare("SELECT devices, marks FROM accounts WHERE id = ?1")
    }

    /// Creates the `due` table, the index of accounts with expiring marks by when the first
    /// may be due, filled from the rows (a database that an earlier build made has none).
    private func createDueIndex() throws(StateFile.Failure) {
        let db = try connection()
        try db.transaction { () throws(StateFile.Failure) in
            try db.exec(
                """
                CREATE TABLE IF NOT EXISTS due(account TEXT PRIMARY KEY, at REAL NOT NULL) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS due_at ON due(at);
                INSERT OR REPLACE INTO due(account, at)
                  SELECT id, (SELECT min(value) FROM json_each(data, '$.expires')) FROM accounts
                  WHERE json_type(data, '$.expires') = 'object';
                """)
        }
    }

    /// The accounts stored with a mark that may be due at or before `time` (``AccountSource``):
    /// read from the `due` index, not from the rows.
    public func accountsDue(through time: Double) throws(StateFile.Failure) -> [String] {
        guard let selectDue else { return [] }
        selectDue.reset()
        selectDue.bind(1, time)
        defer { selectDue.reset() }
        var ids: [String] = []
        while try selectDue.step(or: "cannot read the due index") { ids.append(selectDue.text(0)) }
        return ids
    }

    /// The names of `table`'s columns.
    private func columns(_ table: String) throws(StateFile.Failure) -> [String] {
        let what = "cannot read the columns of \(table)"
        let stmt = try connection().prepare("SELECT name FROM pragma_table_info('\(table)')", failing: what)
        defer { stmt.close() }
        var names: [String] = []
        while try stmt.step(or: what) { names.append(stmt.text(0)) }
        return names
    }

    /// Runs `body` in one read transaction: one snapshot and one lock for many reads (in WAL
    /// mode a reader never waits for the writer). When the transaction cannot begin, the
    /// reads in `body` each take their own.
    func read(_ body: () -> Void) {
        guard let db else { return body() }
        db.read(body)
    }

    /// Sets the page cache of this connection to about `kib` KiB (48 MiB for a writing
    /// connection, SQLite's 2 MiB default for a read-only one, unless set).
    public func setCacheSize(kib: Int) {
        db?.tryExec("PRAGMA cache_size = -\(max(kib, 64))")
    }

    /// The number of input lines whose results were written when the last checkpoint committed.
    public var seq: Int { Int(meta["seq"] ?? "") ?? 0 }
    /// What those lines were read from (`StoreCheckpointer.begin(_:seq:input:)`); empty when unknown.
    public var input: String { meta["input"] ?? "" }
    /// The number of accounts stored.
    public var accountCount: Int { Int(meta["accounts"] ?? "") ?? 0 }
    /// The number of devices of all stored accounts.
    public var deviceCount: Int { Int(meta["devices"] ?? "") ?? 0 }
    /// The number of marks of all stored accounts.
    public var markCount: Int { Int(meta["marks"] ?? "") ?? 0 }

    /// The rules the state was written with; nil when none were recorded.
    ///
    /// - Throws: `StateFile.Failure` when the recorded rules do not compile.
    public func recordedRules() throws(StateFile.Failure) -> RuleSet? {
        guard let text = meta["rules"], !text.isEmpty else { return nil }
        do { return try RuleSet.parse(text, file: path + " (recorded rules)") } catch {
            throw StateFile.Failure(file: path, at: "meta.rules" + error.at, message: error.message)
        }
    }

    /// The stored JSON of account `id` (`StateFile.encodeAccount(_:compact:)`); nil when absent.
    public func accountJSON(_ id: String) throws(StateFile.Failure) -> String? {
        try withAccountRow(id) { bytes, _ in String(decoding: bytes, as: UTF8.self) }
    }

    /// Loads account `id` (``AccountSource``).
    public func loadAccount(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        try withAccountRow(id) { (bytes, cache) throws(StateFile.Failure) in try decodeRow(id, bytes, cache, rules: rules) }
    }

    /// Whether account `id`'s row has a cache that matches its JSON under `rules`
    /// (``RowCache``); false when there is no such row.
    func hasMatchingCache(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Bool {
        try withAccountRow(id) { bytes, cache in
            guard let seed = rules.rowCacheSeed else { return false }
            return RowCache.decode(cache, json: bytes, seed: seed, rules: rules) != nil
        } ?? false
    }

    /// Calls `body` with the bytes of account `id`'s JSON and of its cache (empty when
    /// none) where SQLite holds them (valid only during the call: no String is made); nil
    /// when there is no such row.
    private func withAccountRow<R>(
        _ id: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StateFile.Failure) -> R
    ) throws(StateFile.Failure) -> R? {
        if isEmptyDatabase { return nil }
        guard let selectAccount else { throw failure("cannot read account \"\(id)\"") }
        selectAccount.reset()
        selectAccount.bind(1, id)
        defer { selectAccount.reset() }
        guard try selectAccount.step(or: "cannot read account \"\(id)\"") else { return nil }
        return try body(selectAccount.bytes(0), selectAccount.blob(1))
    }

    /// The account stored as `text` (with the cache `cache`) under `id`: from the cache when
    /// it matches the text, else from the text.
    private func decodeRow(
        _ id: String, _ text: UnsafeRawBufferPointer, _ cache: UnsafeRawBufferPointer, rules: RuleSet
    ) throws(StateFile.Failure) -> Account {
        var account: Account
        if let seed = rules.rowCacheSeed, let cached = RowCache.decode(cache, json: text, seed: seed, rules: rules) {
            account = cached
        } else {
            account = try StateFile.decodeAccount(text: text, with: parser, at: "accounts[\"\(id)\"]", file: path, rules: rules)
        }
        return account
    }

    /// Every stored account id with its JSON, in id order.
    ///
    /// - Throws: `StateFile.Failure` when the rows cannot be read, or a row's id holds U+0000
    ///   (a state cannot keep it as a key), or when `body` throws.
    public func forEachAccount(_ body: (String, String) throws(StateFile.Failure) -> Void) throws(StateFile.Failure) {
        try forEachRow { (id, bytes, _) throws(StateFile.Failure) in try body(id, String(decoding: bytes, as: UTF8.self)) }
    }

    /// Every stored account read with `rules`, one row at a time, in id order
    /// (``AccountSource``: a fleet-wide `reconcile`).
    public func forEachStoredAccount(
        rules: RuleSet, _ body: (String, consuming Account) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) {
        try forEachRow { (id, bytes, cache) throws(StateFile.Failure) in try body(id, try decodeRow(id, bytes, cache, rules: rules)) }
    }

    /// Checks that every stored account still fits `rules` (a state opened with rules other
    /// than the recorded ones): every mark's path is valid in their tree, under the same root.
    ///
    /// - Throws: `StateFile.Failure` naming the first account (in id order) and mark that
    ///   does not fit, and why; or when the rows cannot be read.
    public func checkFits(_ rules: RuleSet) throws(StateFile.Failure) {
        try forEachRow { (id, bytes, _) throws(StateFile.Failure) in
            _ = try StateFile.decodeAccount(text: bytes, with: parser, at: "accounts[\"\(id)\"]", file: path, rules: rules)
        }
    }

    /// Every stored account id with the bytes of its JSON and of its cache where SQLite
    /// holds them, in id order.
    private func forEachRow(
        _ body: (String, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) {
        if isEmptyDatabase { return }
        let stmt = try connection().prepare("SELECT id, data, compact FROM accounts ORDER BY id", failing: "cannot read accounts")
        defer { stmt.close() }
        while try stmt.step(or: "cannot read accounts") {
            // The id by its length: `String(cString:)` would cut an id at a U+0000 and merge
            // it into another account. Such an id cannot be a JSON key either (JSONParser).
            let id = stmt.text(0)
            guard !id.utf8.contains(0) else {
                throw StateFile.Failure(
                    file: path, at: "accounts",
                    message:
                        "account id \"\(id.split(separator: "\u{0}", omittingEmptySubsequences: false).joined(separator: "\\u0000"))\" holds U+0000, which a state does not keep (fix or delete that row with the sqlite3 shell)"
                )
            }
            try body(id, stmt.bytes(1), stmt.blob(2))
        }
    }

    /// A stream holding the stored accounts `ids` (those that exist), or every account when
    /// `ids` is nil; its accounts count as unchanged.
    ///
    /// - Parameters:
    ///   - rules: the rules the accounts are read with.
    ///   - ids: the accounts to read; nil for all.
    ///   - compact: hold the accounts in compact form (``BadgeStream/compact(keeping:)``).
    /// - Throws: `StateFile.Failure` when a row cannot be read or decoded, or (reading every
    ///   account) a row's id holds U+0000.
    public func stream(rules: RuleSet, accounts ids: [String]? = nil, compact: Bool = false) throws(StateFile.Failure) -> BadgeStream {
        var stream = BadgeStream(rules: rules)
        if let ids {
            for id in ids {
                if let a = try loadAccount(id, rules: rules) { stream.addLoaded(a, as: id, compact: compact, stored: true) }
            }
            return stream
        }
        try forEachRow { (id, bytes, cache) throws(StateFile.Failure) in
            stream.addLoaded(try decodeRow(id, bytes, cache, rules: rules), as: id, compact: compact, stored: true)
        }
        return stream
    }

    /// Writes every account of `stream` (e.g. one loaded from a JSON state) in one
    /// transaction, and records its rules.
    ///
    /// - Throws: `StateFile.Failure` when the transaction fails.
    public func store(_ stream: BadgeStream) throws(StateFile.Failure) {
        try recordRules(stream.rules)
        // Straight from the stream's table: no copy of it (marking every account changed
        // would make one) and no list of a million accounts on the side.
        let all = stream.table.residentForStore
        _ = try commit(all, seq: seq, input: input, cacheSeed: stream.rules.rowCacheSeed, returningCounts: false, thenCompact: stream)
    }

    /// Records `partition` (a part of a split state) as its meta rows (``StatePartition/metaRows``).
    ///
    /// - Throws: `StateFile.Failure` when the write fails.
    package func recordPartition(_ partition: StatePartition) throws(StateFile.Failure) {
        try connection().transaction { () throws(StateFile.Failure) in
            for (key, value) in partition.metaRows { try setMeta(key, value) }
        }
    }

    package func recordMeta(_ entries: [String: String]) throws(StateFile.Failure) {
        try connection().transaction { () throws(StateFile.Failure) in
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) where meta[key] != value { try setMeta(key, value) }
        }
    }

    /// This process, as `meta.writer` names the last process that committed.
    static let processToken: String = {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return "pid \(getpid()) started \(t.tv_sec).\(t.tv_nsec)"
    }()

    /// Inside a commit's transaction: refuses to go on when another process committed to
    /// the database since this connection opened it (a second writer that the lock file did
    /// not stop, e.g. through a hard link), whose accounts this commit could overwrite with
    /// older copies; else records this process as the writer.
    private func claimWriter() throws(StateFile.Failure) {
        guard let selectMeta else { throw failure("cannot read meta") }
        selectMeta.reset()
        selectMeta.bind(1, "writer")
        defer { selectMeta.reset() }
        let current = try selectMeta.step(or: "cannot read meta") ? selectMeta.text(0) : nil
        if current == Self.processToken { return }
        guard current == openedWriter else {
            throw StateFile.Failure(
                file: path, at: "meta.writer",
                message:
                    "another process (\(current ?? "unknown")) committed to this state since this one opened it; its changes were not overwritten"
            )
        }
        try setMeta("writer", Self.processToken)
    }

    private func setMeta(_ key: String, _ value: String) throws(StateFile.Failure) {
        guard let upsertMeta else { throw failure("cannot write meta \(key)") }
        upsertMeta.reset()
        upsertMeta.bind(1, key)
        upsertMeta.bind(2, value)
        defer { upsertMeta.reset() }
        _ = try upsertMeta.step(or: "cannot write meta \(key)")
        meta[key] = value
    }

    /// Records the rules' JSON text (nothing for rules built in code).
    ///
    /// - Throws: `StateFile.Failure` when the write fails.
    public func recordRules(_ rules: RuleSet) throws(StateFile.Failure) {
        guard let value = rules.sourceValue else { return }
        let text = value.serialized(pretty: true)
        guard meta["rules"] != text else { return }
        try connection().transaction { () throws(StateFile.Failure) in try setMeta("rules", text) }
    }

    private func storedCounts(_ id: String) throws(StateFile.Failure) -> (Int, Int)? {
        guard let selectCounts else { throw failure("cannot read account \"\(id)\"") }
        selectCounts.reset()
        selectCounts.bind(1, id)
        defer { selectCounts.reset() }
        guard try selectCounts.step(or: "cannot read account \"\(id)\"") else { return nil }
        return (Int(selectCounts.int64(0)), Int(selectCounts.int64(1)))
    }

    /// The totals of `meta` (`accounts`, `devices`, `marks`) as a commit updates them.
    private struct Totals {
        var accounts: Int
        var devices: Int
        var marks: Int
        /// An account written holds settings of its own (the state becomes version 3).
        var settings = false
    }

    /// Inside a commit's transaction: encodes account `a` (compact JSON by JSONWriter, no
    /// json-c objects in between, and with `seed` its cache) and writes its row and its
    /// entry of the due index, adding its counts to `totals`. The one per-row writer of
    /// ``commit(_:seq:input:cacheSeed:rules:returningCounts:thenCompact:)``'s two orders.
    private func writeRow(_ changed: ChangedAccount, cacheSeed seed: UInt64?, totals: inout Totals) throws(StateFile.Failure) {
        // The account read in place: binding it copies it (a retain and release of each part).
        let id = changed.id
        guard let upsertAccount, let upsertDue, let deleteDue else { throw failure("cannot write account \"\(id)\"") }
        let d = changed.account.devices.count, m = changed.account.tree.markCount
        if !changed.account.contributions.isEmpty { totals.settings = true }
        var old = changed.storedCounts.map { ($0.devices, $0.marks) }
        if old == nil { old = try storedCounts(id) }
        if let (od, om) = old {
            totals.devices += d - od
            totals.marks += m - om
        } else {
            totals.accounts += 1
            totals.devices += d
            totals.marks += m
        }
        writer.removeAll()
        StateFile.writeAccount(changed.account, compact: true, into: &writer)
        upsertAccount.reset()
        upsertAccount.bind(1, id)
        writer.withUnsafeBytes { json in
            upsertAccount.bind(2, text: json)
            if let seed { RowCache.encode(changed.account, json: json, seed: seed, into: &cache) }
        }
        if seed != nil {
            cache.withUnsafeBytes { upsertAccount.bind(5, blob: $0) }
        } else {
            upsertAccount.bind(5, blob: nil)
        }
        upsertAccount.bind(3, Int64(d))
        upsertAccount.bind(4, Int64(m))
        defer { upsertAccount.reset() }
        _ = try upsertAccount.step(or: "cannot write account \"\(id)\"")
        // The due index: kept for accounts with expiring marks; an entry that outlived its
        // marks goes once an `expire` found nothing due there (`dueStale`).
        if let due = changed.account.tree.earliestPendingExpiry {
            upsertDue.reset()
            upsertDue.bind(1, id)
            upsertDue.bind(2, due)
            defer { upsertDue.reset() }
            _ = try upsertDue.step(or: "cannot write the due index of account \"\(id)\"")
        } else if changed.dueStale {
            deleteDue.reset()
            deleteDue.bind(1, id)
            defer { deleteDue.reset() }
            _ = try deleteDue.step(or: "cannot write the due index of account \"\(id)\"")
        }
    }

    /// Writes `changed` and `seq` read from `input` in one transaction (a checkpoint, as
    /// a `StoreCheckpointer` runs it); returns each account's stored device and mark counts.
    /// Each row gets a cache (``RowCache``) checked with `cacheSeed`, the
    /// ``RuleSet/rowCacheSeed`` of the accounts' rules (nil: no cache). With `rules` (their
    /// JSON text), the rules are recorded in the same transaction when they differ.
    ///
    /// Its two callers: a checkpoint (an array of changed accounts, written in key order) and
    /// ``store(_:)`` (a whole stream, with `holder`'s compact accounts expanded one by one).
    ///
    /// - Throws: `StateFile.Failure` when the transaction fails; nothing of it is then kept.
    func commit<Changed: Collection<ChangedAccount>>(
        _ changed: Changed, seq: Int, input: String, cacheSeed seed: UInt64?, rules: String? = nil,
        returningCounts: Bool = true,
        thenCompact holder: BadgeStream? = nil, owed: [Deliveries.Owed] = [], ruleSet: RuleSet? = nil
    ) throws(StateFile.Failure) -> [(String, (Int, Int))] {
        var totals = Totals(accounts: accountCount, devices: deviceCount, marks: markCount)
        let before = meta
        do throws(StateFile.Failure) {
            try connection().transaction { () throws(StateFile.Failure) in
                try claimWriter()
                // Numbers a fleet-wide reconcile sent to stored accounts: each row read, changed
                // and written back, one at a time, before the changed accounts (which hold
                // theirs already, and are written after).
                if let ruleSet {
                    for o in owed {
                        for i in o.deliveries.ids.indices where !o.skipped[i] {
                            let id = o.deliveries.ids[i]
                            guard var account = try loadAccount(id, rules: ruleSet) else { continue }
                            o.deliveries.apply(i, to: &account)
                            let counts = (devices: account.devices.count, marks: account.tree.markCount)
                            try writeRow(ChangedAccount(id: id, account: account, storedCounts: counts), cacheSeed: seed, totals: &totals)
                        }
                    }
                }
                if holder == nil, let unsorted = changed as? [ChangedAccount] {
                    // A checkpoint's accounts are written in key order. The changed accounts of
                    // a fleet are spread over the whole table; in key order each leaf page is
                    // read and changed once and done with, where in arrival order a page could
                    // leave the cache (into the WAL) and be read back for a later row. The
                    // whole uniform fleet run: wall and CPU -8 to -13% (in pairs; git log).
                    // A sorted copy (184 bytes an account while the commit lasts): sorting
                    // indices instead, or comparing UTF-8 views, measured 10-20% slower over
                    // the whole run. String's `<` is SQLite's byte order for ASCII and NFC
                    // ids; other ids only lose locality.
                    for c in unsorted.sorted(by: { $0.id < $1.id }) { try writeRow(c, cacheSeed: seed, totals: &totals) }
                } else {
                    // `changed`, then the compact accounts of `holder`, each expanded in turn.
                    var compactIDs = holder?.compacted.ids ?? []
                    var rest = changed.makeIterator()
                    while true {
                        if let c = rest.next() {
                            try writeRow(c, cacheSeed: seed, totals: &totals)
                        } else if let holder, let last = compactIDs.popLast() {
                            guard let found = try holder.compacted.account(last, rules: holder.rules) else { continue }
                            try writeRow(ChangedAccount(id: last, account: found), cacheSeed: seed, totals: &totals)
                        } else {
                            break
                        }
                    }
                }
                if let rules, meta["rules"] != rules { try setMeta("rules", rules) }
                // Settings per account: builds that read only version 2 must refuse the state.
                if totals.settings, meta["version"] != String(StateFile.settingsVersion) {
                    try setMeta("version", String(StateFile.settingsVersion))
                }
                try setMeta("seq", String(seq))
                try setMeta("input", input)
                try setMeta("accounts", String(totals.accounts))
                try setMeta("devices", String(totals.devices))
                try setMeta("marks", String(totals.marks))
            }
        } catch {
            meta = before
            throw error
        }
        guard returningCounts else { return [] }
        return changed.map { ($0.id, ($0.account.devices.count, $0.account.tree.markCount)) }
    }
}
