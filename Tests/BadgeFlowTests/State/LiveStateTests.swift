import BadgeFlowTestSupport
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
