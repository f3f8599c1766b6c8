import Dispatch
import Testing
@testable import BadgeTree

/// Collects what observers hear, from any thread.
private final class Recorder: Sendable {
    private let log = Locked<[String]>([])
    private let heard = Locked<[BadgeState]>([])

    func record(_ state: BadgeState) {
        heard.withLock { $0.append(state) }
        note("\(state.path) \(state.count) \(state.show) \(state.display)")
    }

    func note(_ line: String) { log.withLock { $0.append(line) } }

    var lines: [String] { log.withLock { $0 } }
    var states: [BadgeState] { heard.withLock { $0 } }
}

/// A slot a handler can read and write from any thread.
private final class Box<Value>: @unchecked Sendable {
    private let value: Locked<Value>
    init(_ value: Value) { self.value = Locked(value) }
    func get() -> Value { value.withLock { $0 } }
    func set(_ new: Value) { value.withLock { $0 = new } }
}

private final class Owner: Sendable {}

@Suite struct BadgeCenterTests {
    // MARK: - Observing

    @Test func observeDeliversTheCurrentStateAtOnce() throws {
        let center = BadgeCenter()
        try center.set("root.chat.alice", count: 2)
        let heard = Recorder()
        let token = try center.observe("root.chat", heard.record)
        #expect(heard.lines == ["root.chat 2 true 2"])
        withExtendedLifetime(token) {}
    }

    @Test func observingAnUnmarkedPathDeliversHidden() throws {
        let center = BadgeCenter()
        let heard = Recorder()
        let token = try center.observe("root.nothing", heard.record)
        #expect(heard.lines == ["root.nothing 0 false hidden"])
        withExtendedLifetime(token) {}
    }

    @Test func observingAnInvalidPathThrows() {
        let center = BadgeCenter()
        #expect(throws: BadgePathError.self) { _ = try center.observe("other.a") { _ in } }
        #expect(throws: BadgePathError.self) { _ = try center.observe("root..a") { _ in } }
        #expect(center.observationCount == 0)
    }

    @Test func anObserverHearsEveryChangeOfItsAggregateThroughDescendants() throws {
        let center = BadgeCenter(configuration: try .init(display: ["root.promotion": .custom("new")]))
        let heard = Recorder()
        let token = try center.observe("root.promotion", heard.record)
        try center.set("root.promotion.item1")
        try center.increment("root.promotion.item2", by: 3)
        try center.increment("root.promotion.item2.deep")
        try center.clear("root.promotion.item2", force: true)
        try center.clear("root.promotion.item1")
        #expect(
            heard.lines == [
                "root.promotion 0 false hidden",
                "root.promotion 0 true custom:new",
                "root.promotion 3 true 3",
                "root.promotion 1 true 1",
                "root.promotion 0 true custom:new",
                "root.promotion 0 false hidden",
            ])
        withExtendedLifetime(token) {}
    }

    @Test func anObserverHearsNothingWhenItsAggregateDoesNotChange() throws {
        let center = BadgeCenter()
        try center.set("root.chat.alice", count: 1)
        let heard = Recorder()
        let token = try center.observe("root.chat", heard.record)
        try center.set("root.chat.alice")  // keeps the count
        try center.set("root.chat.alice", count: 1)  // same count
        try center.set("root.chat")  // shadowed own mark
        try center.clear("root.chat")  // shadowed own mark again
        try center.set("root.chat.bob")  // a dot adds 0 and chat already shows
        try center.set("root.news", count: 5)  // a sibling
        try center.clear("root.nothing")
        #expect(heard.lines == ["root.chat 1 true 1"])
        withExtendedLifetime(token) {}
    }

    @Test func observersOfSeveralLevelsHearDeepestFirst() throws {
        let center = BadgeCenter()
        let heard = Recorder()
        let tokens = try ["root", "root.chat", "root.chat.alice"].map { try center.observe($0, heard.record) }
        try center.increment("root.chat.alice")
        #expect(heard.lines.dropFirst(3) == ["root.chat.alice 1 true 1", "root.chat 1 true 1", "root 1 true 1"])
        withExtendedLifetime(tokens) {}
    }

    // MARK: - Ending observations

    @Test func cancelStopsTheObservation() throws {
        let center = BadgeCenter()
        let heard = Recorder()
        let token = try center.observe("root.a", heard.record)
        try center.increment("root.a")
        token.cancel()
        #expect(center.observationCount == 0)
        try center.increment("root.a")
        #expect(heard.lines == ["root.a 0 false hidden", "root.a 1 true 1"])
        token.cancel()
    }

    @Test func releasingTheTokenStopsTheObservation() throws {
        let center = BadgeCenter()
        let heard = Recorder()
        do {
            let token = try center.observe("root.a", heard.record)
            #expect(center.observationCount == 1)
            withExtendedLifetime(token) {}
        }
        #expect(center.observationCount == 0)
        try center.increment("root.a")
        #expect(heard.lines == ["root.a 0 false hidden"])
    }

    @Test func aTokenOutlivingItsCenterIsHarmless() throws {
        var center: BadgeCenter? = BadgeCenter()
        let token = try center?.observe("root.a") { _ in }
        center = nil
        token?.cancel()
        #expect(token?.path == "root.a")
    }

    // MARK: - Owners

    @Test func observingTheSamePathTwiceWithTheSameOwnerIsOneObservation() throws {
        let center = BadgeCenter()
        let owner = Owner()
        let old = Recorder()
        let new = Recorder()
        let first = try center.observe("root.a", owner: owner, old.record)
        let second = try center.observe("root.a", owner: owner, new.record)
        #expect(center.observationCount == 1)
        try center.increment("root.a")
        #expect(old.lines == ["root.a 0 false hidden"])
        #expect(new.lines == ["root.a 0 false hidden", "root.a 1 true 1"])
        withExtendedLifetime((first, second)) {}
    }

    @Test func replacingTheTokenOfARepeatedObservationKeepsIt() throws {
        let center = BadgeCenter()
        let owner = Owner()
        let heard = Recorder()
        var token = try center.observe("root.a", owner: owner) { _ in }
        // The usual pattern: a view model re-observes and stores the new token over the old.
        token = try center.observe("root.a", owner: owner, heard.record)
        #expect(center.observationCount == 1)
        try center.increment("root.a")
        #expect(heard.lines == ["root.a 0 false hidden", "root.a 1 true 1"])
        withExtendedLifetime(token) {}
    }

    @Test func aRepeatedObservationEndsWhenAllItsTokensAreReleased() throws {
        let center = BadgeCenter()
        let owner = Owner()
        do {
            let first = try center.observe("root.a", owner: owner) { _ in }
            do {
                let second = try center.observe("root.a", owner: owner) { _ in }
                withExtendedLifetime(second) {}
            }
            #expect(center.observationCount == 1)
            withExtendedLifetime(first) {}
        }
        #expect(center.observationCount == 0)
    }

    @Test func cancellingEitherTokenOfARepeatedObservationEndsIt() throws {
        let center = BadgeCenter()
        let owner = Owner()
        let first = try center.observe("root.a", owner: owner) { _ in }
        let second = try center.observe("root.a", owner: owner) { _ in }
        first.cancel()
        #expect(center.observationCount == 0)
        withExtendedLifetime(second) {}
    }

    @Test func differentOwnersOrNoOwnerMakeSeparateObservations() throws {
        let center = BadgeCenter()
        let heard = Recorder()
        let (a, b) = (Owner(), Owner())
        let tokens = [
            try center.observe("root.a", heard.record),
            try center.observe("root.a", heard.record),
            try center.observe("root.a", owner: a, heard.record),
            try center.observe("root.a", owner: b, heard.record),
            try center.observe("root.b", owner: a, heard.record),
        ]
        #expect(center.observationCount == 5)
        try center.increment("root.a")
        #expect(heard.lines.filter { $0 == "root.a 1 true 1" }.count == 4)
        withExtendedLifetime((tokens, a, b)) {}
    }

    @Test func aHandlerReplacedDuringDeliveryIsNotCalledAgain() throws {
        let center = BadgeCenter()
        let owner = Owner()
        let old = Recorder()
        let new = Recorder()
        let replacement = Box<BadgeObservation?>(nil)
        let first = try center.observe("root.a", owner: owner, old.record)
        // Changes are delivered deepest first: root.a.b's handler runs before root.a's.
        let trigger = try center.observe("root.a.b") { [center] state in
            guard state.show else { return }
            replacement.set(try? center.observe("root.a", owner: owner, new.record))
        }
        try center.set("root.a.b")
        #expect(old.lines == ["root.a 0 false hidden"])
        #expect(new.lines == ["root.a 0 true dot"])
        #expect(center.observationCount == 2)
        withExtendedLifetime((first, trigger, owner, replacement)) {}
    }

    // MARK: - Re-entrancy

    // The limit catches a hang, not slowness: on a 2-core machine Swift Testing's cooperative
    // pool has 2 threads, and the end-to-end tests that wait on processes hold them for
    // minutes, so a test (and its limit's timer) may wait that long before it runs.
    @Test(.timeLimit(.minutes(30)))
    func aHandlerMayReadAndMutateTheCenterAndHearsTheResultAfterwards() throws {
        let center = BadgeCenter()
        let log = Recorder()
        let nested = Box<Outcome?>(nil)
        let rootToken = try center.observe("root") { state in log.note("root heard \(state.count)") }
        let token = try center.observe("root.a") { [center] state in
            guard state.count == 1 else { return }
            log.note("a heard 1; reads root \(center.state(of: "root").count)")
            nested.set(try? center.increment("root.b", by: 10))
            log.note("a reads root \(center.state(of: "root").count) after mutating")
            log.note("a sees \(center.tree.total) in a copy of the tree")
        }
        try center.increment("root.a")
        #expect(
            log.lines == [
                "root heard 0",
                "a heard 1; reads root 1",
                "a reads root 11 after mutating",
                "a sees 11 in a copy of the tree",
                "root heard 1",
                "root heard 11",
            ])
        #expect(nested.get()?.changes.map(\.path) == ["root.b", "root"])
        withExtendedLifetime((token, rootToken)) {}
    }

    // The limit catches a hang, not slowness: on a 2-core machine Swift Testing's cooperative
    // pool has 2 threads, and the end-to-end tests that wait on processes hold them for
    // minutes, so a test (and its limit's timer) may wait that long before it runs.
    @Test(.timeLimit(.minutes(30)))
    func aHandlerMayObserveAndCancel() throws {
        let center = BadgeCenter()
        let late = Recorder()
        let lateToken = Box<BadgeObservation?>(nil)
        let other = Recorder()
        let otherToken = Box<BadgeObservation?>(try center.observe("root.x", other.record))
        // root.x.y hears first (deepest first); it cancels root.x's observation, whose
        // notification is already queued, and starts a new one.
        let token = try center.observe("root.x.y") { [center] state in
            guard state.show else { return }
            otherToken.get()?.cancel()
            lateToken.set(try? center.observe("root", late.record))
        }
        try center.set("root.x.y")
        #expect(other.lines == ["root.x 0 false hidden"])
        #expect(late.lines == ["root 0 true dot"])
        withExtendedLifetime((token, lateToken)) {}
    }

    // MARK: - Threads

    // The limit catches a hang, not slowness: on a 2-core machine Swift Testing's cooperative
    // pool has 2 threads, and the end-to-end tests that wait on processes hold them for
    // minutes, so a test (and its limit's timer) may wait that long before it runs.
    @Test(.timeLimit(.minutes(30)))
    func concurrentMutationsEndWithConsistentTotals() throws {
        let center = BadgeCenter()
        let heard = Recorder()
        let workers = 8
        let rounds = 400
        let token = try center.observe("root", heard.record)
        let branchTokens = try (0..<workers).map { try center.observe("root.w\($0)") { _ in } }
        let dropped = Locked(0)
        let added = Locked(0)
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            var localAdded = 0
            var localDropped = 0
            for r in 0..<rounds {
                let leaf = "root.w\(w).n\(r % 5)"
                do {
                    switch r % 10 {
                    case 9: localDropped += try center.clear(leaf).decrement?.by ?? 0
                    case 7: localDropped += try center.increment(leaf, by: -1).decrement?.by ?? 0
                    default:
                        try center.increment(leaf, by: 2)
                        localAdded += 2
                    }
                    _ = center.state(of: "root.w\(w)")
                } catch {
                    Issue.record(error)
                }
            }
            added.withLock { $0 += localAdded }
            dropped.withLock { $0 += localDropped }
        }
        let tree = center.tree
        let total = added.withLock { $0 } - dropped.withLock { $0 }
        #expect(tree.total == total)
        #expect(
            tree.total
                == tree.marks.reduce(0) { sum, m in
                    if case .count(let n) = m.mark { return sum + n } else { return sum }
                })
        let branches = (0..<workers).map { tree.state(of: "root.w\($0)").count }
        #expect(branches.reduce(0, +) == tree.total)
        // Notifications arrive in the order of the changes, so the last one is the end state
        // and no two in a row are equal.
        let states = heard.states
        #expect(states.last == center.state(of: "root"))
        #expect(zip(states, states.dropFirst()).allSatisfy { $0.count != $1.count || $0.show != $1.show })
        withExtendedLifetime((token, branchTokens)) {}
    }

    // The limit catches a hang, not slowness: on a 2-core machine Swift Testing's cooperative
    // pool has 2 threads, and the end-to-end tests that wait on processes hold them for
    // minutes, so a test (and its limit's timer) may wait that long before it runs.
    @Test(.timeLimit(.minutes(30)))
    func concurrentTasksObservingAndMutatingEndConsistent() async throws {
        let center = BadgeCenter()
        let heard = Recorder()
        let token = try center.observe("root.shared", heard.record)
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<6 {
                group.addTask {
                    for i in 0..<200 {
                        _ = try? center.increment("root.shared.t\(t)")
                        if i % 50 == 0 {
                            let local = try? center.observe("root.shared.t\(t)") { _ in }
                            local?.cancel()
                        }
                    }
                }
            }
        }
        #expect(center.state(of: "root.shared").count == 1_200)
        #expect(heard.states.last?.count == 1_200)
        #expect(heard.states.map(\.count) == [0] + Array(1...1_200))
        #expect(center.observationCount == 1)
        withExtendedLifetime(token) {}
    }
}
