import BadgeTree
import Testing

/// Collects what an observer hears, from any thread.
private final class Heard: Sendable {
    private let states = Locked<[BadgeState]>([])
    func append(_ s: BadgeState) { states.withLock { $0.append(s) } }
    var all: [BadgeState] { states.withLock { $0 } }
}

@Suite struct BadgeNodeTests {
    @Test func changesThroughANodeNeedNoTryAndReachObservers() throws {
        let center = BadgeCenter(configuration: try .init(root: "app"))
        let chats = try center.root.child("chat")
        let bob = try chats.child("bob@mail.com")
        #expect(center.root.path.rawValue == "app")
        #expect(bob.path.rawValue == "app.chat.bob@mail%2Ecom")
        #expect(bob.parent == chats)
        #expect(center.root.parent == nil)
        let heard = Heard()
        let token = try center.observe("app.chat") { heard.append($0) }
        // None of these is marked `try`: a node's changes cannot fail.
        bob.increment(by: 3)
        #expect(bob.state.count == 3)
        #expect(center.total == 3)
        bob.set(count: 5)
        #expect(chats.state.badgeValue == "5")
        let cleared = bob.clear()
        #expect(cleared.decrement == Decrement(by: 5, paths: ["app.chat.bob@mail%2Ecom"]))
        #expect(heard.all.map(\.count) == [0, 3, 5, 0])
        try chats.child("carol").set()
        #expect(chats.state.badgeValue == "")
        chats.clear(force: true)
        #expect(!center.root.state.show)
        withExtendedLifetime(token) {}
    }

    @Test func expiringSetsAndMutingThroughANode() throws {
        let center = BadgeCenter()
        let promo = try center.root.child("promo")
        promo.set(expires: 10, once: "spring")
        #expect(center.expire(through: 10).paths == ["root.promo"])
        #expect(promo.set(expires: nil, once: "spring").changes.isEmpty)  // dismissed
        let family = try center.node("root.chat.family")
        family.set(count: 4, expires: 20)
        #expect(center.total == 4)
        let muted = family.setContribution(.none)
        #expect(muted.decrement == nil)  // a setting, not a read
        #expect(center.total == 0)
        #expect(family.state.count == 4)
    }

    @Test func aPathThatCannotBeValidIsRefusedWhereTheNodeIsMade() throws {
        let center = BadgeCenter(configuration: try .init(root: "app"))
        #expect(throws: BadgePathError.self) { try center.node("root.chat") }  // another root
        #expect(throws: BadgePathError.self) { try center.node("app..chat") }  // a typo
        #expect(throws: BadgePathError.self) { try center.node("application.chat") }
        #expect(throws: BadgePathError.self) { try center.node(BadgePath.root.child("chat")) }
        #expect(try center.node(BadgePath("app.chat")).path.rawValue == "app.chat")
        // Past the limits: a 16th segment is fine, a 17th is not; nor is an id too long.
        var deep = center.root
        for i in 1..<BadgePath.maxSegments { deep = try deep.child("s\(i)") }
        #expect(deep.path.segments.count == BadgePath.maxSegments)
        #expect(throws: BadgePathError.self) { try deep.child("one-too-many") }
        let long = String(repeating: "x", count: BadgePath.maxBytes)
        #expect(throws: BadgePathError.self) { try center.root.child(long) }
        // Nothing was made by the refused paths.
        #expect(center.tree.nodeCount == 1)
    }

    @Test func nodesOfTwoCentersAreNotEqual() throws {
        let a = BadgeCenter(), b = BadgeCenter()
        #expect(try a.root.child("chat") != (try b.root.child("chat")))
        #expect(try a.root.child("chat") == (try a.node("root.chat")))
        #expect(Set([try a.root.child("chat"), try a.node("root.chat")]).count == 1)
    }
}
