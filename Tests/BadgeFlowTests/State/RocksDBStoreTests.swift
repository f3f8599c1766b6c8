import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The RocksDB store, its read-ahead and its background checkpoints, on real databases in a
/// temporary folder.
@Suite struct RocksDBStoreTests {
    private static func json(_ a: Account) -> String { StateFile.encodeAccount(a) }

    /// A new state at `path` that recorded the built-in rules and committed a stream of
    /// `accounts` at `seq`: the store (open to write) and the stream.
    private static func committed(_ accounts: [String], seq: Int, at path: String) throws -> (RocksDBStore, BadgeStream) {
        var stream = StoreFixtures.stream(accounts: accounts)
        let store = try RocksDBStore(path: path)
        try store.recordRules(.builtIn)
        try store.checkpoint(&stream, seq: seq, input: "stdin")
        return (store, stream)
    }

    /// A checkpoint puts its accounts in key order (bytewise, as RocksDB sorts keys): ids
    /// sharing their first 8 bytes, shorter than 8, equal up to a length, and of several
    /// UTF-8 lengths, in a shuffled order.
    @Test func aCheckpointPutsItsAccountsInTheOrderOfTheirKeys() {
        var state: UInt64 = 0x5EED
        func next() -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
        }
        let prefixes = ["", "a", "account-", "account-1", "é", "日本", "a\u{7F}", "zz"]
        let tails = ["", "0", "1", "10", "9", "é", "x日", "~", "A"]
        var ids: Set<String> = []
        while ids.count < 400 {
            var id = prefixes[next() % prefixes.count]
            for _ in 0..<(next() % 3) { id += tails[next() % tails.count] }
            ids.insert(id)
        }
        let changed = ids.map { ChangedAccount(id: $0, account: Account(rules: .builtIn)) }
        let ordered = RocksDBStore.keyOrder(changed).map { changed[$0].id }
        let expected = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(ordered == expected)
        #expect(Set(RocksDBStore.keyOrder(changed)).count == changed.count)
    }

    @Test func accountsAndMetaRoundTripAndSurviveAReopen() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.rocksdb")
        var stream = StoreFixtures.stream(accounts: ["alice", "bob"])
        do {
            let store = try RocksDBStore(path: path)
            try store.recordRules(.builtIn)
            try store.checkpoint(&stream, seq: 8, input: "stdin")
            #expect(stream.changedCount == 0)
            #expect(store.accountCount == 2 && store.deviceCount == 2 && store.markCount == 6 && store.seq == 8)
            store.close()
        }
        let reopened = try RocksDBStore(path: path, readOnly: true)
        #expect(reopened.meta["format"] == StateFile.format && reopened.meta["layout"] == "2")
        #expect(reopened.seq == 8 && reopened.input == "stdin" && reopened.accountCount == 2 && reopened.markCount == 6)
        #expect(try reopened.recordedRules()?.fingerprint == RuleSet.builtIn.fingerprint)
        for id in ["alice", "bob"] {
            let loaded = try #require(try reopened.loadAccount(id, rules: .builtIn))
            #expect(Self.json(loaded) == Self.json(try #require(stream.accounts[id])))
        }
        #expect(try reopened.loadAccount("carol", rules: .builtIn) == nil)
        // What an SQLite row would hold, in id order.
        var ids: [String] = []
        var texts: [String: String] = [:]
        try reopened.forEachAccount { id, text in
            ids.append(id)
            texts[id] = text
        }
        for (id, text) in texts {
            #expect(text == StateFile.encodeAccount(try #require(stream.accounts[id]), compact: true))
        }
        #expect(ids == ["alice", "bob"])
    }

    /// The totals of a second checkpoint count an account rewritten once, not twice.
    @Test func aSecondCheckpointKeepsTheTotalsAndTheLastValues() throws {
        let folder = try TemporaryFolder()
        let store = try RocksDBStore(path: folder.file("s.rocksdb"))
        var stream = StoreFixtures.stream(accounts: ["a", "b", "c"])
        try store.checkpoint(&stream, seq: 12, input: "in")
        let analyzer = LineAnalyzer(rules: .builtIn)
        _ = stream.apply(analyzer.analyze(#"{"op":"clear","account":"a","device":"d0","path":"root.mail"}"#), seq: 13)
        try store.checkpoint(&stream, seq: 13, input: "in")
        #expect(store.seq == 13 && store.accountCount == 3 && store.deviceCount == 3 && store.markCount == 8)
        let a = try #require(try store.loadAccount("a", rules: .builtIn))
        #expect(a.tree.markCount == 2)
    }

    /// `filter --block-cache`: a RocksDB state's writer takes the size given (a checkpoint
    /// and a read through the resized cache still work); JSON and SQLite states have no block
    /// cache and say so.
    @Test func onlyARocksDBStateHasABlockCacheToSize() throws {
        let folder = try TemporaryFolder()
        let rocks = try RocksDBStateStore(path: folder.file("s.rocksdb"), readOnly: false)
        defer { rocks.close() }
        #expect(rocks.store.blockCacheCapacity == RocksDBStore.blockCacheBytes)
        #expect(rocks.setBlockCache(bytes: 160 << 20))
        #expect(rocks.store.blockCacheCapacity == 160 << 20)
        #expect(rocks.setBlockCache(bytes: 2 << 20))
        #expect(rocks.store.blockCacheCapacity == 2 << 20)
        var stream = StoreFixtures.stream(accounts: ["a", "b"])
        try rocks.store.checkpoint(&stream, seq: 2, input: "in")
        #expect(try rocks.store.loadAccount("b", rules: .builtIn) != nil)

        let sqlite = try SQLiteStateStore(path: folder.file("s.sqlite"), readOnly: false)
        defer { sqlite.close() }
        #expect(!sqlite.setBlockCache(bytes: 160 << 20))
        let json = try JSONStateStore(path: folder.file("s.json"), readOnly: false)
        #expect(!json.setBlockCache(bytes: 160 << 20))
    }

    @Test func thePrefetcherAndTheCheckpointerShareTheWritersHandle() throws {
        let folder = try TemporaryFolder()
        let store = try RocksDBStore(path: folder.file("s.rocksdb"))
        let checkpointer = StoreCheckpointer.over(StoreConnection(store, owned: false))
        var stream = StoreFixtures.stream(accounts: (0..<600).map { "u\($0)" })
        checkpointer.begin(&stream, seq: 2400, input: "stdin")
        #expect(checkpointer.isPending)
        try checkpointer.finish(&stream)
        #expect(store.seq == 2400 && store.accountCount == 600)
        let prefetcher = StorePrefetcher.over(Array(repeating: StoreConnection(store, owned: false), count: 2))
        #expect(prefetcher.collect().isEmpty)
        // More than splitAbove: both readers, each with half.
        let wanted = (0..<599).map { "u\($0)" } + ["nobody"]
        prefetcher.request(wanted)
        let got = prefetcher.collect()
        #expect(got.count == 600)
        #expect(got.keys.contains("nobody") && (got["nobody"] ?? nil) == nil)
        for id in ["u0", "u299", "u300", "u598"] {
            let a = try #require(got[id] ?? nil)
            #expect(Self.json(a) == Self.json(try #require(stream.accounts[id])))
        }
        // Accounts to free, shared out between the readers with the ids (301: uneven),
        // change nothing read.
        let released = (0..<301).compactMap { (got["u\($0)"] ?? nil).map(AccountBox.init) }
        #expect(released.count == 301)
        prefetcher.request(wanted, releasing: released)
        let again = prefetcher.collectParts()
        #expect(again.count == 2 && again.map(\.count).reduce(0, +) == 600)
        for part in again {
            // In the order asked, each with its hash.
            #expect(part.hashes == part.ids.map(IDIndex.hash))
            #expect(part.ids == wanted.filter(part.ids.contains))
            for (id, account) in part.dictionary() { #expect(account.map(Self.json) == (got[id] ?? nil).map(Self.json)) }
        }
        prefetcher.request(["u1"], releasing: [])
        #expect(prefetcher.collect().count == 1)
        // Two requests outstanding (one split between the readers, one not): each collect
        // takes the oldest, with its own accounts.
        #expect(prefetcher.requestsAhead == 2)
        prefetcher.request(wanted)
        prefetcher.request(["u7", "nobody"])
        #expect(Set(prefetcher.collect().keys) == Set(wanted))
        #expect(Set(prefetcher.collect().keys) == ["u7", "nobody"])
        prefetcher.request(["u2"])
        prefetcher.request(wanted)
        #expect(Array(prefetcher.collect().keys) == ["u2"])
        #expect(prefetcher.collectParts().count == 2)
        #expect(prefetcher.collect().isEmpty)
        prefetcher.close()
        checkpointer.close()
    }

    @Test func aReaderSeesTheLastCheckpointWhileTheWriterGoesOn() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.rocksdb")
        let writer = try RocksDBStore(path: path)
        var stream = StoreFixtures.stream(accounts: ["a"])
        try writer.checkpoint(&stream, seq: 4, input: "stdin")
        let reader = try RocksDBStore(path: path, readOnly: true)
        #expect(reader.seq == 4 && reader.accountCount == 1)
        #expect(try reader.loadAccount("a", rules: .builtIn) != nil)
        // The writer is not blocked by the reader; the reader keeps what it opened.
        var more = StoreFixtures.stream(accounts: ["b"])
        try writer.checkpoint(&more, seq: 8, input: "stdin")
        #expect(writer.seq == 8)
        #expect(try reader.loadAccount("b", rules: .builtIn) == nil)
        let later = try RocksDBStore(path: path, readOnly: true)
        #expect(later.seq == 8 && later.accountCount == 2)
        #expect(try later.loadAccount("b", rules: .builtIn) != nil)
        // A reader cannot write.
        var again = StoreFixtures.stream(accounts: ["c"])
        #expect(throws: StateFile.Failure.self) { try later.checkpoint(&again, seq: 9, input: "stdin") }
        #expect(again.changedCount == 1)
    }

    @Test func aSecondWriterInTheSameProcessIsRefused() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.rocksdb")
        let first = try RocksDBStore(path: path)
        let failure = #expect(throws: StateFile.Failure.self) { _ = try RocksDBStore(path: path) }
        #expect(failure?.message.contains("in use") == true, "\(failure?.message ?? "")")
        first.close()
        _ = try RocksDBStore(path: path)
    }

    @Test func aFileAForeignFolderAndAMissingFolderAreRefusedAndLeftAlone() throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("f.rocksdb", Array("hello".utf8))
        let asFile = #expect(throws: StateFile.Failure.self) { _ = try RocksDBStore(path: file) }
        #expect(asFile?.message.contains("a file") == true)
        #expect(try FileIO.readString(file) == "hello")
        // A folder with other content.
        let other = folder.file("o.rocksdb")
        mkdir(other, 0o755)
        try FileIO.writeAtomically(Array("x".utf8), to: other + "/notes.txt")
        let foreign = #expect(throws: StateFile.Failure.self) { _ = try RocksDBStore(path: other) }
        #expect(foreign?.message.contains("no CURRENT") == true)
        #expect(!FileIO.exists(other + "/CURRENT"))
        // A RocksDB database of another program: keys, no meta.
        let alien = folder.file("a.rocksdb")
        let store = try RocksDBStore(path: alien)
        store.close()
        let missing = #expect(throws: StateFile.Failure.self) { _ = try RocksDBStore(path: folder.file("none.rocksdb"), readOnly: true) }
        #expect(missing?.message.contains("no such") == true)
        #expect(!FileIO.exists(folder.file("none.rocksdb")))
    }

    @Test func anEmptyFolderBecomesAState() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("e.rocksdb")
        mkdir(path, 0o755)
        // To a reader, an empty folder is an empty state; nothing is written into it.
        let empty = try RocksDBStore(path: path, readOnly: true)
        #expect(empty.accountCount == 0 && empty.seq == 0 && empty.meta["format"] == StateFile.format)
        #expect(try empty.loadAccount("a", rules: .builtIn) == nil)
        #expect(try empty.stream(rules: .builtIn).accountCount == 0)
        #expect(try FixtureFolder.list(path).isEmpty)
        var stream = StoreFixtures.stream(accounts: ["a"])
        let store = try RocksDBStore(path: path)
        try store.checkpoint(&stream, seq: 4, input: "stdin")
        store.close()
        #expect(try RocksDBStore(path: path, readOnly: true).accountCount == 1)
    }

    /// Rules that still fit: accounts written under the old rules are read through their JSON
    /// under the new ones (the old rules stay recorded by seed); rules that do not fit are
    /// named with the first account and mark.
    @Test func rulesChangeOverTime() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.rocksdb")
        let (store, stream) = try Self.committed(["a", "b"], seq: 8, at: path)
        let capped = try RuleSet.parse(RuleSet.builtInText.replacing(#""maxDisplay": 99"#, with: #""maxDisplay": 50"#))
        #expect(capped.fingerprint != RuleSet.builtIn.fingerprint && capped.storeSeed != RuleSet.builtIn.storeSeed)
        try store.checkFits(capped)
        // "a" rewritten under the new rules; "b" still under the old ones.
        var later = BadgeStream(rules: capped)
        later.tracksChanges = true
        let laterLoader = AccountLoader(store, attaching: &later)
        let analyzer = LineAnalyzer(rules: capped)
        _ = laterLoader.apply(analyzer.analyze(#"{"op":"clear","account":"a","device":"d0","path":"root.mail"}"#), seq: 9, to: &later)
        try store.checkpoint(&later, seq: 9, input: "stdin")
        store.close()
        let reopened = try RocksDBStore(path: path, readOnly: true)
        #expect(try reopened.recordedRules()?.fingerprint == capped.fingerprint)
        #expect(try reopened.loadAccount("a", rules: capped)?.tree.markCount == 2)
        let b = try #require(try reopened.loadAccount("b", rules: capped))
        #expect(Self.json(b) == Self.json(try #require(stream.accounts["b"])))
        let otherRoot = try RuleSet.parse(
            RuleSet.builtInText.replacing("root", with: "top").replacing(#""top": "top""#, with: #""root": "top""#))
        let misfit = #expect(throws: StateFile.Failure.self) { try reopened.checkFits(otherRoot) }
        #expect(misfit?.at.contains("accounts[\"a\"]") == true, "\(misfit?.description ?? "")")
    }

    @Test func aDamagedValueIsAnErrorNotAnAccount() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.rocksdb")
        var stream = StoreFixtures.stream(accounts: ["a"])
        let store = try RocksDBStore(path: path)
        try store.checkpoint(&stream, seq: 4, input: "stdin")
        // One byte of the binary form changed: the check fails under every recorded rules.
        var value: [UInt8] = []
        RowCache.encode(
            try #require(stream.accounts["a"]), json: UnsafeRawBufferPointer(start: nil, count: 0), seed: RuleSet.builtIn.storeSeed,
            into: &value)
        value[value.count - 3] ^= 0x40
        try store.overwrite(account: "a", with: value)
        let failure = #expect(throws: StateFile.Failure.self) { _ = try store.loadAccount("a", rules: .builtIn) }
        #expect(failure?.message.contains("damaged") == true)
        #expect(failure?.at == #"accounts["a"]"#)
        // The read-ahead leaves it out: the stream loads it itself and reports it.
        #expect(store.loadAccounts(["a"], rules: .builtIn).isEmpty)
    }

    /// A layout 2 value with one byte of its binary form changed fails its check under
    /// every recorded rules, as a layout 1 value does (above); so does one cut short.
    @Test func aDamagedValueOfLayout2IsAnErrorToo() throws {
        let folder = try TemporaryFolder()
        var stream = StoreFixtures.stream(accounts: ["a"])
        let store = try RocksDBStore(path: folder.file("s.rocksdb"))
        try store.checkpoint(&stream, seq: 4, input: "stdin")
        var value: [UInt8] = []
        RocksDBStore.encode(try #require(stream.accounts["a"]), seed: RuleSet.builtIn.storeSeed, into: &value)
        #expect(value[0] == RocksDBStore.valueTag)
        for damage in [{ (v: inout [UInt8]) in v[v.count - 3] ^= 0x40 }, { $0[1] ^= 1 }, { $0.removeLast() }] {
            var bad = value
            damage(&bad)
            try store.overwrite(account: "a", with: bad)
            let failure = #expect(throws: StateFile.Failure.self) { _ = try store.loadAccount("a", rules: .builtIn) }
            #expect(failure?.message.contains("damaged") == true)
        }
        try store.overwrite(account: "a", with: value)
        #expect(try store.loadAccount("a", rules: .builtIn).map(Self.json) == stream.accounts["a"].map(Self.json))
    }

    /// A state of layout 1 (values behind an FNV-1a hash, as the release before wrote them)
    /// is read as it is; its first checkpoint writes the accounts it changed in the form of
    /// layout 2 and marks the state layout 2 in the same batch, and the accounts it did not
    /// touch are still read from their layout 1 values. A layout this build does not know is
    /// refused at open, naming the layouts it reads.
    @Test func aStateOfLayout1IsReadAndBecomesLayout2WithItsFirstCheckpoint() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.rocksdb")
        let (store, stream) = try Self.committed(["a", "b"], seq: 4, at: path)
        // Made layout 1 by hand: each value in the old form, the meta saying so.
        for id in ["a", "b"] {
            var old: [UInt8] = []
            RowCache.encode(
                try #require(stream.accounts[id]), json: UnsafeRawBufferPointer(start: nil, count: 0), seed: RuleSet.builtIn.storeSeed,
                into: &old)
            #expect(old[0] == RowCache.tag)
            try store.overwrite(account: id, with: old)
        }
        try store.writeMeta(["layout": "1"])
        store.close()
        let reopened = try RocksDBStore(path: path)
        #expect(reopened.meta["layout"] == "1")
        for id in ["a", "b"] {
            #expect(try reopened.loadAccount(id, rules: .builtIn).map(Self.json) == stream.accounts[id].map(Self.json))
        }
        var later = BadgeStream(rules: .builtIn)
        later.tracksChanges = true
        let laterLoader = AccountLoader(reopened, attaching: &later)
        let analyzer = LineAnalyzer(rules: .builtIn)
        _ = laterLoader.apply(analyzer.analyze(#"{"op":"clear","account":"a","device":"d0","path":"root.mail"}"#), seq: 5, to: &later)
        try reopened.checkpoint(&later, seq: 5, input: "stdin")
        #expect(reopened.meta["layout"] == "2")
        var tags: [String: UInt8] = [:]
        try reopened.forEachRawEntry(kind: 1) { id, value in tags[String(decoding: id, as: UTF8.self)] = value.first }
        #expect(tags == ["a": RocksDBStore.valueTag, "b": RowCache.tag])
        #expect(try reopened.loadAccount("a", rules: .builtIn)?.tree.markCount == 2)
        #expect(try reopened.loadAccount("b", rules: .builtIn).map(Self.json) == stream.accounts["b"].map(Self.json))
        try reopened.writeMeta(["layout": "3"])
        reopened.close()
        let refused = #expect(throws: StateFile.Failure.self) { _ = try RocksDBStore(path: path, readOnly: true) }
        #expect(refused?.message.contains("layout 3") == true && refused?.message.contains("layout 1 or 2") == true)
    }

    @Test func theDueIndexListsStoredAccountsWithExpiringMarks() throws {
        let folder = try TemporaryFolder()
        let store = try RocksDBStore(path: folder.file("s.rocksdb"))
        let analyzer = LineAnalyzer(rules: .builtIn)
        var stream = BadgeStream(rules: .builtIn)
        stream.tracksChanges = true
        _ = stream.apply(
            analyzer.analyze(#"{"op":"set","account":"x","device":"d","at":100,"path":"root.promotion.p","ttl":100}"#), seq: 1)
        _ = stream.apply(analyzer.analyze(#"{"op":"set","account":"y","device":"d","at":100,"path":"root.promotion.q"}"#), seq: 2)
        try store.checkpoint(&stream, seq: 2, input: "stdin")
        #expect(try store.accountsDue(through: 150) == [])
        #expect(try store.accountsDue(through: 250) == ["x"])
    }

    @Test func aStoredStreamIsWrittenInBatchesWithItsTotals() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.rocksdb")
        var stream = StoreFixtures.stream(accounts: (0..<300).map { "u\($0)" })
        stream.compact(keeping: 100)
        let store = try RocksDBStore(path: path)
        try store.store(stream)
        #expect(store.accountCount == 300 && store.deviceCount == 300 && store.markCount == 900)
        let back = try store.stream(rules: .builtIn)
        #expect(back.accountCount == 300)
    }
}
