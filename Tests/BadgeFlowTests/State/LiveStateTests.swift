import BadgeFlowTestSupport
import Foundation
import Testing

@testable import BadgeFlow

/// `LiveState`: a state kept open for reads while another handle commits checkpoints to it.
@Suite struct LiveStateTests {
    static func push(_ stream: inout BadgeStream, _ seq: Int, account: String, device: String, thread: String) {
        let line =
            #"{"op":"push","account":"\#(account)","device":"\#(device)","at":\#(seq),"payload":{"aps":{"alert":"m","thread-id":"\#(thread)"}}}"#
        _ = stream.apply(LineAnalyzer(rules: .builtIn).analyze(line), seq: seq)
    }

    @Test(arguments: Formats.liveFiles("s"))
    func seesEachCheckpointAfterARefresh(name: String) throws {
        let folder = try TemporaryFolder()
        let path = folder.file(name)
        var stream = BadgeStream(rules: .builtIn)
        stream.tracksChanges = true
        Self.push(&stream, 1, account: "A", device: "d1", thread: "c1")
        // The writer: a store of the format, as a filter holds it.
        let rocks = name.hasSuffix(".rocksdb") ? try RocksDBStore(path: path) : nil
        let lite = name.hasSuffix(".sqlite") ? try SQLiteStore(path: path) : nil
        defer {
            rocks?.close()
            lite?.close()
        }
        func checkpoint(_ seq: Int) throws {
            if let rocks { try rocks.checkpoint(&stream, seq: seq, input: "stdin") }
            if let lite { try lite.checkpoint(&stream, seq: seq, input: "stdin") }
        }
        try rocks?.recordRules(.builtIn)
        try lite?.recordRules(.builtIn)
        try checkpoint(1)

        let live = try LiveState(path: path)
        defer { live.close() }
        #expect(try live.account("A")?.total == 1)
        #expect(try live.account("B") == nil)
        #expect(live.figures?.seq == 1 && live.figures?.accounts == 1)
        // Nothing committed since: no reopen.
        #expect(try live.refresh() == false)

        Self.push(&stream, 2, account: "A", device: "d1", thread: "c2")
        Self.push(&stream, 3, account: "B", device: "b1", thread: "c1")
        try checkpoint(3)
        #expect(try live.refresh() == true)
        let a = try #require(try live.account("A"))
        #expect(a.total == 2)
        #expect(a.jsonLine == (try StoredAccount.read(state: path, account: "A"))?.jsonLine)
        #expect(try live.account("B")?.devices.map(\.id) == ["b1"])
        #expect(live.figures?.seq == 3 && live.figures?.accounts == 2 && live.figures?.reopens == 1)
        #expect(
            String(decoding: a.deviceJSONLine("d1") ?? [], as: UTF8.self)
                == #"{"account":"A","device":"d1","delivered":2,"total":2,"stale":false}"# + "\n")
        #expect(a.deviceJSONLine("d9") == nil)

        live.close()
        #expect(throws: StateFile.Failure.self) { try live.account("A") }
    }

    /// SQLite holds a POSIX lock on `-shm` for as long as it maps the file; a process that
    /// opens and closes the file itself drops that lock (POSIX locks belong to the process),
    /// and another process may then shrink the file under the mapping: the next read is a
    /// SIGBUS (seen once in `badgeflow-serve`'s tests while `state get` ran beside it). After
    /// refreshes, the reader's process still holds its lock on `-shm`.
    @Test func refreshingKeepsSQLitesLockOnTheWALIndex() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        var stream = BadgeStream(rules: .builtIn)
        stream.tracksChanges = true
        Self.push(&stream, 1, account: "A", device: "d1", thread: "c1")
        let writer = try SQLiteStore(path: path)
        try writer.recordRules(.builtIn)
        try writer.checkpoint(&stream, seq: 1, input: "stdin")
        writer.close()

        let live = try LiveState(path: path)
        defer { live.close() }
        #expect(try live.account("A")?.total == 1)
        for _ in 0..<3 { _ = try live.refresh() }
        #expect(try live.account("A")?.total == 1)
        let inode = try #require(try FileManager.default.attributesOfItem(atPath: path + "-shm")[.systemFileNumber] as? UInt64)
        let pid = ProcessInfo.processInfo.processIdentifier
        // /proc/locks: "1: POSIX  ADVISORY  READ 4242 fd:01:1234567 128 128".
        let locks = try String(contentsOfFile: "/proc/locks", encoding: .utf8).split(separator: "\n").filter { line in
            let f = line.split(separator: " ")
            return f.count > 5 && f[1] == "POSIX" && f[4] == "\(pid)" && f[5].hasSuffix(":\(inode)")
        }
        #expect(!locks.isEmpty, "no POSIX lock of this process on s.sqlite-shm after refresh()")
    }

    @Test func aJSONStateIsRefusedWithTheReason() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.json")
        try StateFile.save(BadgeStream(rules: .builtIn), to: path)
        #expect {
            try LiveState(path: path)
        } throws: { error in
            (error as? StateFile.Failure)?.description.contains("a JSON state is saved whole at the end of a run") == true
        }
        #expect(throws: StateFile.Failure.self) { try LiveState(path: folder.file("none.sqlite")) }
    }
}
