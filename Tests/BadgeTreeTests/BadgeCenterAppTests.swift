import BadgeFlowTestSupport
import Foundation
import Observation
import Testing
@testable import BadgeTree

/// A screen that observes and goes away.
private final class Screen: Sendable {}

/// States heard, from any thread.
private final class Heard: Sendable {
    private let states = Locked<[BadgeState]>([])
    func append(_ s: BadgeState) { states.withLock { $0.append(s) } }
    var all: [BadgeState] { states.withLock { $0 } }
}

@Suite struct BadgeValueTests {
    @Test func theBadgeValueIsWhatATabBarItemShows() throws {
        let center = BadgeCenter(
            configuration: try .init(display: ["root.me": .dot, "root.promo": .custom("new")]))
        #expect(center.state(of: "root.chat").badgeValue == nil)
        try center.increment("root.chat.alice", by: 120)
        #expect(center.state(of: "root.chat").badgeValue == "99+")
        #expect(center.state(of: "root.chat").count == 120)
        try center.set("root.feature")  // a dot
        #expect(center.state(of: "root.feature").badgeValue == "")
        try center.increment("root.me.wallet", by: 5)  // a dot-only tab with a count below
        #expect(center.state(of: "root.me").badgeValue == "")
        try center.set("root.promo.item")
        #expect(center.state(of: "root.promo").badgeValue == "new")
        try center.increment("root.promo.item", by: 3)
        #expect(center.state(of: "root.promo").badgeValue == "3")
        try center.set("root.chat.alice", count: 3)
        #expect(center.state(of: "root.chat").badgeValue == "3")
    }

    @Test func theAccessibilityLabelReadsTheBadgeOut() throws {
        #expect(BadgeDisplay.number(3, max: 99).accessibilityLabel == "3 unread")
        #expect(BadgeDisplay.number(300, max: 99).accessibilityLabel == "more than 99 unread")
        #expect(BadgeDisplay.dot.accessibilityLabel == "new")
        #expect(BadgeDisplay.hidden.accessibilityLabel == nil)
        #expect(BadgeDisplay.custom("sale").accessibilityLabel == "sale")
    }
}

@Suite struct OwnerBoundObservationTests {
    @Test func anOwnersDeallocationEndsItsObservationWithTheTokenStillHeld() throws {
        let center = BadgeCenter()
        let heard = Heard()
        var screen: Screen? = Screen()
        let token = try center.observe("root.chat", owner: screen) { heard.append($0) }
        try center.increment("root.chat.alice")
        #expect(heard.all.map(\.count) == [0, 1])
        #expect(center.observationCount == 1)
        screen = nil
        try center.increment("root.chat.alice")
        #expect(heard.all.map(\.count) == [0, 1])
        #expect(center.observationCount == 0)
        #expect(!token.isLive)
    }

    @Test func theOwnerIsHandedToTheHandlerAndNotKeptAlive() throws {
        let center = BadgeCenter()
        let heard = Heard()
        final class Cell: Sendable {
            let heard: Heard
            init(_ heard: Heard) { self.heard = heard }
        }
        var cell: Cell? = Cell(heard)
        weak let weakCell = cell
        let token = try center.observe("root.chat", owner: cell.map { $0 }!) { cell, state in cell.heard.append(state) }
        try center.increment("root.chat.bob")
        cell = nil
        #expect(weakCell == nil)
        try center.increment("root.chat.bob")
        #expect(heard.all.map(\.count) == [0, 1])
        withExtendedLifetime(token) {}
    }

    @Test @MainActor func aMainActorOwnerIsHandedToTheHandlerAndEndsTheObservation() async throws {
        @MainActor final class Controller { var shown: [String?] = [] }
        let center = BadgeCenter()
        var controller: Controller? = Controller()
        weak let weakController = controller
        let token = try center.observeOnMainActor("root.chat", owner: controller!) { c, state in
            c.shown.append(state.badgeValue)
        }
        #expect(controller?.shown == [nil])
        try center.increment("root.chat.alice")
        while controller?.shown.count == 1 { await Task.yield() }
        #expect(controller?.shown == [nil, "1"])
        controller = nil
        #expect(weakController == nil)
        #expect(center.observationCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func theCurrentStateArrivesBeforeObserveReturnsWhileAnotherThreadDelivers() throws {
        let center = BadgeCenter()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let slow = try center.observe("root.a") { state in
            if state.count == 1 {
                entered.signal()
                proceed.wait()
            }
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? center.increment("root.a")
            done.signal()
        }
        entered.wait()  // the other thread is inside the slow handler, delivering
        let heard = Heard()
        let token = try center.observe("root.b") { heard.append($0) }
        #expect(heard.all.map(\.path) == ["root.b"])
        proceed.signal()
        done.wait()
        withExtendedLifetime((slow, token)) {}
    }

    // The limit catches a hang, not slowness: on a 2-core machine Swift Testing's cooperative
    // pool has 2 threads, and the end-to-end tests that wait on processes hold them for
    // minutes, so a test (and its limit's timer) may wait that long before it runs.
    @Test(.timeLimit(.minutes(30))) func aStreamOfStatesFinishesWhenItsCenterIsGone() async throws {
        var center: BadgeCenter? = BadgeCenter()
        let states = try center!.states(of: "root.chat")
        try center!.increment("root.chat.alice")
        center = nil
        var counts: [Int] = []
        for await state in states { counts.append(state.count) }
        #expect(counts == [0, 1])
    }

    @Test @MainActor func coalescedMainActorObservationHearsOnlyTheLatestPerTurn() async throws {
        let center = BadgeCenter()
        var calls: [Int] = []
        let token = try center.observeOnMainActor("root", coalescing: true) { calls.append($0.count) }
        for _ in 0..<10_000 { try center.increment("root.chat.alice") }
        while calls.last != 10_000 { await Task.yield() }
        #expect(calls.count == 2)
        #expect(calls.first == 0)
        withExtendedLifetime(token) {}
    }

    @Test func observingMakesNoNodes() throws {
        let center = BadgeCenter()
        var tokens: [BadgeObservation] = []
        for i in 0..<2_000 { tokens.append(try center.observe("root.chat.c\(i)") { _ in }) }
        #expect(center.tree.nodeCount == 1)
        try center.increment("root.chat.c7")
        #expect(center.tree.nodeCount == 3)
        #expect(center.state(of: "root.chat.c7").count == 1)
        withExtendedLifetime(tokens) {}
    }
}

@Suite struct BadgeModelTests {
    @Test @MainActor func observationTrackingSeesTheModelChange() async throws {
        let center = BadgeCenter()
        let model = try center.model(for: "root.chat")
        #expect(try center.model(for: "root.chat") === model)
        #expect(model.state.badgeValue == nil)
        let changed = Locked(false)
        withObservationTracking {
            _ = model.state
        } onChange: {
            changed.withLock { $0 = true }
        }
        try center.increment("root.chat.alice", by: 3)
        while model.state.count != 3 { await Task.yield() }
        #expect(changed.withLock { $0 })
        #expect(model.state.badgeValue == "3")
    }

    @Test @MainActor func aModelsObservationEndsWithTheModel() throws {
        let center = BadgeCenter()
        var model: BadgeModel? = try center.model(for: "root.chat")
        #expect(center.observationCount == 1)
        #expect(model?.path == "root.chat")
        model = nil
        #expect(center.observationCount == 0)
    }
}

@Suite struct SettingsTests {
    @Test func theFilesMarksComeBackUnderTheCodesSettings() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.json")
        let v1 = BadgeCenter()
        try v1.increment("root.chat.alice", by: 150)
        try v1.save(to: path)
        let settings = try BadgeTree.Configuration(maxDisplay: 999, contribute: ["root.chat.alice": .none])
        let v2 = try BadgeCenter(contentsOf: path, configuration: settings)
        #expect(v2.configuration == settings)
        #expect(v2.state(of: "root.chat.alice").badgeValue == "150")
        #expect(v2.total == 0)
        let url = URL(fileURLWithPath: path)
        #expect(try BadgeCenter(contentsOf: url, configuration: settings).state(of: "root.chat.alice").count == 150)
    }

    @Test func persistenceErrorsSayWhichCaseTheyAre() throws {
        let dir = try TemporaryFolder()
        func kind(_ path: String) -> BadgeCenter.PersistenceError.Kind? {
            do {
                _ = try BadgeCenter(contentsOf: path, configuration: .init())
                return nil
            } catch { return error.kind }
        }
        #expect(kind(dir.file("none.json")) == .missingFile)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: dir.file("bad.json")))
        #expect(kind(dir.file("bad.json")) == .corrupt)
        try Data(#"{"version":3,"tree":{}}"#.utf8).write(to: URL(fileURLWithPath: dir.file("v3.json")))
        #expect(kind(dir.file("v3.json")) == .unsupportedVersion(3))
        try Data("#badgetree-shared 3 abc\n{}\n".utf8).write(to: URL(fileURLWithPath: dir.file("v3.dat")))
        #expect(kind(dir.file("v3.dat")) == .unsupportedVersion(3))
        let other = BadgeCenter(configuration: try .init(root: "app"))
        try other.set("app.x")
        try other.save(to: dir.file("app.json"))
        #expect(kind(dir.file("app.json")) == .incompatible)
    }

    @Test func settingsThatCouldNotBeLoadedBackAreRefusedWhenMade() {
        #expect(throws: ConfigurationError.self) { try BadgeTree.Configuration(maxDisplay: 0) }
        #expect(throws: ConfigurationError.self) { try BadgeTree.Configuration(display: ["root.promo": .custom("")]) }
        #expect(throws: ConfigurationError.self) { try BadgeTree.Configuration(root: "app.badges") }
        #expect(throws: ConfigurationError.self) { try BadgeTree.Configuration(display: ["Root.me": .dot]) }
        #expect(throws: ConfigurationError.self) { try BadgeTree.Configuration(contribute: ["chat": .none]) }
        #expect(throws: ConfigurationError.self) { try BadgeTree.Configuration(contribute: ["root..chat": .none]) }
        #expect((try? BadgeTree.Configuration(root: "app", display: ["app.me": .dot])) != nil)
        do {
            _ = try BadgeTree.Configuration(display: ["Root.me": .dot])
        } catch {
            #expect(error.setting == #"display["Root.me"]"#)
        }
    }

    @Test func mutingAChatOnALiveCenterTellsObserversAndIsNoRead() throws {
        let center = BadgeCenter()
        try center.increment("root.chat.alice", by: 4)
        try center.increment("root.chat.bob", by: 2)
        let heard = Heard()
        let token = try center.observe("root") { heard.append($0) }
        let outcome = try center.setContribution(.none, of: "root.chat.alice")
        #expect(outcome.decrement == nil)  // a setting, not a read (EventLines, "Settings per account")
        #expect(center.total == 2)
        #expect(center.state(of: "root.chat.alice").badgeValue == "4")
        #expect(heard.all.map(\.count) == [6, 2])
        let unmuted = try center.setContribution(.count, of: "root.chat.alice")
        #expect(unmuted.decrement == nil)
        #expect(heard.all.map(\.count) == [6, 2, 6])
        // Back to the configuration's value: no setting is kept for it.
        #expect(center.configuration.contribute["root.chat.alice"] == nil)
        #expect(center.archive.overrides.isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func changingADisplayOnALiveCenterTellsObservers() throws {
        let center = BadgeCenter()
        try center.set("root.promo.item")
        let heard = Heard()
        let token = try center.observe("root.promo") { heard.append($0) }
        try center.setDisplay(.custom("new"), of: "root.promo")
        #expect(heard.all.map(\.badgeValue) == ["", "new"])
        #expect(throws: BadgePathError.self) { try center.setDisplay(.custom(""), of: "root.promo") }
        withExtendedLifetime(token) {}
    }

    @Test func decrementsArriveAsASequenceWithIncreasingIDs() async throws {
        let center = BadgeCenter()
        center.login(account: "u1", device: "phone")
        let requests = center.decrements()
        try center.increment("root.chat.alice", by: 3)
        try center.clear("root.chat.alice")
        try center.set("root.news")
        try center.clear("root.news")  // a dot: no decrement
        try center.increment("root.chat.bob", by: 2)
        try center.increment("root.chat.bob", by: -1)  // not a read: no server event
        try center.clear("root.chat.bob")
        let ids = center.pendingEvents.map(\.id)
        #expect(ids.count == 3)  // alice, news (a dot, read: no decrement), bob
        var it = requests.makeAsyncIterator()
        #expect(
            await it.next() == DecrementRequest(id: 1, decrement: Decrement(by: 3, paths: ["root.chat.alice"]), eventID: ids[0]))
        #expect(await it.next() == DecrementRequest(id: 3, decrement: Decrement(by: 1, paths: ["root.chat.bob"]), eventID: ids[2]))
    }

    @Test func totalExplainAndAnExpiringSetAreOnTheCenter() throws {
        let center = BadgeCenter()
        try center.set("root.sale", count: 2, expires: 100)
        try center.increment("root.chat.alice")
        #expect(center.total == 3)
        #expect(center.explain("root").map(\.path) == ["root.chat.alice", "root.sale"])
        center.expire(through: 100)
        #expect(center.total == 1)
    }

    @Test func aChildPathKeepsAnIdWithDotsInOneSegment() throws {
        let path = BadgePath.root.child("chat").child("bob@mail.com")
        #expect(path.rawValue == "root.chat.bob@mail%2Ecom")
        #expect(path.segments.count == 3)
        #expect(BadgePath.unescapeSegment(String(path.name)) == "bob@mail.com")
        let center = BadgeCenter()
        let heard = Heard()
        let token = center.observe(path) { heard.append($0) }
        try center.increment(path)
        #expect(center.state(of: path).count == 1)
        try center.set(path, count: 4)
        try center.set(BadgePath.root.child("news"))
        #expect(center.total == 4)
        #expect(try center.clear(path).decrement == Decrement(by: 4, paths: [path.rawValue]))
        #expect(throws: BadgePathError.self) { try center.increment(BadgePath("app").child("x")) }
        try center.increment(path)
        #expect(center.state(of: "root.chat").count == 1)
        #expect(heard.all.map(\.count) == [0, 1, 4, 0, 1])
        withExtendedLifetime(token) {}
    }
}

@Suite struct SharedFileTests {
    @Test func reloadingInPlaceKeepsObserversAndTellsThem() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.json")
        let app = BadgeCenter()
        try app.increment("root.chat.alice", by: 2)
        try app.save(to: path)
        let heard = Heard()
        let token = try app.observe("root.chat") { heard.append($0) }
        try BadgeCenter.withSharedFile(path) { extensionCenter in
            try extensionCenter.increment("root.chat.bob")
            try extensionCenter.clear("root.chat.alice")
        }
        let outcome = try app.reload(from: path)
        #expect(heard.all.map(\.count) == [2, 1])
        #expect(outcome.decrement == nil)  // reads are server events, never a net difference
        #expect(app.observationCount == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aChangeUnderTheLockLosesNoUpdateAndReturnsTheBodysResult() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.json")
        let total = try BadgeCenter.withSharedFile(path) { center in
            try center.increment("root.chat.bob")
            return center.total
        }
        #expect(total == 1)
        // The app's stale center saving over the file would lose bob; under the lock it adds.
        try BadgeCenter.withSharedFile(URL(fileURLWithPath: path)) { center in try center.increment("root.chat.alice") }
        let center = try BadgeCenter(contentsOf: path, configuration: .init())
        #expect(center.state(of: "root.chat").count == 2)
    }

    @Test func aCorruptSharedFileIsAnErrorAndLeftAsItIs() throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.json")
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: BadgeCenter.PersistenceError.self) {
            try BadgeCenter.withSharedFile(path) { center in try center.increment("root.x") }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "garbage")
    }

    @Test func twoProcessesHammeringOneFileLoseNoIncrement() async throws {
        let dir = try TemporaryFolder()
        let path = dir.file("badges.json")
        let helper = try Self.sharedFileHelper()
        let processes = try (0..<2).map { i -> Process in
            let p = Process()
            p.executableURL = helper
            p.arguments = [path, "root.chat.p\(i)", "1000"]
            // Under `make check` the helper is an AddressSanitizer build too: what this test
            // checks is the file, not the helper's exit-time leak report.
            var environment = ProcessInfo.processInfo.environment
            environment["ASAN_OPTIONS"] = [environment["ASAN_OPTIONS"], "detect_leaks=0"].compactMap { $0 }.joined(separator: ":")
            p.environment = environment
            try p.run()
            return p
        }
        for p in processes {
            await p.exited()
            #expect(p.terminationStatus == 0)
        }
        let center = try BadgeCenter(contentsOf: path, configuration: .init())
        #expect(center.state(of: "root.chat.p0").count == 1000)
        #expect(center.state(of: "root.chat.p1").count == 1000)
        #expect(center.total == 2000)
    }

    /// The helper executable built beside the test bundle.
    static func sharedFileHelper() throws -> URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = dir.appendingPathComponent("SharedFileHelper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        throw BadgeCenter.PersistenceError(path: "SharedFileHelper", kind: .missingFile, reason: "the helper executable was not built")
    }
}

@Suite struct BadgeModelPathTests {
    @Test @MainActor func aModelOfABadgePathCannotFailAndAStringPathIsChecked() throws {
        let center = BadgeCenter()
        let model = center.model(for: BadgePath.root.child("chat"))
        #expect(try center.model(for: "root.chat") === model)
        #expect(throws: BadgePathError.self) { try center.model(for: "app.chat") }
        #expect(throws: BadgePathError.self) { try center.model(for: "root..chat") }
    }
}

@Suite struct CompactTests {
    @Test func compactingFreesTheNodesOfClearedChatsAndChangesNoState() throws {
        // Built as a value, then handed to a center: a center compacts a tree by itself only
        // once it has twice the nodes it started with.
        var tree = BadgeTree(configuration: try .init(display: ["root.chat": .dot]))
        for i in 0..<2_000 { try tree.increment("root.chat.c\(i)") }
        for i in 0..<1_999 { try tree.clear("root.chat.c\(i)") }
        try tree.set("root.news", expires: 50, once: "n1")
        try tree.set("root.promo", expires: nil, once: "p1")
        try tree.clear("root.promo")  // dismisses p1: the node keeps the token
        let center = BadgeCenter(tree: tree)
        let heard = Heard()
        let token = try center.observe("root.chat") { heard.append($0) }
        let before = center.tree
        #expect(before.nodeCount == 2_004)
        #expect(center.compact() == 1_999)
        let after = center.tree
        #expect(after.nodeCount == 5)  // root, chat, c1999, news, promo
        for path in ["root", "root.chat", "root.chat.c1999", "root.chat.c5", "root.news", "root.promo"] {
            #expect(after.state(of: path) == before.state(of: path))
        }
        #expect(after.records == before.records)
        #expect(after.dismissedTokens.map(\.path) == ["root.promo"])
        #expect(heard.all.count == 1)
        try center.clear("root.chat.c1999")
        #expect(heard.all.map(\.show) == [true, false])
        #expect(center.expire(through: 50).paths == ["root.news"])
        withExtendedLifetime(token) {}
    }
}

@Suite struct AutoCompactTests {
    @Test func observingAndClearingChatCellsOneAfterAnotherLeavesNoPileOfNodes() throws {
        let center = BadgeCenter()
        try center.set("root.news", expires: 50, once: "n1")
        try center.set("root.promo", expires: nil, once: "p1")
        try center.clear("root.promo")  // dismisses p1: the node keeps the token
        let chats = try center.root.child("chat")
        let tab = Heard()
        let tabToken = try center.observe("root.chat") { tab.append($0) }
        let first = Heard()
        let firstToken = try center.observe("root.chat.c0") { first.append($0) }
        var most = 0
        for i in 0..<2_000 {
            let cell = Heard()
            let token = try center.observe("root.chat.c\(i)") { cell.append($0) }
            let node = try chats.child("c\(i)")
            node.increment(by: 2)
            #expect(node.clear().decrement?.by == 2)
            token.cancel()
            #expect(cell.all.map(\.count) == [0, 2, 0])
            most = max(most, center.tree.nodeCount)
        }
        // Without freeing: 2,005 nodes (root, news, promo, chat and a node per cell).
        #expect(most <= BadgeCenter.autoCompactMinimum)
        #expect(center.tree.nodeCount <= BadgeCenter.autoCompactMinimum)
        // Observers kept across the compactions: the tab heard every change, c0 hears a new one.
        #expect(tab.all.count == 1 + 2 * 2_000)
        #expect(tab.all.last?.show == false)
        try center.increment("root.chat.c0")
        #expect(first.all.map(\.count) == [0, 2, 0, 1])
        // The marks, the dismissed token and the pending expiry kept too.
        #expect(center.tree.dismissedTokens.map(\.path) == ["root.promo"])
        #expect(try center.set("root.promo", expires: nil, once: "p1").changes.isEmpty)
        #expect(center.expire(through: 50).paths == ["root.news"])
        withExtendedLifetime((tabToken, firstToken)) {}
    }

    @Test func liveMarksAreNeverFreed() throws {
        let center = BadgeCenter()
        for i in 0..<1_000 { try center.increment("root.chat.c\(i)", by: i + 1) }
        #expect(center.tree.nodeCount == 1_002)
        #expect(center.total == 1_000 * 1_001 / 2)
        #expect(center.state(of: "root.chat.c999").count == 1_000)
    }

    @Test func aCompactionComesWhenAChangePassesTheBoundAndKeepsMarkedNodes() throws {
        let center = BadgeCenter()
        try center.set("root.me.wallet")
        for i in 0..<60 {
            try center.increment("root.chat.c\(i)")
            try center.clear("root.chat.c\(i)")
        }
        // root, me, wallet, chat and 60 cleared cells: at the bound, not past it.
        #expect(center.tree.nodeCount == BadgeCenter.autoCompactMinimum)
        try center.increment("root.chat.c60")
        // Past it: the change that made the 65th node freed the 60 empty cells.
        #expect(center.tree.nodeCount == 5)
        #expect(center.tree.children(of: "root.chat") == ["root.chat.c60"])
        #expect(center.state(of: "root.chat").count == 1)
        #expect(center.state(of: "root.me").show)
    }
}
