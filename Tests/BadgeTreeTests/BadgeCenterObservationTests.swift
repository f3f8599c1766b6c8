import Foundation
import Testing
@testable import BadgeTree

/// A screen that observes and goes away.
private final class Screen {}

/// Collects values across isolation domains.
private final class Collected<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    func append(_ t: T) { lock.lock(); items.append(t); lock.unlock() }
    var all: [T] { lock.lock(); defer { lock.unlock() }; return items }
}

@Suite struct BadgeCenterObservationTests {
    @Test func anAsyncSequenceStartsWithTheCurrentStateThenChangesOnly() async throws {
        let center = BadgeCenter()
        try center.increment("root.chat.alice", by: 2)
        let states = try center.states(of: "root.chat")
        var it = states.makeAsyncIterator()
        let first = await it.next()
        #expect(first?.count == 2)
        try center.set("root.news")  // not under root.chat: no element
        try center.increment("root.chat.bob")  // 3
        try center.clear("root.chat.alice")  // 1
        #expect(await it.next()?.count == 3)
        #expect(await it.next()?.count == 1)
        #expect(center.observationCount == 1)
    }

    @Test func anAsyncSequenceEndsWhenItsTaskIsCancelled() async throws {
        let center = BadgeCenter()
        let seen = Collected<Int>()
        let task = Task {
            for await state in try center.states(of: "root") { seen.append(state.count) }
            return "ended"
        }
        while seen.all.isEmpty { await Task.yield() }
        #expect(center.observationCount == 1)
        task.cancel()
        #expect(try await task.value == "ended")
        // The observation ended with the sequence.
        for _ in 0..<1000 where center.observationCount != 0 { await Task.yield() }
        #expect(center.observationCount == 0)
        try center.increment("root.a")
        #expect(seen.all == [0])
    }

    @Test @MainActor func mainActorObserversHearEveryChangeInOrderOnTheMainThread() async throws {
        let center = BadgeCenter()
        // `counts` is main-actor state mutated without a lock: under ThreadSanitizer
        // (`make check`) a delivery off the main actor is a reported race.
        var counts: [Int] = []
        let token = try center.observeOnMainActor("root.chat") { state in
            MainActor.assertIsolated()
            counts.append(state.count)
        }
        // The current state is delivered before the call returns.
        #expect(counts == [0])
        // Changes made on other threads, several at once.
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<4 {
                group.addTask {
                    for _ in 0..<50 { _ = try? center.increment("root.chat.t\(t)") }
                }
            }
        }
        for _ in 0..<10_000 where counts.count < 201 { await Task.yield() }
        #expect(counts == Array(0...200))
        withExtendedLifetime(token) {}
    }

    @Test @MainActor func aCancelledMainActorObservationHearsNothingMore() async throws {
        let center = BadgeCenter()
        var counts: [Int] = []
        let token = try center.observeOnMainActor("root") { counts.append($0.count) }
        // Queued, then cancelled before the main actor gets to run the delivery.
        for _ in 0..<10 { try center.increment("root.x") }
        token.cancel()
        for _ in 0..<100 { await Task.yield() }
        #expect(counts == [0])
    }

    @Test func ownersAreObjectsNotAddresses() throws {
        let center = BadgeCenter()
        var tokens: [BadgeObservation] = []
        for _ in 0..<50 {
            // Each screen lives only for this iteration: its address is free for the next one.
            // The new screen is a new owner, and the old one's observation ended with it.
            let screen = Screen()
            tokens.append(try center.observe("root.chat", owner: screen) { _ in })
            #expect(center.observationCount == 1)
            #expect(tokens.count < 2 || !tokens[tokens.count - 2].isLive)
        }
        // The same living owner twice is still one observation.
        let screen = Screen()
        let a = try center.observe("root.chat", owner: screen) { _ in }
        let b = try center.observe("root.chat", owner: screen) { _ in }
        #expect(center.observationCount == 1)
        #expect(a.isLive && b.isLive)
        withExtendedLifetime((a, b, tokens)) {}
    }

    @Test func aCenterWithMarksAndSyncStateRoundTripsThroughAFile() throws {
        let center = BadgeCenter(
            configuration: try .init(root: "app", maxDisplay: 9, display: ["app.promo": .custom("new")]),
            sync: .init(pages: ["home"], interval: 30, away: 10))
        try center.increment("app.chat.alice", by: 12)
        try center.set("app.promo.sale")
        try center.set("app.news", count: 3)
        center.handle(.login, at: 100)
        #expect(center.handle(.appear("home"), at: 101) == .firstAppearance)
        center.handle(.disappear("home"), at: 105)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("center-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try center.save(to: path)
        let restored = try BadgeCenter(contentsOf: path)
        #expect(restored.archive == center.archive)
        #expect(restored.state(of: "app").count == 15)
        #expect(restored.state(of: "app.promo").display == .custom("new"))
        #expect(restored.state(of: "app.chat").display == .number(12, max: 9))
        // The sync state came back too: home was away 20 s > 10 s, so its return syncs.
        #expect(restored.handle(.appear("home"), at: 125) == .returned)
    }

    @Test(arguments: [
        "{",
        #"{"version":1,"tree":{"configuration":{"root":"root","maxDisplay":99},"marks":[{"path":"root.a","mark":0}]},"sync":{}}"#,
        #"{"version":1,"tree":{"configuration":{"root":"root","maxDisplay":99},"marks":[{"path":"other.a","mark":"dot"}]}}"#,
        #"{"version":3,"tree":{"configuration":{"root":"root","maxDisplay":99},"marks":[]},"sync":{"configuration":{"pages":[],"interval":1,"away":1},"loggedIn":false,"foreground":true,"visible":[],"appearedSinceLogin":[],"disappearedAt":{},"intervalStart":0}}"#,
        "#badgetree-shared 2 0123\n",
        "#badgetree-shared 2 0123\n{\"version\":2}\n",
    ])
    func aCorruptFileIsAnErrorNeverAnEmptyTree(_ text: String) throws {
        // (A 0-byte file is an empty one: SharedFileFormat.)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: BadgeCenter.PersistenceError.self) { _ = try BadgeCenter(contentsOf: path) }
    }
}
