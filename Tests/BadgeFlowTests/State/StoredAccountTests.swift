import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

/// `StoredAccount`: one account read from a state of either format (`badgeflow state get`).
@Suite struct StoredAccountTests {
    /// Account "A" with devices d1 and d2 and three chat marks; "B" with one device.
    private static func stream() -> BadgeStream {
        let analyzer = LineAnalyzer(rules: .builtIn)
        var stream = BadgeStream(rules: .builtIn)
        stream.tracksChanges = true
        var seq = 0
        for line in [
            #"{"op":"push","account":"A","device":"d1","at":10,"payload":{"aps":{"alert":"m","thread-id":"c1"}}}"#,
            #"{"op":"push","account":"A","device":"d2","at":11,"payload":{"aps":{"alert":"m","thread-id":"c2"}}}"#,
            #"{"op":"push","account":"A","device":"d1","at":12,"payload":{"aps":{"alert":"m","thread-id":"c3"}}}"#,
            #"{"op":"login","account":"B","device":"b","at":12}"#,
        ] {
            seq += 1
            _ = stream.apply(analyzer.analyze(line), seq: seq)
        }
        return stream
    }

    @Test(arguments: Formats.files("s"))
    func readsOneAccountOfEitherFormat(name: String) throws {
        let folder = try TemporaryFolder()
        let path = folder.file(name)
        var stream = Self.stream()
        if name.hasSuffix(".rocksdb") {
            let store = try RocksDBStore(path: path)
            try store.recordRules(.builtIn)
            try store.checkpoint(&stream, seq: 4, input: "stdin")
            store.close()
        } else if name.hasSuffix(".sqlite") {
            let store = try SQLiteStore(path: path)
            try store.recordRules(.builtIn)
            try store.checkpoint(&stream, seq: 4, input: "stdin")
            store.close()
        } else {
            try StateFile.save(stream, to: path)
        }
        let a = try #require(try StoredAccount.read(state: path, account: "A"))
        #expect(a.id == "A" && a.total == 3)
        #expect(a.nodes.map(\.path) == ["root", "root.chat", "root.chat.c1", "root.chat.c2", "root.chat.c3"])
        #expect(a.nodes.first?.count == 3)
        #expect(a.devices.map(\.id) == ["d1", "d2"])
        #expect(a.devices.map(\.delivered) == [3, 3] && a.devices.allSatisfy { !$0.stale })
        let b = try #require(try StoredAccount.read(state: path, account: "B"))
        #expect(b.total == 0 && b.nodes.isEmpty && b.devices.map(\.id) == ["b"])
        #expect(try StoredAccount.read(state: path, account: "C") == nil)
    }

    @Test func aDeviceIsStaleWhenItsDeliveredNumberIsNotTheTotal() throws {
        var account = try #require(Self.stream().accounts["A"])
        account.devices["d2"]?.delivered = 1
        let view = StoredAccount(id: "A", account: account, icon: .tree)
        #expect(view.devices.map(\.stale) == [false, true])
        #expect(StoredAccount(id: "A", account: account, icon: .payload).devices.allSatisfy { !$0.stale })
    }

    @Test func aMissingSQLiteStateIsAnError() throws {
        let folder = try TemporaryFolder()
        #expect(throws: StateFile.Failure.self) { try StoredAccount.read(state: folder.file("none.sqlite"), account: "A") }
        // A missing JSON state is an empty one.
        #expect(try StoredAccount.read(state: folder.file("none.json"), account: "A") == nil)
    }
}
