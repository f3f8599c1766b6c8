import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SQLite store, its read-ahead reader and its background checkpoints, on real
/// databases in a temporary folder.
/// A push to `account` (device "d", thread "t") at a fixed time.
private func pushLine(_ account: String) -> String {
    #"{"op":"push","account":"\#(account)","device":"d","at":1732269700,"payload":{"aps":{"alert":"hi","thread-id":"t"}}}"#
}

@Suite struct SQLiteStoreTests {
    private static func json(_ a: Account) -> String { StateFile.encodeAccount(a) }

    @Test func aRowLeavesOutDefaultsAndReadsBackAsTheSameAccount() throws {
        let folder = try TemporaryFolder()
        var stream = StoreFixtures.stream(accounts: ["alice"])
        let store = try SQLiteStore(path: folder.file("s.sqlite"))
        try store.checkpoint(&stream, seq: 4, input: "stdin")
        let row = try #require(try store.accountJSON("alice"))
        // The device keeps only what differs from a new device's values.
        #expect(row.hasSuffix(#""devices":{"d0":{"delivered":2,"sync":{"loggedIn":true,"intervalStart":1732269701}}}}"#), "\(row)")
        let original = try #require(stream.accounts["alice"])
        // One device and three marks, each with its source: 354 bytes instead of 427.
        #expect(Self.json(original).utf8.count - row.utf8.count == 73, "\(row.utf8.count) bytes: \(row)")
        let loaded = try #require(try store.loadAccount("alice", rules: .builtIn))
        #expect(Self.json(loaded) == Self.json(original))
        #expect(loaded.tree.markCount == 3 && loaded.devices.count == 1)
        #expect(store.accountCount == 1 && store.deviceCount == 1 && store.markCount == 3 && store.seq == 4)
    }

    /// A large checkpoint (2,148 accounts) is written in key order: every row is still its
    /// own account's JSON, whole, with its cache.
    @Test func aLargeCheckpointWritesEveryRowWholeWithItsCache() throws {
        let folder = try TemporaryFolder()
        let ids = (0..<2148).map { "u\($0)" }
        var stream = StoreFixtures.stream(accounts: ids)
        let store = try SQLiteStore(path: folder.file("s.sqlite"))
        try store.checkpoint(&stream, seq: 4 * ids.count, input: "stdin")
        #expect(store.accountCount == ids.count && store.deviceCount == ids.count && store.markCount == 3 * ids.count)
        var rows = 0
        try store.forEachAccount { id, text in
            rows += 1
            guard let a = stream.accounts[id] else {
                Issue.record("row \(id) is no account of the stream")
                return
            }
            let expected = StateFile.encodeAccount(a, compact: true)
            if text != expected { Issue.record("row \(id): \(text), expected \(expected)") }
        }
        #expect(rows == ids.count)
        for id in [ids[0], ids[1023], ids[1024], ids[ids.count - 1]] {
            #expect(try store.hasMatchingCache(id, rules: .builtIn), "\(id)")
        }
    }

    @Test func thePrefetcherReadsCommittedAccountsAndSaysWhichAreAbsent() throws {
        let folder = try TemporaryFolder()
        var stream = StoreFixtures.stream(accounts: ["a", "b"])
        let store = try SQLiteStore(path: folder.file("s.sqlite"))
        try store.checkpoint(&stream, seq: 8, input: "stdin")
        let prefetcher = StorePrefetcher.over(try SQLiteStateStore.readConnections(path: store.path))
        #expect(prefetcher.collect().isEmpty)
        prefetcher.request(["a", "nobody", "b"])
        let got = prefetcher.collect()
        #expect(got.count == 3)
        // Read, and not stored: present with nil.
        #expect(got.keys.contains("nobody"))
        #expect((got["nobody"] ?? nil) == nil)
        let a = try #require(got["a"] ?? nil), b = try #require(got["b"] ?? nil)
        #expect(Self.json(a) == Self.json(try #require(stream.accounts["a"])))
        #expect(Self.json(b) == Self.json(try #require(stream.accounts["b"])))
    }

    @Test func backgroundCommitsAreReadableOnceFinishedAndKeepTheTotals() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        let store = try SQLiteStore(path: path)
        let checkpointer = StoreCheckpointer.over(StoreConnection(try SQLiteStore(path: path), owned: true))
        var stream = StoreFixtures.stream(accounts: ["a", "b", "c"])
        checkpointer.begin(&stream, seq: 12, input: "stdin")
        #expect(stream.changedCount == 0)
        #expect(checkpointer.isPending)
        try checkpointer.finish(&stream)
        #expect(!checkpointer.isPending)
        // A change after the commit began is in the next one.
        let analyzer = LineAnalyzer(rules: .builtIn)
        _ = stream.apply(analyzer.analyze(#"{"op":"clear","account":"a","device":"d0","path":"root.mail"}"#), seq: 13)
        checkpointer.begin(&stream, seq: 13, input: "stdin")
        try checkpointer.finish(&stream)
        checkpointer.close()
        let reopened = try SQLiteStore(path: path, readOnly: true)
        #expect(reopened.seq == 13 && reopened.accountCount == 3 && reopened.deviceCount == 3 && reopened.markCount == 8)
        for id in ["a", "b", "c"] {
            let loaded = try #require(try reopened.loadAccount(id, rules: .builtIn))
            #expect(Self.json(loaded) == Self.json(try #require(stream.accounts[id])))
        }
        _ = store
    }

    /// Schema 1 (every device key spelled out) and schema 2 without the cache column were
    /// written only by pre-release builds: refused at open, for reading and for writing,
    /// naming what was found, and left as they are.
    @Test func aDatabaseOfAnotherSchemaIsRefusedNamingIt() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        var stream = StoreFixtures.stream(accounts: ["a"])
        do {
            let store = try SQLiteStore(path: path)
            try store.checkpoint(&stream, seq: 4, input: "stdin")
            #expect(store.meta["schema"] == "2")
        }
        let cases: [(sql: String, says: String)] = [
            (
                "UPDATE meta SET value = '1' WHERE key = 'schema'",
                "state version 2 (schema 1) is not supported; this BadgeFlow reads version 2 or 3, schema 2"
            ),
            (
                "UPDATE meta SET value = '2' WHERE key = 'schema'; ALTER TABLE accounts DROP COLUMN compact",
                "(schema 2, without the compact column) is not supported"
            ),
            ("UPDATE meta SET value = '3' WHERE key = 'schema'", "(schema 3) is not supported"),
            // Version 3 (settings per account) is read; a later one is refused by name, as a
            // version-2 build refuses version 3.
            (
                "UPDATE meta SET value = '2' WHERE key = 'schema'; UPDATE meta SET value = '4' WHERE key = 'version'",
                "state version 4 (schema 2"
            ),
        ]
        for (sql, says) in cases {
            try Self.sql(path, sql)
            let before = try FileIO.readBytes(path)
            for readOnly in [true, false] {
                let failure = #expect(throws: StateFile.Failure.self) { _ = try SQLiteStore(path: path, readOnly: readOnly) }
                #expect(failure?.at == "meta.version")
                #expect(failure?.message.contains(says) == true, "\(failure?.message ?? "")")
            }
            #expect(try FileIO.readBytes(path) == before)
        }
    }

    /// A row an earlier build wrote with a device key holding U+0000 (the filter let such a
    /// device through then) has a matching cache; it is not served from it, and the JSON
    /// path refuses it, as it refuses the same row without a cache.
    @Test func aRowWhoseJSONHasAKeyHoldingNULIsNotServedFromItsCache() throws {
        let folder = try TemporaryFolder()
        let store = try SQLiteStore(path: folder.file("s.sqlite"))
        var a = try #require(StoreFixtures.stream(accounts: ["a"]).accounts["a"])
        a.devices["d\u{0}"] = a.devices["d0"]
        _ = try store.commit([ChangedAccount(id: "a", account: a)], seq: 1, input: "stdin", cacheSeed: RuleSet.builtIn.rowCacheSeed)
        let failure = #expect(throws: StateFile.Failure.self) { _ = try store.loadAccount("a", rules: .builtIn) }
        #expect(failure?.description.contains("U+0000") == true, "\(String(describing: failure))")
    }

    /// The row cache is used only while it is the cache of the row's JSON, under the same
    /// rules: JSON edited in the shell, damaged cache bytes and other rules all read the JSON.
    @Test func theRowCacheIsUsedOnlyWhileItMatchesTheJSONAndTheRules() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        var stream = StoreFixtures.stream(accounts: ["a", "b"])
        let store = try SQLiteStore(path: path)
        try store.checkpoint(&stream, seq: 8, input: "stdin")
        let a = try #require(stream.accounts["a"])
        #expect(try store.hasMatchingCache("a", rules: .builtIn) && store.hasMatchingCache("b", rules: .builtIn))
        // From the cache: the same account as from the JSON.
        let cached = try #require(try store.loadAccount("a", rules: .builtIn))
        let text = try #require(try store.accountJSON("a"))
        let fromJSON = try StateFile.decodeAccount(text, at: "", file: path, rules: .builtIn)
        #expect(Self.json(cached) == Self.json(fromJSON) && Self.json(cached) == Self.json(a))
        #expect(cached.tree.snapshot() == fromJSON.tree.snapshot())

        // JSON edited by hand: the edit is what loads.
        try Self.sql(path, #"UPDATE accounts SET data = replace(data, '"delivered":2', '"delivered":5') WHERE id = 'a'"#)
        #expect(try !store.hasMatchingCache("a", rules: .builtIn))
        #expect(try #require(try store.loadAccount("a", rules: .builtIn)).devices["d0"]?.delivered == 5)

        // A damaged cache byte (the JSON untouched): the JSON loads.
        try Self.sql(path, "UPDATE accounts SET compact = substr(compact, 1, 20) || X'FF' || substr(compact, 22) WHERE id = 'b'")
        #expect(try !store.hasMatchingCache("b", rules: .builtIn))
        let b = try #require(try store.loadAccount("b", rules: .builtIn))
        #expect(Self.json(b) == Self.json(try #require(stream.accounts["b"])))

        // Other rules (root.chat shows a dot, not a number): the JSON is read with them.
        let other = try RuleSet.parse(
            RuleSet.builtInText.replacing(#""root.news": "dot","#, with: #""root.news": "dot", "root.chat": "dot","#))
        #expect(other.rowCacheSeed != nil && other.rowCacheSeed != RuleSet.builtIn.rowCacheSeed)
        var c = StoreFixtures.stream(accounts: ["c"])
        try store.checkpoint(&c, seq: 9, input: "stdin")
        #expect(try store.hasMatchingCache("c", rules: .builtIn) && !store.hasMatchingCache("c", rules: other))
        let underOther = try #require(try store.loadAccount("c", rules: other))
        let textC = try #require(try store.accountJSON("c"))
        let expected = try StateFile.decodeAccount(textC, at: "", file: path, rules: other)
        #expect(underOther.tree.snapshot() == expected.tree.snapshot())
        #expect(underOther.tree.snapshot() != (try #require(c.accounts["c"])).tree.snapshot())
    }

    /// A copy read ahead of an account that then came into memory, changed, was committed
    /// and left again is older than the stored row: it must not be used.
    @Test func aCopyReadAheadIsDroppedWhenTheAccountWasEvictedSinceTheRequest() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        let analyzer = LineAnalyzer(rules: .builtIn)
        let push = pushLine("x")
        let store = try SQLiteStore(path: path)
        var seed = BadgeStream(rules: .builtIn)
        seed.tracksChanges = true
        _ = seed.apply(analyzer.analyze(push), seq: 1)
        try store.checkpoint(&seed, seq: 1, input: "stdin")

        var stream = BadgeStream(rules: .builtIn)
        let loader = AccountLoader(store, attaching: &stream)
        stream.table.recordsEvictions = true
        let prefetcher = StorePrefetcher.over(try SQLiteStateStore.readConnections(path: path))
        prefetcher.request(["x"])
        let ahead = prefetcher.collect()
        #expect(ahead["x"] != nil)
        // Meanwhile x comes into memory (count 2), is committed and evicted.
        _ = loader.apply(analyzer.analyze(push), seq: 2, to: &stream)
        try store.checkpoint(&stream, seq: 2, input: "stdin")
        stream.evict(keeping: 0)
        #expect(stream.accounts["x"] == nil)
        stream.installPrefetched(ahead)
        #expect(stream.needsLoad("x", hash: IDIndex.hash("x")), "the stale copy is not installed")
        // The next push loads x from the store (count 2) and makes it 3; the stale copy
        // read ahead (count 1) would make it 2.
        let result = try #require(loader.apply(analyzer.analyze(push), seq: 3, to: &stream)?.applied)
        #expect(result.outcome.changes.first { $0.path == "root.chat.t" }?.count == 3)
        #expect(stream.loads.inline == 2 && stream.loads.ahead == 0)
    }

    /// An account taken by a commit under way (the checkpointer's) stays in memory until
    /// that commit is recorded, so that evicting others need not wait for it: were it
    /// dropped, a reload before the commit lands would read the older row.
    @Test func anAccountOfACommitUnderWayIsNotEvictedUntilTheCommitEnds() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        let analyzer = LineAnalyzer(rules: .builtIn)
        func push(_ account: String) -> LineResult { analyzer.analyze(pushLine(account)) }
        var stream = BadgeStream(rules: .builtIn)
        let loader = AccountLoader(try SQLiteStore(path: path), attaching: &stream)
        _ = loader.apply(push("old"), seq: 1, to: &stream)
        let checkpointer = StoreCheckpointer.over(StoreConnection(try SQLiteStore(path: path), owned: true))
        checkpointer.begin(&stream, seq: 1, input: "stdin")
        try checkpointer.finish(&stream)
        // "old" is committed; "busy" is taken by a commit that has not been recorded.
        _ = loader.apply(push("busy"), seq: 2, to: &stream)
        checkpointer.begin(&stream, seq: 2, input: "stdin")
        #expect(stream.inFlightCount == 1 && stream.changedCount == 0)
        stream.evict(keeping: 0)
        #expect(stream.accounts["old"] == nil)
        #expect(stream.accounts["busy"] != nil)
        try checkpointer.finish(&stream)
        #expect(stream.inFlightCount == 0)
        stream.evict(keeping: 0)
        #expect(stream.accounts.isEmpty)
        checkpointer.close()
    }

    /// A commit finds that another process committed since its connection opened (a writer
    /// the lock file did not stop): it refuses, leaving the other's commit in place.
    @Test func aCommitDoesNotOverwriteAnotherWritersCommit() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        let analyzer = LineAnalyzer(rules: .builtIn)
        let push = pushLine("x")
        var stream = BadgeStream(rules: .builtIn)
        let store = try SQLiteStore(path: path)
        let loader = AccountLoader(store, attaching: &stream)
        _ = loader.apply(analyzer.analyze(push), seq: 1, to: &stream)
        try store.checkpoint(&stream, seq: 1, input: "stdin")
        // Another process commits; the sqlite3 shell stands in for it.
        try Self.sql(
            path, "UPDATE meta SET value = 'pid 1 started 0.0' WHERE key = 'writer'; UPDATE meta SET value = '7' WHERE key = 'seq'")
        _ = loader.apply(analyzer.analyze(push), seq: 2, to: &stream)
        let failure = #expect(throws: StateFile.Failure.self) { try store.checkpoint(&stream, seq: 2, input: "stdin") }
        #expect(failure?.at == "meta.writer")
        #expect(failure?.message.contains("another process (pid 1 started 0.0) committed") == true, "\(failure?.message ?? "")")
        #expect(try SQLiteStore(path: path, readOnly: true).seq == 7)
        // A connection opened after that commit takes over.
        let later = try SQLiteStore(path: path)
        var again = BadgeStream(rules: .builtIn)
        let againLoader = AccountLoader(later, attaching: &again)
        _ = againLoader.apply(analyzer.analyze(push), seq: 8, to: &again)
        try later.checkpoint(&again, seq: 8, input: "stdin")
        #expect(try SQLiteStore(path: path, readOnly: true).seq == 8)
    }

    /// A commit that fails leaves its accounts changed: the next commit writes them (were
    /// they counted as written, a later checkpoint would record a seq without them).
    @Test(arguments: [true, false])
    func aFailedCommitsAccountsAreWrittenByTheNextOne(_ onItsOwnThread: Bool) throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        let analyzer = LineAnalyzer(rules: .builtIn)
        func push(_ account: String) -> LineResult { analyzer.analyze(pushLine(account)) }
        let store = try SQLiteStore(path: path)
        var stream = BadgeStream(rules: .builtIn)
        let loader = AccountLoader(store, attaching: &stream)
        let checkpointer = StoreCheckpointer.over(StoreConnection(try SQLiteStore(path: path), owned: true))
        defer { checkpointer.close() }
        func commit(_ seq: Int) throws(StateFile.Failure) {
            if onItsOwnThread {
                checkpointer.begin(&stream, seq: seq, input: "stdin")
                try checkpointer.finish(&stream)
            } else {
                try store.checkpoint(&stream, seq: seq, input: "stdin")
            }
        }
        _ = loader.apply(push("x"), seq: 1, to: &stream)
        // The accounts table is away while the commit runs: it fails.
        try Self.sql(path, "ALTER TABLE accounts RENAME TO away")
        #expect(throws: StateFile.Failure.self) { try commit(1) }
        #expect(stream.inFlightCount == 0 && stream.changedCount == 1)
        try Self.sql(path, "ALTER TABLE away RENAME TO accounts")
        _ = loader.apply(push("y"), seq: 2, to: &stream)
        try commit(2)
        let reread = try SQLiteStore(path: path, readOnly: true)
        #expect(reread.seq == 2 && reread.accountCount == 2)
        for id in ["x", "y"] { #expect(try reread.loadAccount(id, rules: .builtIn)?.tree.total == 1, "\(id)") }
    }

    /// SQLite's memory statistics are off for the whole process (each of the filter's
    /// connections would otherwise take one mutex per allocation): the setting was made
    /// before SQLite first initialized, so it took.
    @Test func sqliteIsConfiguredBeforeTheFirstConnection() throws {
        let folder = try TemporaryFolder()
        _ = try SQLiteStore(path: folder.file("s.sqlite"))
        #expect(SQLiteConnection.configured == 0)
    }

    /// Runs `statements` with the `sqlite3` shell (installed by `make deps`).
    private static func sql(_ path: String, _ statements: String) throws {
        let shell = try #require(["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first { FileIO.exists($0) }, "no sqlite3 shell")
        var pid: pid_t = 0
        let args = [shell, path, statements]
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        #expect(posix_spawn(&pid, shell, nil, nil, &argv, environ) == 0)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(status == 0)
    }
}
