import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

/// `state split` and `state merge` (``StateSplit``), on real states in a temporary folder.
@Suite struct StateSplitTests {
    /// A stream in which each account has two devices, marks with sources, and an expiring
    /// mark (so an SQLite state has `due` rows).
    private static func stream(accounts ids: [String]) -> BadgeStream {
        let analyzer = LineAnalyzer(rules: .builtIn)
        var stream = BadgeStream(rules: .builtIn)
        stream.tracksChanges = true
        var seq = 0
        for id in ids {
            let account = JSONValue.string(id).serialized()
            for line in [
                #"{"op":"login","account":\#(account),"device":"d0","at":1732269600}"#,
                #"{"op":"push","account":\#(account),"device":"d0","at":1732269700,"payload":{"aps":{"alert":"hi","thread-id":"t3"}}}"#,
                #"{"op":"push","account":\#(account),"device":"d1","at":1732269701,"payload":{"aps":{"alert":"m","category":"mail"}}}"#,
                #"{"op":"set","account":\#(account),"device":"d0","at":1732269702,"path":"root.promotion.c2","ttl":600}"#,
            ] {
                seq += 1
                _ = stream.apply(analyzer.analyze(line), seq: seq)
            }
        }
        return stream
    }

    private static let ids = (0..<300).map { "acct-\($0)" } + ["", "ü-é/\"quoted\"", "😀", "a\\b"]

    private static func bytes(_ path: String) throws -> [UInt8] { try FileIO.readBytes(path) }

    /// zlib's CRC-32 (the Spark job's `zlib.crc32`), on its check value and on ids whose
    /// parts Python computed (`zlib.crc32(id.encode()) % 8`).
    @Test func partsAreZlibCRC32OfTheIdModuloP() {
        #expect(StatePartition.crc32("123456789".utf8) == 0xCBF4_3926)
        #expect(StatePartition.crc32("alice".utf8) == 663_665_735)
        #expect(StatePartition.crc32("ü-émoji-😀".utf8) == 10_722_432)
        #expect(StatePartition.index(of: "alice", parts: 8) == 7)
        #expect(StatePartition.index(of: "bob", parts: 8) == 0)
        #expect(StatePartition.index(of: "acct-42", parts: 8) == 1)
        #expect(StatePartition.index(of: "", parts: 8) == 0)
        #expect(StatePartition.fileName(index: 3, ext: "json") == "part-00003.json")
    }

    @Test(arguments: [1, 3, 8])
    func aJSONStateSplitAndMergedIsTheSameBytes(parts: Int) throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.json")
        try StateFile.save(Self.stream(accounts: Self.ids), to: whole)
        let paths = try StateSplit.split(whole, parts: parts, into: folder.file("parts"))
        #expect(paths.count == parts)
        var seen = 0
        for (i, path) in paths.enumerated() {
            let part = try StateFile.load(path, rules: .builtIn)
            #expect(part.partition == StatePartition(parts: parts, index: i))
            for id in part.accountIDs {
                #expect(StatePartition.index(of: id, parts: parts) == i, "\(id) in part \(i)")
            }
            seen += part.accountCount
        }
        #expect(seen == Self.ids.count)
        // Merged in any order of the parts.
        try StateSplit.merge(paths.reversed(), into: folder.file("merged.json"))
        #expect(try Self.bytes(folder.file("merged.json")) == Self.bytes(whole))
    }

    /// A filter's load and save of a part keeps its record (the Spark job's tasks save
    /// parts), laid out as the split wrote it.
    @Test func aPartLoadedAndSavedKeepsItsRecordAndBytes() throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.json")
        try StateFile.save(Self.stream(accounts: Self.ids), to: whole)
        let paths = try StateSplit.split(whole, parts: 4, into: folder.file("parts"))
        for path in paths {
            let before = try Self.bytes(path)
            try StateFile.save(StateFile.load(path, rules: .builtIn, compact: true), to: path)
            #expect(try Self.bytes(path) == before, "\(path)")
        }
        // An empty state splits into empty parts that still record P, index and rules.
        try StateFile.save(BadgeStream(rules: .builtIn), to: folder.file("empty.json"))
        let empty = try StateSplit.split(folder.file("empty.json"), parts: 2, into: folder.file("empty"))
        let loaded = try StateFile.load(empty[1], rules: .builtIn)
        #expect(loaded.accountCount == 0 && loaded.partition == StatePartition(parts: 2, index: 1))
        #expect(try StateFile.recordedRules(empty[1])?.fingerprint == RuleSet.builtIn.fingerprint)
    }

    @Test func anSQLiteStateSplitAndMergedHasTheSameRows() throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.sqlite")
        var stream = Self.stream(accounts: Self.ids)
        do {
            let store = try SQLiteStore(path: whole)
            try store.checkpoint(&stream, seq: 1234, input: "day1.ndjson")
            store.close()
        }
        let paths = try StateSplit.split(whole, parts: 5, into: folder.file("parts"))
        var total = 0
        for (i, path) in paths.enumerated() {
            let store = try SQLiteStore(path: path, readOnly: true)
            #expect(try StatePartition(meta: store.meta, file: path) == StatePartition(parts: 5, index: i))
            #expect(store.seq == 1234 && store.input == "day1.ndjson")
            try store.forEachAccount { id, _ in #expect(StatePartition.index(of: id, parts: 5) == i) }
            total += store.accountCount
        }
        #expect(total == Self.ids.count)
        let merged = folder.file("merged.sqlite")
        try StateSplit.merge(paths, into: merged)
        #expect(!FileIO.exists(merged + "-wal"))
        let a = try SQLiteStore(path: whole, readOnly: true)
        let b = try SQLiteStore(path: merged, readOnly: true)
        var before = a.meta, after = b.meta
        before["writer"] = nil
        after["writer"] = nil
        #expect(before == after)
        var rowsA: [String: String] = [:], rowsB: [String: String] = [:]
        try a.forEachAccount { rowsA[$0] = $1 }
        try b.forEachAccount { rowsB[$0] = $1 }
        #expect(rowsA.count == Self.ids.count && rowsA == rowsB)
        for id in Self.ids.prefix(5) { #expect(try b.hasMatchingCache(id, rules: .builtIn), "\(id)") }
        // The due index went along: a fleet-wide expire finds the merged accounts.
        a.close()
        b.close()
        let writer = try SQLiteStore(path: merged)
        #expect(try writer.accountsDue(through: 1_732_269_702 + 601).count == Self.ids.count)
    }

    /// Every key of a RocksDB state (kind byte + name) with its value, `writer` left out.
    private static func entries(_ path: String) throws -> [[UInt8]: [UInt8]] {
        let store = try RocksDBStore(path: path, readOnly: true)
        defer { store.close() }
        var all: [[UInt8]: [UInt8]] = [:]
        for kind: UInt8 in [0, 1, 2] {
            try store.forEachRawEntry(kind: kind) { k, v in all[[kind] + Array(k)] = Array(v) }
        }
        all[[0] + Array("writer".utf8)] = nil
        return all
    }

    private static func rocksDBState(_ path: String, seq: Int = 1234) throws {
        var stream = Self.stream(accounts: Self.ids)
        let store = try RocksDBStore(path: path)
        try store.checkpoint(&stream, seq: seq, input: "day1.ndjson")
        store.close()
    }

    @Test(arguments: [1, 5])
    func aRocksDBStateSplitAndMergedHasTheSameKeysAndValues(parts: Int) throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.rocksdb")
        try Self.rocksDBState(whole)
        let paths = try StateSplit.split(whole, parts: parts, into: folder.file("parts"))
        #expect(paths.last?.hasSuffix("/part-0000\(parts - 1).rocksdb") == true)
        var total = 0, devices = 0, marks = 0
        for (i, path) in paths.enumerated() {
            let store = try RocksDBStore(path: path, readOnly: true)
            #expect(try StatePartition(meta: store.meta, file: path) == StatePartition(parts: parts, index: i))
            #expect(store.seq == 1234 && store.input == "day1.ndjson")
            #expect(store.meta["rules"] != nil && store.meta.keys.contains { $0.hasPrefix("rules@") })
            var own = 0
            try store.forEachAccount { id, _ in
                #expect(StatePartition.index(of: id, parts: parts) == i)
                own += 1
            }
            try store.forEachRawEntry(kind: 2) { k, _ in
                #expect(StatePartition.index(of: String(decoding: k, as: UTF8.self), parts: parts) == i)
            }
            #expect(store.accountCount == own)
            total += own
            devices += store.deviceCount
            marks += store.markCount
            store.close()
        }
        #expect(total == Self.ids.count && devices == 2 * Self.ids.count)
        let merged = folder.file("merged.rocksdb")
        try StateSplit.merge(paths, into: merged)
        let before = try Self.entries(whole), after = try Self.entries(merged)
        #expect(before.count > 2 * Self.ids.count)
        #expect(before == after)
        let writer = try RocksDBStore(path: merged)
        #expect(writer.markCount == marks)
        #expect(try writer.accountsDue(through: 1_732_269_702 + 601).count == Self.ids.count)
    }

    /// Parts of one split may be of two layouts (one still layout 1 as split, one that a
    /// filter has checkpointed since): the merge records the higher, since it copies every
    /// value as it is.
    @Test func aMergeRecordsTheHighestLayoutOfItsParts() throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.rocksdb")
        try Self.rocksDBState(whole)
        let paths = try StateSplit.split(whole, parts: 2, into: folder.file("parts"))
        for (path, layout) in zip(paths, ["1", "2"]) {
            let store = try RocksDBStore(path: path)
            try store.writeMeta(["layout": layout])
            store.close()
        }
        let merged = folder.file("merged.rocksdb")
        try StateSplit.merge(paths, into: merged)
        #expect(try RocksDBStore(path: merged, readOnly: true).meta["layout"] == "2")
        let older = folder.file("older.rocksdb")
        for path in paths {
            let store = try RocksDBStore(path: path)
            try store.writeMeta(["layout": "1"])
            store.close()
        }
        try StateSplit.merge(paths, into: older)
        #expect(try RocksDBStore(path: older, readOnly: true).meta["layout"] == "1")
    }

    /// A raw batch is written each time it holds its limit, before `finish()`.
    @Test func aRocksDBRawBatchIsWrittenAtItsLimit() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("raw.rocksdb")
        do {
            let store = try RocksDBStore(path: path)
            let batch = RocksDBStore.RawBatch(store, limit: 64)
            for i in 0..<10 {
                // 1 + 7 key bytes + 20 value bytes: written after every third put.
                try Array("acct-0\(i)".utf8).withUnsafeBytes { k in
                    try [UInt8](repeating: UInt8(i), count: 20).withUnsafeBytes { try batch.put(kind: 1, k, $0) }
                }
            }
            store.close()
        }
        let store = try RocksDBStore(path: path, readOnly: true)
        var ids: [String] = []
        try store.forEachRawEntry(kind: 1) { k, v in
            ids.append(String(decoding: k, as: UTF8.self))
            #expect(v.count == 20)
        }
        #expect(ids == (0..<9).map { "acct-0\($0)" })
    }

    @Test func aRocksDBPartKeepsItsRecordThroughACheckpoint() throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.rocksdb")
        try Self.rocksDBState(whole)
        let paths = try StateSplit.split(whole, parts: 3, into: folder.file("parts"))
        let id = try #require(Self.ids.first { StatePartition.index(of: $0, parts: 3) == 1 })
        do {
            let store = try RocksDBStore(path: paths[1])
            var stream = BadgeStream(rules: .builtIn)
            stream.tracksChanges = true
            if let a = try store.loadAccount(id, rules: .builtIn) { stream.addLoaded(a, as: id, compact: false) }
            let line =
                #"{"op":"push","account":\#(JSONValue.string(id).serialized()),"device":"d2","at":1732269800,"payload":{"aps":{"alert":"x","category":"mail"}}}"#
            _ = stream.apply(LineAnalyzer(rules: .builtIn).analyze(line), seq: 1)
            try store.checkpoint(&stream, seq: 1, input: "day2.ndjson")
            store.close()
        }
        let store = try RocksDBStore(path: paths[1], readOnly: true)
        #expect(try StatePartition(meta: store.meta, file: paths[1]) == StatePartition(parts: 3, index: 1))
        #expect(store.seq == 1 && store.input == "day2.ndjson")
        store.close()
        let merged = folder.file("merged.rocksdb")
        try StateSplit.merge(paths, into: merged)
        let out = try RocksDBStore(path: merged, readOnly: true)
        #expect(out.seq == 1234 && out.input == "" && out.accountCount == Self.ids.count)
        #expect(try out.accountJSON(id)?.contains("d2") == true)
        #expect(try StatePartition(meta: out.meta, file: merged) == nil)
    }

    @Test func aRocksDBMergeRefusesPartsThatDoNotMakeOneWhole() throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.rocksdb")
        try Self.rocksDBState(whole)
        let four = try StateSplit.split(whole, parts: 4, into: folder.file("four"))
        let three = try StateSplit.split(whole, parts: 3, into: folder.file("three"))
        let out = folder.file("out.rocksdb")
        func refusal(_ parts: [String]) -> String? {
            do { try StateSplit.merge(parts, into: out) } catch {
                guard case .state = error else { return "not a state failure: \(error)" }
                return error.description
            }
            return nil
        }
        #expect(refusal(Array(four.prefix(3)))?.contains("missing: index 3") == true)
        #expect(refusal([four[0], four[1], four[1], four[3]])?.contains("index 1 given twice") == true)
        #expect(refusal(Array(four.prefix(3)) + [three[0]])?.contains("parts of different splits") == true)
        #expect(refusal([whole])?.contains("no partition record") == true)
        let part = try? StateSplit.split(four[0], parts: 2, into: folder.file("p2"))
        #expect(part == nil)
        #expect(!FileIO.exists(out))

        // An account copied into a part it does not belong to.
        let again = try StateSplit.split(whole, parts: 4, into: folder.file("again"))
        let stranger = try #require(Self.ids.first { StatePartition.index(of: $0, parts: 4) == 2 })
        do {
            let target = try RocksDBStore(path: again[1])
            let batch = RocksDBStore.RawBatch(target)
            try Array(stranger.utf8).withUnsafeBytes { k in
                try [UInt8](repeating: 7, count: 9).withUnsafeBytes { try batch.put(kind: 1, k, $0) }
            }
            try batch.finish()
            target.close()
        }
        let wrong = refusal(again)
        #expect(wrong?.contains("belongs in part 2 of 4") == true && wrong?.contains(again[1]) == true, "\(wrong ?? "none")")
        #expect(!FileIO.exists(out))
        #expect(try FixtureFolder.list(folder.path).allSatisfy { !$0.contains(".tmp.") })

        // Other rules in one part.
        let store = try RocksDBStore(path: four[2])
        try store.writeMeta([
            "rules": RuleSet.builtInText.split(separator: "\"maxDisplay\": 99", omittingEmptySubsequences: false).joined(
                separator: "\"maxDisplay\": 9")
        ])
        store.close()
        #expect(refusal(four)?.contains("rules differ") == true)
        #expect(!FileIO.exists(out))
    }

    @Test func mergeRefusesPartsThatDoNotMakeOneWhole() throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.json")
        try StateFile.save(Self.stream(accounts: Self.ids), to: whole)
        let four = try StateSplit.split(whole, parts: 4, into: folder.file("four"))
        let three = try StateSplit.split(whole, parts: 3, into: folder.file("three"))
        func refusal(_ parts: [String]) -> String? {
            do { try StateSplit.merge(parts, into: folder.file("out.json")) } catch {
                guard case .state = error else { return "not a state failure: \(error)" }
                return error.description
            }
            return nil
        }
        #expect(refusal(Array(four.prefix(3)))?.contains("missing: index 3") == true)
        #expect(refusal([four[0], four[1], four[1], four[3]])?.contains("index 1 given twice") == true)
        #expect(refusal(Array(four.prefix(3)) + [three[0]])?.contains("parts of different splits") == true)
        #expect(refusal([whole])?.contains("no partition record") == true)
        #expect(!FileIO.exists(folder.file("out.json")))

        // Other rules in one part.
        let other = try RuleSet.parse(
            String(
                RuleSet.builtInText.split(separator: "\"maxDisplay\": 99", omittingEmptySubsequences: false).joined(
                    separator: "\"maxDisplay\": 9")))
        #expect(other.fingerprint != RuleSet.builtIn.fingerprint)
        var moved = try StateFile.load(four[2], rules: other)
        moved = BadgeStream(rules: other).withAccounts(of: moved)
        try StateFile.save(moved, to: four[2])
        #expect(refusal(four)?.contains("rules differ") == true)

        // An account in a part it does not belong to (a run with another partition count),
        // and the same account in two parts.
        let again = try StateSplit.split(whole, parts: 4, into: folder.file("again"))
        var wrong = try StateFile.load(again[1], rules: .builtIn)
        let stranger = try #require(Self.ids.first { StatePartition.index(of: $0, parts: 4) == 2 })
        wrong.table[stranger] = try StateFile.load(again[2], rules: .builtIn).account(stranger)
        try StateFile.save(wrong, to: again[1])
        let overlap = refusal(again)
        #expect(overlap?.contains("belongs in part 2 of 4") == true || overlap?.contains("overlap") == true, "\(overlap ?? "none")")
        #expect(overlap?.contains(again[1]) == true || overlap?.contains(again[2]) == true)
        try StateFile.save(BadgeStream(rules: .builtIn).withAccounts(of: try StateFile.load(again[2], rules: .builtIn)), to: again[2])
        #expect(!FileIO.exists(folder.file("out.json")))
    }

    /// A part of a split database state is refused as the input of another split, the place
    /// named as its meta rows (each format's split asks `StateSplit.refuseSplitPart`).
    @Test(arguments: ["sqlite", "rocksdb"])
    func aDatabasePartIsNotSplitAgain(_ format: String) throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state." + format)
        if format == "rocksdb" {
            try Self.rocksDBState(whole)
        } else {
            var stream = Self.stream(accounts: Self.ids)
            let store = try SQLiteStore(path: whole)
            try store.checkpoint(&stream, seq: 1, input: "day1.ndjson")
            store.close()
        }
        let parts = try StateSplit.split(whole, parts: 2, into: folder.file("parts"))
        let again = #expect(throws: StateSplit.Failure.self) { try StateSplit.split(parts[0], parts: 2, into: folder.file("p2")) }
        #expect(again?.description.contains("meta.partition: already a split state's part 0 of 2") == true, "\(String(describing: again))")
    }

    @Test func splitRefusesAPartAFullFolderAndAMissingState() throws {
        let folder = try TemporaryFolder()
        let whole = folder.file("state.json")
        try StateFile.save(Self.stream(accounts: ["a", "b"]), to: whole)
        let parts = try StateSplit.split(whole, parts: 2, into: folder.file("parts"))
        func failure(_ body: () throws -> Void) -> StateSplit.Failure? {
            do { try body() } catch let error as StateSplit.Failure { return error } catch { return .usage("\(error)") }
            return nil
        }
        let again = failure { try StateSplit.split(whole, parts: 2, into: folder.file("parts")) }
        guard case .usage(let text)? = again else { Issue.record("\(String(describing: again))"); return }
        #expect(text.contains("not empty"))
        let part = failure { try StateSplit.split(parts[0], parts: 2, into: folder.file("p2")) }
        #expect(part?.description.contains("already a split state's part 0 of 2") == true)
        let missing = failure { try StateSplit.split(folder.file("none.json"), parts: 2, into: folder.file("p3")) }
        #expect(missing?.description.contains("no such state file") == true)
        try folder.write("bad.json", Array(#"{"format": "badgeflow-state", "version": 2, "accounts": {"a": {"clock": }}}"#.utf8))
        let bad = failure { try StateSplit.split(folder.file("bad.json"), parts: 2, into: folder.file("p4")) }
        guard case .state? = bad else { Issue.record("\(String(describing: bad))"); return }
        #expect(try FixtureFolder.list(folder.file("p4")).isEmpty)
    }
}

extension BadgeStream {
    /// This stream (its rules, no partition) holding `other`'s accounts.
    fileprivate func withAccounts(of other: BadgeStream) -> BadgeStream {
        var s = self
        s.partition = other.partition
        for id in other.accountIDs { s.table[id] = (try? other.account(id)) ?? nil }
        return s
    }
}
