import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

/// The connection and statement types every SQLite call of BadgeFlow goes through, on a
/// real database in a temporary folder.
@Suite struct SQLiteConnectionTests {
    private let folder: TemporaryFolder

    init() throws { folder = try TemporaryFolder() }

    private func database() throws -> (SQLiteConnection, String) {
        let path = folder.file("t.sqlite")
        let db = try SQLiteConnection(path, mode: .create)
        try db.exec("CREATE TABLE t(k TEXT PRIMARY KEY, n INTEGER, b BLOB)")
        return (db, path)
    }

    private static func count(_ db: SQLiteConnection) throws -> Int64 {
        let rows = try db.prepare("SELECT count(*) FROM t")
        #expect(try rows.step(or: "count"))
        return rows.int64(0)
    }

    @Test func aTransactionThatThrowsIsRolledBackAndItsErrorPassedOn() throws {
        let (db, _) = try database()
        let insert = try db.prepare("INSERT INTO t(k, n) VALUES (?1, ?2)")
        let failure = StateFile.Failure(file: "x", at: "", message: "stop")
        let thrown = #expect(throws: StateFile.Failure.self) {
            try db.transaction { () throws(StateFile.Failure) in
                insert.bind(1, "a")
                insert.bind(2, Int64(1))
                _ = try insert.step(or: "insert")
                insert.reset()
                throw failure
            }
        }
        #expect(thrown?.message == "stop")
        #expect(try Self.count(db) == 0)
        try db.transaction { () throws(StateFile.Failure) in
            insert.bind(1, "a")
            insert.bind(2, Int64(1))
            _ = try insert.step(or: "insert")
            insert.reset()
        }
        #expect(try Self.count(db) == 1)
    }

    @Test func aFailedStepNamesWhatFailedTheFileAndSQLitesReason() throws {
        let (db, path) = try database()
        let insert = try db.prepare("INSERT INTO t(k) VALUES (?1)")
        insert.bind(1, "a")
        #expect(try !insert.step(or: "first"))
        insert.reset()
        let error = #expect(throws: StateFile.Failure.self) { try insert.step(or: "cannot write \"a\"") }
        #expect(error?.file == path)
        #expect(error?.message.hasPrefix("cannot write \"a\": ") == true)
        #expect(error?.message.contains("UNIQUE") == true)
    }

    @Test func textAndBlobsRoundTripByTheirLengthWithNUL() throws {
        let (db, _) = try database()
        let insert = try db.prepare("INSERT INTO t(k, b) VALUES (?1, ?2)")
        let key = "a\u{0}b"
        let blob: [UInt8] = [0, 1, 0, 2]
        insert.bind(1, key)
        blob.withUnsafeBytes { insert.bind(2, blob: $0) }
        #expect(try !insert.step(or: "insert"))
        insert.reset()
        insert.bind(1, "")
        insert.bind(2, blob: nil)
        #expect(try !insert.step(or: "insert"))
        let rows = try db.prepare("SELECT k, b FROM t ORDER BY k")
        #expect(try rows.step(or: "read"))
        #expect(rows.text(0) == "")
        #expect(rows.blob(1).isEmpty)
        #expect(try rows.step(or: "read"))
        #expect(rows.text(0) == key)
        #expect(Array(rows.blob(1)) == blob)
        #expect(try !rows.step(or: "read"))
    }

    @Test func aMissingFileOpenedForReadingIsAnErrorNamingIt() throws {
        let error = #expect(throws: StateFile.Failure.self) {
            try SQLiteConnection("/nonexistent-badgeflow/x.sqlite", mode: .readOnly)
        }
        #expect(error?.file == "/nonexistent-badgeflow/x.sqlite")
        #expect(error?.message.hasPrefix("cannot open: ") == true)
    }
}
