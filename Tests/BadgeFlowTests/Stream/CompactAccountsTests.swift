import BadgeFlowTestSupport
import Testing
@testable import BadgeFlow

/// Rules with an expiring rule and a once token, so that every part of an account is used.
private let rulesText = #"""
    {
      "rules": [
        { "name": "chat", "match": { "/aps/thread-id": { "exists": true } }, "path": "root.chat.{/aps/thread-id}", "action": { "increment": 1 } },
        { "name": "flash", "match": { "/type": "flash" }, "path": "root.flash", "action": { "increment": 1 }, "ttl": 10 },
        { "name": "feature", "match": { "/type": "feature" }, "path": "root.me.new", "action": "dot", "once": "v{/version}" }
      ],
      "sync": { "pages": ["home", "mine"] }
    }
    """#

private func rules() throws -> RuleSet { try RuleSet.parse(rulesText) }

/// Events over three accounts and several devices: counts, dots, fractional and negative
/// times, expiries, held and dismissed once tokens, pages shown and hidden, a logout.
private let events: [String] = [
    #"{"op":"login","account":"acc","device":"phone","at":1795341600}"#,
    #"{"op":"appear","account":"acc","device":"phone","page":"home","at":1795341601.25}"#,
    #"{"op":"push","account":"acc","device":"phone","payload":{"aps":{"alert":"hi","thread-id":"alice"}}}"#,
    #"{"op":"push","account":"acc","device":"tablet","payload":{"aps":{"alert":"hi","thread-id":"alice.smith"}}}"#,
    #"{"op":"push","account":"acc","device":"tablet","payload":{"aps":{"alert":"hi","thread-id":"bob"}}}"#,
    #"{"op":"push","account":"acc","device":"phone","payload":{"aps":{"content-available":1},"type":"feature","version":"3.2"}}"#,
    #"{"op":"clear","account":"acc","device":"phone","path":"root.me.new"}"#,
    #"{"op":"push","account":"acc","device":"phone","payload":{"aps":{"content-available":1},"type":"feature","version":"3.3"}}"#,
    #"{"op":"disappear","account":"acc","device":"phone","page":"home","at":1795341800}"#,
    #"{"op":"background","account":"acc","device":"tablet"}"#,
    #"{"op":"set","device":"solo","path":"root.news","count":7,"ttl":0.5,"at":-12.75}"#,
    #"{"op":"set","device":"solo","path":"root.deep.a.b.c.d","at":-12}"#,
    #"{"op":"login","account":"acc","device":"watch","at":1795341900}"#,
    #"{"op":"logout","account":"acc","device":"watch"}"#,
    #"{"op":"set","account":"e","device":"x","path":"root.\u00e9t\u00e9","at":0.1}"#,
    #"{"op":"push","account":"acc","device":"phone","at":1795341950.5,"payload":{"aps":{"content-available":1},"type":"flash"}}"#,
]

/// The rest of the stream, applied after a compaction to see the same results.
private let later: [String] = [
    #"{"op":"tick","account":"acc","device":"phone","at":1795341960.5}"#,
    #"{"op":"push","account":"acc","device":"phone","payload":{"aps":{"content-available":1},"type":"feature","version":"3.2"}}"#,
    #"{"op":"appear","account":"acc","device":"phone","page":"home","at":1795341850}"#,
    #"{"op":"clear","account":"acc","device":"tablet","path":"root.chat","force":true}"#,
    #"{"op":"tick","device":"solo","at":1}"#,
    #"{"op":"snapshot","account":"e","device":"x"}"#,
    #"{"op":"explain","account":"acc","device":"phone","path":"root"}"#,
]

/// The account's state-file JSON, every field written (what "the same account" means).
private func json(_ a: Account) -> String {
    var w = JSONWriter()
    StateFile.writeAccount(a, compact: false, into: &w)
    return w.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
}

private func run(_ lines: [String], on stream: inout BadgeStream, compactingTo keep: Int? = nil) -> [String] {
    let analyzer = LineAnalyzer(rules: stream.rules)
    var out: [String] = []
    for line in lines {
        var w = JSONWriter()
        stream.apply(analyzer.analyze(line), seq: out.count + 1, into: &w)
        out.append(w.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        if let keep { stream.compact(keeping: keep) }
    }
    return out
}

@Suite struct CompactAccountsTests {
    @Test func everyAccountComesBackAsItWent() throws {
        var stream = BadgeStream(rules: try rules())
        let results = run(events, on: &stream)
        #expect(!results.contains { $0.contains("\"error\"") }, "\(results)")
        #expect(stream.accounts.count == 3)
        var compact = CompactAccounts()
        for (id, a) in stream.accounts {
            let stored = compact.insert(a, as: id)
            #expect(stored)
        }
        #expect(compact.count == 3)
        for (id, a) in stream.accounts {
            let copy = try compact.account(id, rules: stream.rules)
            #expect(copy.map(json) == json(a), "\(id)")
            let taken = try compact.take(id, rules: stream.rules)
            #expect(taken.map(json) == json(a), "\(id)")
            #expect(!compact.contains(id))
        }
        #expect(compact.isEmpty)
        // The account with expiries, tokens and two devices with sync state has them all.
        let acc = try #require(stream.accounts["acc"])
        #expect(json(acc).contains("\"expires\""))
        #expect(json(acc).contains("\"dismissed\""))
        #expect(json(acc).contains("\"disappearedAt\""))
    }

    @Test func aStreamCompactedAfterEveryLineGivesTheSameResults() throws {
        var expanded = BadgeStream(rules: try rules())
        var compacted = BadgeStream(rules: try rules())
        let a = run(events + later, on: &expanded)
        let b = run(events + later, on: &compacted, compactingTo: 1)
        #expect(a == b)
        // The compact forms kept an expiry, a dismissed token and a forced clear's marks.
        #expect(b.contains { $0.contains(#""expired":["root.flash"]"#) })
        #expect(
            b.contains {
                $0.contains(#""device":"phone","account":"acc","kind":"background","rule":"feature","path":"root.me.new","changes":[]"#)
            })
        #expect(b.contains { $0.contains(#""decrement":{"by":3,"paths":["root.chat.alice","root.chat.alice%2Esmith","root.chat.bob"]}"#) })
        #expect(compacted.accounts.count == 1)
        #expect(compacted.accountCount == 3)
        #expect(Set(compacted.accountIDs) == ["acc", "solo", "e"])
        #expect(try StateFile.text(compacted) == StateFile.text(expanded))
        #expect(compacted.device("tablet", account: "acc")?.sync.foreground == false)
        #expect(compacted.device("watch", account: "acc") == nil)
    }

    @Test func theLeastRecentlyUsedGoCompactFirst() throws {
        var stream = BadgeStream(rules: try rules())
        stream.compact(keeping: 10)
        _ = run(
            (0..<5).map { #"{"op":"set","device":"d\#($0)","path":"root.a","at":1}"# } + [#"{"op":"tick","device":"d0","at":2}"#],
            on: &stream)
        stream.compact(keeping: 2)
        #expect(Set(stream.accounts.keys) == ["d0", "d4"])
        #expect(stream.accountCount == 5)
    }

    /// A stream that tracks changes is not compacted: a compact account would leave its
    /// change behind, and the next checkpoint would not write it.
    @Test func aStreamThatTracksChangesKeepsItsChangedAccountsExpanded() throws {
        var stream = BadgeStream(rules: try rules())
        stream.tracksChanges = true
        _ = run((0..<3).map { #"{"op":"set","device":"d\#($0)","path":"root.a","at":1}"# }, on: &stream)
        stream.compact(keeping: 0)
        #expect(stream.accounts.count == 3)
        #expect(Set(stream.takeChanged().map(\.id)) == ["d0", "d1", "d2"])
    }

    @Test func aBatchUndoneKeepsAnAccountThatWasCompact() throws {
        var stream = BadgeStream(rules: try rules())
        _ = run([#"{"op":"set","device":"d","path":"root.a","count":2,"at":1}"#], on: &stream)
        stream.compact(keeping: 0)
        #expect(stream.accounts.isEmpty)
        stream.keepsUndo = true
        stream.beginBatch()
        _ = run([#"{"op":"set","device":"d","path":"root.a","count":5,"at":2}"#], on: &stream)
        stream.undoBatch()
        let d = try #require(try stream.account("d"))
        #expect(d.tree.mark(of: "root.a") == .count(2))
        #expect(d.clock == 1)
    }

    /// The device and mark counts an encoding returns (what a store records of an account)
    /// are those a separate walk finds, on random accounts; each encoding (some longer than
    /// a writer's first room) reads back as the account.
    @Test func theCountsOfAnEncodingAreTheAccountsOwn() throws {
        var random = SplitMix64(seed: 30)
        var stream = BadgeStream(rules: try rules())
        var lines: [String] = []
        for _ in 0..<600 {
            let who = #""account":"a\#(random.below(12))","device":"d\#(random.below(4))""#
            let path =
                random.below(4) == 0
                ? "root.long\(String(repeating: "x", count: 50))\(random.below(20))" : "root.x\(random.below(30)).y\(random.below(3))"
            switch random.below(6) {
            case 0, 1: lines.append(#"{"op":"set",\#(who),"path":"\#(path)","count":\#(random.below(4)),"at":\#(random.below(100))}"#)
            case 2: lines.append(#"{"op":"clear",\#(who),"path":"\#(path)"}"#)
            case 3: lines.append(#"{"op":"logout",\#(who)}"#)
            case 4: lines.append(#"{"op":"push",\#(who),"payload":{"aps":{"alert":"hi","thread-id":"t\#(random.below(9))"}}}"#)
            default: lines.append(#"{"op":"login",\#(who),"at":\#(random.below(100))}"#)
            }
        }
        let results = run(lines, on: &stream)
        #expect(!results.contains { $0.contains("\"error\"") }, "\(results.filter { $0.contains("\"error\"") }.prefix(3))")
        #expect(stream.accounts.count == 12)
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        var longest = 0
        for (id, a) in stream.accounts {
            var bytes: [UInt8] = []
            let counts = RowCache.encode(a, json: none, seed: 7, into: &bytes)
            #expect(counts.devices == a.devices.count && counts.marks == a.tree.markCount, "\(id)")
            longest = max(longest, bytes.count)
            let back = bytes.withUnsafeBytes { RowCache.decode($0, json: none, seed: 7, rules: stream.rules) }
            #expect(back.map(json) == json(a), "\(id)")
            var plain: [UInt8] = []
            AccountCodec.encode(a, into: &plain)
            #expect(Array(bytes[RowCache.header...]) == plain, "\(id)")
        }
        #expect(longest > 512, "\(longest) bytes")
    }

    @Test func timesKeepEveryBit() {
        let times: [Double] = [
            0, -0.0, 1, -1, 0.5, -12.75, 1_795_341_700.5, 0x1p52, -0x1p52, 0x1p52 - 1, 0x1p53, 1e300, -1e-300,
            .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
        ]
        for t in times {
            var bytes: [UInt8] = []
            CompactCoding.time(t, &bytes)
            let back = bytes.withUnsafeBytes { b in
                var r = CompactReader(b)
                return (r.time(), r.isDone)
            }
            #expect(back.0.bitPattern == t.bitPattern && back.1, "\(t)")
        }
    }

    @Test func aTruncatedOrDamagedEncodingIsRefusedNotRead() throws {
        var stream = BadgeStream(rules: try rules())
        _ = run(events, on: &stream)
        let a = try #require(stream.accounts["acc"])
        var bytes: [UInt8] = []
        AccountCodec.encode(a, into: &bytes)
        #expect(bytes.count < 400)
        for n in 0..<bytes.count {
            let decoded = bytes.withUnsafeBytes { AccountCodec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<n]), rules: stream.rules) }
            #expect(decoded == nil, "prefix of \(n) bytes")
        }
        // Trailing bytes, and a count larger than the bytes left, are refused too.
        let longer = bytes + [0]
        let withTrailing = longer.withUnsafeBytes { AccountCodec.decode($0, rules: stream.rules) }
        #expect(withTrailing == nil)
        var huge: [UInt8] = []
        CompactCoding.time(0, &huge)
        CompactCoding.varint(1 << 40, &huge)
        let tooMany = huge.withUnsafeBytes { AccountCodec.decode($0, rules: stream.rules) }
        #expect(tooMany == nil)
    }

    @Test func anAccountWithOneDeviceAndThreeMarksTakesAboutAHundredBytes() throws {
        var stream = BadgeStream(rules: .builtIn)
        _ = run(
            [
                #"{"op":"push","account":"acct-000123","device":"dev-000123","at":1795341600,"payload":{"aps":{"alert":"hi","thread-id":"alice"}}}"#,
                #"{"op":"push","account":"acct-000123","device":"dev-000123","at":1795341601,"payload":{"aps":{"alert":"hi","thread-id":"bob"}}}"#,
                #"{"op":"push","account":"acct-000123","device":"dev-000123","at":1795341602,"payload":{"aps":{"alert":"mail","category":"mail"}}}"#,
            ], on: &stream)
        let a = try #require(stream.accounts["acct-000123"])
        #expect(a.tree.markCount == 3)
        var bytes: [UInt8] = []
        AccountCodec.encode(a, into: &bytes)
        #expect(bytes.count <= 120, "\(bytes.count) bytes")
    }

    /// The encoding is also an SQLite row's cache (``RowCache``), read by later builds: a
    /// change of its bytes must come with a new ``RowCache/tag``, which this pin forces.
    @Test func theEncodingOfAKnownAccountIsPinned() throws {
        var stream = BadgeStream(rules: .builtIn)
        _ = run(
            [
                #"{"op":"login","account":"acct","device":"dev","at":1795341600,"id":"e1"}"#,
                #"{"op":"push","account":"acct","device":"dev","at":1795341601,"payload":{"aps":{"alert":"hi","thread-id":"alice"}}}"#,
                #"{"op":"set","account":"acct","device":"dev","at":1795341602.5,"path":"root.news","ttl":60}"#,
                #"{"op":"appear","account":"acct","device":"dev","page":"home","at":1795341603}"#,
            ], on: &stream)
        var bytes: [UInt8] = []
        AccountCodec.encode(try #require(stream.accounts["acct"]), into: &bytes)
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        // Pinned with tag 2 (tag 1 had no event ids; its bytes are this without the last
        // four). A new encoding needs a new tag and a new pin, together.
        let pinned =
            "8ce9abe01a040204636861740373657404726f6f74010000046368617401000105616c6963650210010484e9abe01a00046e657773003402"
            + "06010000a048afc0da41010000a057afc0da4100010364657600022f0104686f6d650104686f6d658ce9abe01a" + "01026531"
        #expect(RowCache.tag == 2 && hex == pinned, "the encoding changed: give RowCache.tag a new value and pin \(hex)")
    }

    /// Bytes that pass a row cache's check but were made by hand give no account the JSON
    /// decoder would refuse: a negative icon or delivered count.
    @Test func aDeviceOutsideTheJSONRangesIsRefused() throws {
        for (icon, delivered) in [(-1, 0), (0, -1), (0, Int(Int32.max) + 1), (3, Int.max)] {
            var a = Account(rules: .builtIn)
            var d = Device(rules: .builtIn)
            d.payloadIcon = icon
            d.delivered = delivered
            a.devices["d"] = d
            var bytes: [UInt8] = []
            AccountCodec.encode(a, into: &bytes)
            let back = bytes.withUnsafeBytes { AccountCodec.decode($0, rules: .builtIn) }
            #expect((back != nil) == (icon >= 0 && delivered >= 0), "\(icon) \(delivered)")
        }
    }

    /// A total past Int32 (two marks of 2^31 - 1) is delivered to the device as it is: the
    /// account still compacts, expands, saves and loads.
    @Test func aDeliveredTotalPastInt32ComesBack() throws {
        let folder = try TemporaryFolder()
        var stream = BadgeStream(rules: .builtIn)
        let lines = [
            #"{"op":"set","account":"a","device":"d","path":"root.x","count":2147483647,"at":1}"#,
            #"{"op":"set","account":"a","device":"d","path":"root.y","count":2147483647,"at":2}"#,
        ]
        let before = run(lines, on: &stream)
        #expect(before.last?.contains(#""icon":4294967294"#) == true, "\(before)")
        let a = try #require(stream.accounts["a"])
        #expect(a.devices["d"]?.delivered == 4_294_967_294)
        var bytes: [UInt8] = []
        AccountCodec.encode(a, into: &bytes)
        let back = try #require(bytes.withUnsafeBytes { AccountCodec.decode($0, rules: .builtIn) })
        #expect(json(back) == json(a))
        let file = folder.file("s.json")
        try StateFile.save(stream, to: file)
        let loaded = try StateFile.load(file, rules: .builtIn)
        #expect(json(try #require(loaded.accounts["a"])) == json(a))
    }

    @Test func aCompactJSONLoadSavesTheSameFile() throws {
        let folder = try TemporaryFolder()
        let file = folder.file("state.json"), again = folder.file("again.json")
        var stream = BadgeStream(rules: try rules())
        _ = run(events, on: &stream)
        try StateFile.save(stream, to: file)
        let loaded = try StateFile.load(file, rules: try rules(), compact: true)
        #expect(loaded.accounts.isEmpty)
        #expect(loaded.accountCount == 3)
        try StateFile.save(loaded, to: again)
        #expect(try FileIO.readBytes(again) == FileIO.readBytes(file))
    }

    @Test func selectFindsTheKthSmallestAsSortingWould() {
        var seed: UInt64 = 7
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        for n in [1, 2, 3, 5, 16, 100, 1000] {
            for spread in [2, 1000, 1 << 30] {
                let values = (0..<n).map { _ in next() % UInt64(spread) }
                let sorted = values.sorted()
                for k in Set([0, n / 2, n - 1, Int(next() % UInt64(n))]) {
                    var work = values
                    #expect(AccountTable.select(k, in: &work) == sorted[k], "n \(n) spread \(spread) k \(k)")
                }
            }
        }
    }
}
