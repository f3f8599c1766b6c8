import BadgeFlowTestSupport
import BadgeTree
import Foundation
import Testing

/// A clock the tests set.
private final class TestClock: Sendable {
    private let now = Locked<Double>(1_700_000_000)
    func advance(_ by: Double = 1) { now.withLock { $0 += by } }
    var time: Double { now.withLock { $0 } }
}

private let muted: BadgeTree.Configuration = {
    var c = BadgeTree.Configuration()
    c.contribute["root.chat.muted"] = Contribution.none
    return c
}()

@Suite struct ServerEventTests {
    @Test func aReadIsAClearLineInBadgeFlowsFormatNamingTheLogin() throws {
        let center = BadgeCenter()
        let clock = TestClock()
        center.setEventClock { clock.time }
        try center.increment("root.chat.alice", by: 3)
        try center.clear("root.chat.alice")
        #expect(center.pendingEvents.isEmpty)  // not logged in: nothing to name
        center.login(account: "u\"1", device: "phone")
        try center.increment("root.chat.alice", by: 3)
        try center.clear("root.chat.alice")
        try center.clear("root.chat.alice")  // removes nothing: no event
        let events = center.pendingEvents
        #expect(events.count == 1)
        let e = try #require(events.first)
        #expect(e.kind == .clear && e.seq == 1 && e.decrement == Decrement(by: 3, paths: ["root.chat.alice"]))
        #expect(e.id.utf8.count == 32)
        #expect(
            e.line == #"{"op":"clear","account":"u\"1","device":"phone","path":"root.chat.alice","id":""# + e.id
                + #"","at":1700000000}"#)
        let parsed = try JSONSerialization.jsonObject(with: Data(e.line.utf8)) as? [String: Any]
        #expect(parsed?["account"] as? String == "u\"1")
    }

    @Test func mutesAndUnmutesAreContributeLinesWithoutADecrement() throws {
        let center = BadgeCenter(configuration: muted)
        center.login(account: "u1", device: "phone")
        try center.increment("root.chat.bob", by: 2)
        try center.increment("root.chat.muted", by: 5)
        #expect(try center.setContribution(.none, of: "root.chat.bob").decrement == nil)
        #expect(center.total == 0)
        try center.setContribution(.none, of: "root.chat.bob")  // no change: no event
        try center.setContribution(.count, of: "root.chat.bob")  // the configuration's value
        try center.setContribution(.count, of: "root.chat.muted")  // unmute a chat muted by the code
        try center.clear("root.chat.muted")  // a read of a chat that counted: decrement 5
        try center.setContribution(.none, of: "root.chat.muted")  // back to the code's setting
        try center.increment("root.chat.muted")
        try center.clear("root.chat.muted")  // a muted chat's read: an event, no decrement
        let lines = center.pendingEvents.map { ($0.kind, $0.mode, $0.decrement?.by) }
        #expect(lines.map(\.0) == [.contribute, .contribute, .contribute, .clear, .contribute, .clear])
        #expect(lines.map(\.1) == ["none", "rules", "count", nil, "rules", nil])
        #expect(lines.map(\.2) == [nil, nil, nil, 5, nil, nil])
        #expect(
            center.pendingEvents[0].line.contains(
                #""op":"contribute","account":"u1","device":"phone","path":"root.chat.bob","mode":"none","id":"#))
        #expect(center.archive.overrides.isEmpty)
    }

    @Test func acknowledgedEventsAreGoneByIdOrUpToOne() throws {
        let center = BadgeCenter()
        center.login(account: "u1", device: "d")
        for i in 0..<5 {
            try center.set("root.c\(i)")
            try center.clear("root.c\(i)")
        }
        let ids = center.pendingEvents.map(\.id)
        #expect(Set(ids).count == 5)
        center.acknowledgeEvents([ids[3]])
        center.acknowledgeEvents(through: ids[1])
        #expect(center.pendingEvents.map(\.id) == [ids[2], ids[4]])
        center.acknowledgeEvents(through: "unknown")
        #expect(center.pendingEvents.count == 2)
    }

    @Test func theStreamSampleCannotLoseTheFirstRead() async throws {
        let center = BadgeCenter()
        center.login(account: "u1", device: "d")
        try center.increment("root.chat.alice", by: 6)
        // The docs' shape: the read comes right after the Task starts, before it iterates.
        let got = Task { () -> Int in
            for await request in center.decrements() { return request.decrement.by }
            return 0
        }
        try center.clear("root.chat.alice")
        #expect(await got.value == 6)
        var events = center.serverEvents().makeAsyncIterator()
        #expect(await events.next()?.path == "root.chat.alice")
    }
}

@Suite struct SharedFileEventTests {
    @Test func theExtensionsReadsReachTheAppsDecrementsOnceAndSurviveRelaunch() async throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.dat")
        let app = try BadgeCenter.openOrCreate(path, configuration: muted)
        try app.withSharedFile(path) { $0.login(account: "u1", device: "phone") }
        let requests = app.decrements()
        try app.withSharedFile(path) { shared in try shared.increment("root.chat.alice", by: 4) }
        // The extension (another center through the file) reads alice and adds bob.
        try BadgeCenter.withSharedFile(path, configuration: muted) { ext in
            try ext.clear("root.chat.alice")
            try ext.increment("root.chat.bob", by: 2)
        }
        try app.reload(from: path)
        try app.reload(from: path)  // twice: still once
        try app.withSharedFile(path) { shared in try shared.clear("root.chat.bob") }
        var it = requests.makeAsyncIterator()
        #expect(await it.next()?.decrement.by == 4)
        #expect(await it.next()?.decrement.by == 2)
        #expect(app.pendingEvents.count == 2)
        // Relaunch: pending events come back from the file; acknowledged ones do not.
        let first = app.pendingEvents[0].id
        try app.withSharedFile(path) { shared in shared.acknowledgeEvents([first]) }
        let relaunched = try BadgeCenter(contentsOf: path, configuration: muted)
        #expect(relaunched.pendingEvents.map(\.id) == app.pendingEvents.map(\.id))
        #expect(relaunched.pendingEvents.count == 1)
        #expect(relaunched.account == "u1" && relaunched.device == "phone")
    }

    @Test func aMuteReachesTheExtensionAndSurvivesItsChanges() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.dat")
        let app = try BadgeCenter.openOrCreate(path, configuration: muted)
        try app.withSharedFile(path) { shared in
            try shared.increment("root.chat.family", by: 4)
            try shared.increment("root.chat.bob", by: 2)
            try shared.setContribution(.none, of: "root.chat.family")
        }
        #expect(app.total == 2)
        let extensionTotal = try BadgeCenter.withSharedFile(path, configuration: muted) { ext in
            try ext.increment("root.chat.family")
            return ext.total
        }
        #expect(extensionTotal == 2)  // the extension counts the mute too
        let relaunched = try BadgeCenter(contentsOf: path, configuration: muted)
        #expect(relaunched.total == 2)
        #expect(relaunched.state(of: "root.chat.family").count == 5)
        // 2,000 mute/unmute pairs leave no setting behind.
        try BadgeCenter.withSharedFile(path, configuration: muted) { c in
            for i in 0..<2000 {
                try c.setContribution(.none, of: "root.chat.c\(i)")
                try c.setContribution(.count, of: "root.chat.c\(i)")
            }
        }
        let after = try BadgeCenter(contentsOf: path, configuration: muted)
        #expect(after.archive.overrides == .init(contribute: ["root.chat.family": Contribution.none]))
    }

    @Test func storedSettingsThisBuildCannotTakeAreDroppedNotCorrupt() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.dat")
        let old = BadgeCenter(configuration: try .init(root: "root"))
        try old.increment("root.chat.a", by: 2)
        try old.setContribution(.none, of: "root.chat.a")
        var archive = old.archive
        archive.overrides.contribute["other.x"] = Contribution.none  // not under this root
        archive.overrides.display["root.me"] = .custom("")
        try BadgeCenter(archive: archive).save(to: path)
        let center = try BadgeCenter(contentsOf: path, configuration: .init())
        #expect(center.state(of: "root.chat.a").count == 2)
        #expect(center.total == 0)  // the valid mute applies
        #expect(Set(center.droppedSettings.map(\.path)) == ["other.x", "root.me"])
    }

    @Test func todaysFormatIsReadAndAZeroByteFileIsEmpty() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.json")
        // Version 1, as the previous release wrote it: {sync, tree, version: 1}, one JSON object.
        let old = BadgeCenter()
        try old.increment("root.chat.a", by: 3)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var object = try #require(JSONSerialization.jsonObject(with: try encoder.encode(old.archive)) as? [String: Any])
        object = object.filter { ["sync", "tree"].contains($0.key) }
        object["version"] = 1
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        #expect(try BadgeCenter(contentsOf: path, configuration: .init()).total == 3)
        try BadgeCenter.withSharedFile(path) { try $0.increment("root.chat.a") }
        #expect(try BadgeCenter(contentsOf: path, configuration: .init()).total == 4)
        let empty = dir.file("empty.dat")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(try BadgeCenter(contentsOf: empty, configuration: .init()).total == 0)
        try BadgeCenter.withSharedFile(empty) { try $0.increment("root.x") }
        #expect(try BadgeCenter(contentsOf: empty, configuration: .init()).total == 1)
    }

    @Test func aChangeAppendsOneLineAndTheJournalIsFoldedWhenItOutgrowsTheSnapshot() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.dat")
        try BadgeCenter.withSharedFile(path) { try $0.increment("root.chat.a") }
        let size = { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        let first = size()
        try BadgeCenter.withSharedFile(path) { try $0.increment("root.chat.a") }
        let second = size()
        #expect(second > first && second - first < 200)
        var shrank = false
        for _ in 0..<400 {
            let before = size()
            try BadgeCenter.withSharedFile(path) { try $0.increment("root.chat.a") }
            if size() < before { shrank = true }
        }
        #expect(shrank)
        #expect(try BadgeCenter(contentsOf: path, configuration: .init()).total == 402)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        #expect(names == ["badges.dat", "badges.dat.lock"])
    }

    @Test func aWriterKilledAtAnyInstantLeavesEveryCompletedChangeAndNoStrayFile() async throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.dat")
        let helper = try SharedFileTests.sharedFileHelper()
        var generator = SplitMix64(seed: 44)
        var completed = 0
        var kills = 0
        for _ in 0..<100 {
            let p = Process()
            p.executableURL = helper
            p.arguments = ["pairs", path]
            var environment = ProcessInfo.processInfo.environment
            environment["ASAN_OPTIONS"] = [environment["ASAN_OPTIONS"], "detect_leaks=0"].compactMap { $0 }.joined(separator: ":")
            p.environment = environment
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            // Wait for its first completed change, then kill it a random while later.
            let handle = out.fileHandleForReading
            var text = ""
            while !text.contains("\n") {
                let data = handle.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
            // Killed at a random instant: the sleep is what the test is about.
            usleep(UInt32(generator.next() % 20_000))
            kill(p.processIdentifier, SIGKILL)
            await p.exited()
            if p.terminationReason == .uncaughtSignal { kills += 1 }
            text += String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
            let printed = text.split(separator: "\n").compactMap { Int($0.split(separator: " ").last ?? "") }.max() ?? 0
            let center = try BadgeCenter(contentsOf: path, configuration: .init())
            let a = center.state(of: "root.pair.a").count
            let b = center.state(of: "root.pair.b").count
            // Each change adds one to both: a cut change shows in neither.
            #expect(a == b)
            // Every completed change is there (and at most the one whose "done" was not printed).
            #expect(a == completed + printed || a == completed + printed + 1)
            completed = a
        }
        #expect(kills == 100)
        // The next lock sweeps what a killed compaction left; nothing else is ever left.
        try BadgeCenter.withSharedFile(path) { _ in }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        #expect(names == ["badges.dat", "badges.dat.lock"])
        #expect(completed > 100)
    }
}

@Suite struct PathPapercutTests {
    @Test func anyIdMakesAChildWithoutTry() {
        let center = BadgeCenter()
        let chats = center.root.child(escaping: "chat")
        let long = String(repeating: "x", count: 5000)
        let node = chats.child(escaping: long)
        #expect(node.path.rawValue.utf8.count <= BadgePath.maxBytes)
        #expect(node.path == chats.child(escaping: long).path)
        node.increment()
        #expect(center.total == 1)
        chats.child(escaping: "bob@mail.com").increment()
        #expect(center.state(of: "root.chat.bob@mail%2Ecom").count == 1)
    }

    @Test func anEmptyIdAndANulAreTwoChats() {
        let empty = BadgePath.root.child("")
        let nul = BadgePath.root.child("\u{0}")
        #expect(empty != nul)
        #expect(BadgePath.unescapeSegment(String(empty.name)) == "")
        #expect(BadgePath.unescapeSegment(String(nul.name)) == "\u{0}")
        #expect((try? BadgePath(empty.rawValue)) != nil)
    }
}
