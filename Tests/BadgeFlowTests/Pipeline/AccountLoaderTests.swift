import BadgeFlowTestSupport
import Foundation
import Testing

@testable import BadgeFlow

/// The stream reads no store: the layer that applies its lines (``AccountLoader``,
/// ``ParallelFilter/source``) loads what each line needs first, on real SQLite states.
@Suite struct AccountLoaderTests {
    static func push(_ account: String, thread: String = "t", at: Int = 1_732_269_700) -> String {
        #"{"op":"push","account":"\#(account)","device":"d","at":\#(at),"payload":{"aps":{"alert":"hi","thread-id":"\#(thread)"}}}"#
    }

    /// A state holding accounts `ids`, one push each, committed at seq 1.
    static func committed(_ ids: [String], at path: String) throws -> SQLiteStore {
        let store = try SQLiteStore(path: path)
        var seed = BadgeStream(rules: .builtIn)
        seed.tracksChanges = true
        let analyzer = LineAnalyzer(rules: .builtIn)
        for id in ids { _ = seed.apply(analyzer.analyze(push(id)), seq: 1) }
        try store.checkpoint(&seed, seq: 1, input: "stdin")
        return store
    }

    /// A line whose account nobody loaded is an error (and stops the run), never an empty
    /// account that a commit would write over the stored one.
    @Test func anAccountNotLoadedBeforeItsLineIsAnErrorNotAnEmptyAccount() throws {
        let folder = try TemporaryFolder()
        let store = try Self.committed(["x"], at: folder.file("s.sqlite"))
        var stream = BadgeStream(rules: .builtIn)
        stream.isStoreBacked = true
        let applied = stream.apply(LineAnalyzer(rules: .builtIn).analyze(Self.push("x")), seq: 2)
        let result = try #require(applied)
        let rejected = try #require(result.error)
        #expect(rejected.message.contains("was not read from the state before the line"), "\(rejected.message)")
        #expect(stream.sourceFailure != nil)
        #expect(stream.accountCount == 0 && stream.changedCount == 0)
        #expect(try store.loadAccount("x", rules: .builtIn)?.tree.total == 1)
    }

    /// The loader reads the account first: the line goes on from the stored count.
    @Test func theLoaderReadsTheAccountBeforeItsLine() throws {
        let folder = try TemporaryFolder()
        let store = try Self.committed(["x"], at: folder.file("s.sqlite"))
        var stream = BadgeStream(rules: .builtIn)
        let loader = AccountLoader(store, attaching: &stream)
        #expect(stream.isStoreBacked && stream.tracksChanges)
        let result = try #require(loader.apply(LineAnalyzer(rules: .builtIn).analyze(Self.push("x")), seq: 2, to: &stream)?.applied)
        #expect(result.outcome.changes.first { $0.path == "root.chat.t" }?.count == 2)
        #expect(stream.loads.inline == 1 && stream.loads.ahead == 0)
    }

    /// A store that cannot be read rejects the line that needed it with the store's error.
    @Test func aReadThatFailsRejectsTheLineWithTheStoresError() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("s.sqlite")
        let store = try Self.committed(["x"], at: path)
        // The sqlite3 shell, another process, moves the table away.
        let shell = try #require(["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first { FileIO.exists($0) }, "no sqlite3 shell")
        let moved: ProcessResult = try ChildProcess.run(shell, [path, "ALTER TABLE accounts RENAME TO away"])
        #expect(moved.status == 0, "\(moved.stderr)")
        var stream = BadgeStream(rules: .builtIn)
        let loader = AccountLoader(store, attaching: &stream)
        let result = try #require(loader.apply(LineAnalyzer(rules: .builtIn).analyze(Self.push("x")), seq: 2, to: &stream))
        let rejected = try #require(result.error)
        #expect(rejected.message.contains("could not be loaded from the state"), "\(rejected.message)")
        #expect(stream.sourceFailure != nil && stream.accountCount == 0)
    }

    /// A line rejected after its account was made empty drops it; a later line of the same
    /// batch uses the store's answer (none), not an internal error.
    @Test(arguments: [1, 2])
    func aLineRejectedAfterMakingItsAccountLeavesItToTheNextLine(jobs: Int) throws {
        let folder = try TemporaryFolder()
        let store = try Self.committed(["x"], at: folder.file("s.sqlite"))
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: jobs, linesPerBatch: 64)
        filter.source = store
        let lines = [
            #"{"op":"clear","account":"new","device":"d","path":"root.chat.c1."}"#, Self.push("new"), Self.push("x"),
        ]
        let out = String(decoding: filter.results(of: lines), as: UTF8.self).split(separator: "\n")
        #expect(out.count == 3)
        #expect(out[0].contains(#""code":"invalid-path""#))
        #expect(out[1].contains(#""account":"new""#) && !out[1].contains(#""error""#), "\(out[1])")
        #expect(out[2].contains(#""count":2"#), "x goes on from its stored count: \(out[2])")
        #expect(filter.withStream { $0.sourceFailure } == nil)
    }

    /// Fleet-wide `expire` and `reconcile` over a store-backed stream whose accounts leave
    /// memory after every line give the bytes of a stream that holds them all: the loader
    /// reads the due index and walks the store just before each.
    @Test(arguments: ["tree", "payload"])
    func fleetLinesOverAStoreGiveTheBytesOfAStreamHoldingEveryAccount(icon: String) throws {
        let folder = try TemporaryFolder()
        let rules = try RuleSet.parse(RuleSet.builtInText.replacing(#""icon": "tree""#, with: #""icon": "\#(icon)""#))
        let analyzer = LineAnalyzer(rules: rules)
        var lines: [String] = []
        for (i, id) in ["a", "b", "c", "d"].enumerated() {
            // The device that logs in first is owed the push's number (it went to "d" only).
            lines.append(#"{"op":"login","account":"\#(id)","device":"e\#(i)","at":\#(1000 + i)}"#)
            lines.append(Self.push(id, thread: "t\(i)", at: 1000 + i))
            lines.append(
                #"{"op":"set","account":"\#(id)","device":"d","at":\#(1000 + i),"path":"root.promotion.p","ttl":\#(10 * (i + 1))}"#)
        }
        lines += [
            #"{"op":"expire","at":1015}"#, #"{"op":"reconcile"}"#,
            #"{"op":"reconcile","account":"b","device":"d","badge":7}"#, #"{"op":"reconcile"}"#,
            #"{"op":"expire","at":2000}"#, #"{"op":"clear","account":"c","device":"d","path":"root.chat.t2"}"#,
            #"{"op":"reconcile"}"#,
        ]
        var whole = BadgeStream(rules: rules)
        var expected = JSONWriter()
        for (i, line) in lines.enumerated() { whole.apply(analyzer.analyze(line), seq: i + 1, into: &expected) }

        let store = try SQLiteStore(path: folder.file("s.sqlite"))
        var stream = BadgeStream(rules: rules)
        var loader = AccountLoader(store, attaching: &stream)
        var got = JSONWriter()
        for (i, line) in lines.enumerated() {
            loader.apply(analyzer.analyze(line), seq: i + 1, to: &stream, into: &got)
            try store.checkpoint(&stream, seq: i + 1, input: "stdin")
            stream.evict(keeping: 0)
            // The fleet-wide lines start on a stream that knows nothing of the accounts (a run
            // resumed on the state): only the store's due index and rows tell them.
            if line.contains(#""account":"d","device":"d","at":1003,"path""#) {
                stream = BadgeStream(rules: rules)
                loader = AccountLoader(store, attaching: &stream)
            }
        }
        #expect(String(decoding: got.bytes, as: UTF8.self) == String(decoding: expected.bytes, as: UTF8.self))
        #expect(stream.sourceFailure == nil)
        #expect(String(decoding: got.bytes, as: UTF8.self).contains(#""op":"expire","at":1015,"accounts":[{"account":"a""#))
    }

    /// After a rules change that lowers every total, a fleet-wide `reconcile` over a store
    /// lists the accounts only the store holds, and the later lines see the numbers sent: the
    /// loader's walk gives the same bytes whether the line is written as applied or taken as
    /// a value (``StoreScan/owed(_:)``, ``StoreScan/owingAccounts(_:)``).
    @Test func aFleetReconcileAfterARulesChangeListsTheStoredAccountsEitherWay() throws {
        let folder = try TemporaryFolder()
        let muted = try RuleSet.parse(
            RuleSet.builtInText.replacing(#""icon": "tree","#, with: #""icon": "tree", "contribute": {"root.chat.t1": "none"},"#))
        let day = ["a", "b", "c"].flatMap { id in
            [#"{"op":"login","account":"\#(id)","device":"e","at":1000}"#, Self.push(id, thread: "t1", at: 1000)]
        }
        let after = [
            #"{"op":"reconcile"}"#, Self.push("b", thread: "t2", at: 1001), #"{"op":"reconcile"}"#,
            #"{"op":"clear","account":"c","path":"root.chat.t1"}"#, #"{"op":"reconcile"}"#,
        ]
        func run(_ name: String, asValues: Bool) throws -> String {
            let store = try SQLiteStore(path: folder.file(name))
            var stream = BadgeStream(rules: .builtIn)
            let loader = AccountLoader(store, attaching: &stream)
            var out = JSONWriter()
            for (i, line) in day.enumerated() {
                loader.apply(LineAnalyzer(rules: .builtIn).analyze(line), seq: i + 1, to: &stream, into: &out)
            }
            try store.checkpoint(&stream, seq: day.count, input: "stdin")
            // Resumed under the muted rules, holding no account.
            var resumed = BadgeStream(rules: muted)
            let again = AccountLoader(store, attaching: &resumed)
            var lines = JSONWriter()
            for (i, line) in after.enumerated() {
                let result = LineAnalyzer(rules: muted).analyze(line)
                if asValues {
                    again.apply(result, seq: day.count + i + 1, to: &resumed)?.render(into: &lines)
                } else {
                    again.apply(result, seq: day.count + i + 1, to: &resumed, into: &lines)
                }
                #expect(resumed.sourceFailure == nil)
            }
            return String(decoding: lines.bytes, as: UTF8.self)
        }
        let written = try run("w.sqlite", asValues: false)
        #expect(written == (try run("v.sqlite", asValues: true)))
        let first = written.split(separator: "\n")[0]
        for id in ["a", "b", "c"] { #expect(first.contains(#"{"account":"\#(id)","icon":0"#), "\(first)") }
        #expect(written.split(separator: "\n")[2] == #"{"seq":9,"op":"reconcile","accounts":[]}"#)
    }
}
