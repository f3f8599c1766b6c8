import Foundation
import Testing
@testable import BadgeTree

/// Contribution modes, expiry, once tokens and explain on the tree itself.
@Suite struct TreeFeatureTests {
    private static let muted = try! BadgeTree.Configuration(contribute: ["root.chat.muted": .none, "root.chat.quiet": .dot])

    @Test func aMutedChatShowsItsOwnNumberButNothingReachesItsParent() throws {
        var tree = BadgeTree(configuration: Self.muted)
        try tree.increment("root.chat.muted", by: 4)
        #expect(tree.state(of: "root.chat.muted").display == .number(4, max: 99))
        #expect(tree.state(of: "root.chat").show == false)
        #expect(tree.total == 0)
    }

    @Test func clearingAMutedChatAsksTheServerForNothing() throws {
        var tree = BadgeTree(configuration: Self.muted)
        try tree.increment("root.chat.alice")
        try tree.increment("root.chat.muted", by: 4)
        let outcome = try tree.clear("root.chat.muted")
        #expect(outcome.decrement == nil)
        #expect(outcome.changes.map(\.path) == ["root.chat.muted"])
        #expect(tree.total == 1)
    }

    @Test func aDotContributingNodeShowsItsParentWithoutCounting() throws {
        var tree = BadgeTree(configuration: Self.muted)
        try tree.set("root.chat.quiet", count: 5)
        #expect(tree.state(of: "root.chat").count == 0)
        #expect(tree.state(of: "root.chat").display == .dot)
        #expect(tree.state(of: "root").show)
        #expect(tree.total == 0)
        // Clearing a dot-contributing count of 5 gives no decrement.
        let outcome = try tree.clear("root.chat.quiet")
        #expect(outcome.decrement == nil)
        #expect(tree.state(of: "root").show == false)
    }

    @Test func aNoneChildDoesNotMakeItsParentASummaryNode() throws {
        var tree = BadgeTree(configuration: Self.muted)
        try tree.set("root.chat", count: 2)
        try tree.increment("root.chat.muted", by: 7)
        // The parent's own mark is not shadowed by a child that passes nothing up …
        #expect(tree.state(of: "root.chat").count == 2)
        #expect(tree.total == 2)
        // … and clearing that child does not auto-clear it.
        try tree.clear("root.chat.muted")
        #expect(tree.mark(of: "root.chat") == .count(2))
        // A dot child does shadow it: the parent becomes a summary node.
        try tree.set("root.chat.quiet", count: 3)
        #expect(tree.state(of: "root.chat").count == 0)
        #expect(tree.total == 0)
        let outcome = try tree.clear("root.chat.quiet")
        #expect(tree.mark(of: "root.chat") == nil)
        #expect(outcome.decrement == nil)
    }

    @Test func forcingAClearAboveAMutedNodeCountsOnlyWhatReached() throws {
        var tree = BadgeTree(configuration: Self.muted)
        try tree.increment("root.chat.muted.x", by: 3)
        try tree.increment("root.chat.alice", by: 2)
        let outcome = try tree.clear("root.chat", force: true)
        #expect(outcome.decrement == Decrement(by: 2, paths: ["root.chat.alice", "root.chat.muted.x"]))
        #expect(tree.total == 0)
        try tree.set("root.chat", count: 1)
        #expect(tree.total == 1)
    }

    @Test func twoMarksExpireAtOnceWithOneDecrement() throws {
        var tree = BadgeTree()
        try tree.increment("root.a", by: 2, expires: 100)
        try tree.increment("root.b", by: 3, expires: 90)
        try tree.increment("root.c", expires: 200)
        #expect(tree.expire(through: 50) == .none)
        let expiry = tree.expire(through: 150)
        #expect(expiry.paths == ["root.a", "root.b"])
        #expect(expiry.outcome.decrement == Decrement(by: 5, paths: ["root.a", "root.b"]))
        // Each changed node once, with its final state, deepest first.
        #expect(expiry.outcome.changes.map(\.path) == ["root.a", "root.b", "root"])
        #expect(tree.total == 1)
    }

    @Test func aMarkExpiresExactlyAtItsTime() throws {
        var tree = BadgeTree()
        try tree.set("root.promo", expires: 100)
        #expect(tree.expire(through: 99.999).paths.isEmpty)
        #expect(tree.expire(through: 100).paths == ["root.promo"])
        #expect(tree.mark(of: "root.promo") == nil)
    }

    @Test func settingAgainWithoutAnExpiryRemovesIt() throws {
        var tree = BadgeTree()
        try tree.increment("root.a", expires: 10)
        try tree.increment("root.a")
        #expect(tree.records.first?.expires == nil)
        #expect(tree.expire(through: 20) == .none)
        #expect(tree.total == 2)
        // A clear forgets the expiry too: a later mark without one stays.
        try tree.set("root.b", expires: 30)
        try tree.clear("root.b")
        try tree.set("root.b")
        #expect(tree.expire(through: 40).paths.isEmpty)
        #expect(!tree.hasPendingExpiries)
    }

    @Test func manyReExpiringMarksKeepTheHeapSmall() throws {
        var tree = BadgeTree()
        for t in 0..<10_000 { try tree.increment("root.a", expires: Double(t + 1_000)) }
        #expect(tree.expire(through: 10_998).paths.isEmpty)
        #expect(tree.expire(through: 10_999).paths == ["root.a"])
    }

    @Test func aDismissedOnceTokenStaysDismissedAndANewOneShows() throws {
        var tree = BadgeTree()
        try tree.set("root.me.new", once: "v3.2")
        try tree.clear("root.me.new")
        #expect(try tree.set("root.me.new", once: "v3.2") == .unchanged)
        #expect(try tree.increment("root.me.new", once: "v3.2") == .unchanged)
        #expect(tree.mark(of: "root.me.new") == nil)
        try tree.set("root.me.new", once: "v3.3")
        #expect(tree.mark(of: "root.me.new") == .dot)
        // Without a token a set always applies.
        try tree.clear("root.me.new")
        try tree.set("root.me.new")
        #expect(tree.mark(of: "root.me.new") == .dot)
        #expect(tree.dismissedTokens.first?.tokens == ["v3.2", "v3.3"])
    }

    @Test func onlyTheLastEightTokensOfAPathAreKept() throws {
        var tree = BadgeTree()
        for v in 0..<10 {
            try tree.set("root.x", once: "t\(v)")
            try tree.clear("root.x")
        }
        #expect(tree.dismissedTokens.first?.tokens == (2..<10).map { "t\($0)" })
        try tree.set("root.x", once: "t0")
        #expect(tree.mark(of: "root.x") == .dot)
    }

    @Test func explainListsTheMarksThatLightANodeDeepestFirst() throws {
        var tree = BadgeTree(configuration: Self.muted)
        try tree.increment("root.chat.alice", source: MarkSource(seq: 1, origin: "chat", at: 10))
        try tree.increment("root.chat.alice", by: 2, source: MarkSource(seq: 2, origin: "mention", at: 11))
        try tree.set("root.news", expires: 99, source: MarkSource(seq: 3, origin: "set", at: 12))
        try tree.increment("root.chat.muted", source: MarkSource(seq: 4, origin: "chat", at: 13))
        try tree.set("root.chat.quiet")
        let explained = tree.explain("root")
        #expect(
            explained == [
                MarkRecord(path: "root.chat.alice", mark: .count(3), source: MarkSource(seq: 2, origin: "mention", at: 11)),
                MarkRecord(path: "root.chat.quiet", mark: .dot),
                MarkRecord(path: "root.news", mark: .dot, source: MarkSource(seq: 3, origin: "set", at: 12), expires: 99),
            ])
        #expect(tree.explain("root.chat.muted").map(\.path) == ["root.chat.muted"])
        #expect(tree.explain("root.nothing").isEmpty)
    }

    @Test func theConfigurationCodesItsContributions() throws {
        #expect(Self.muted.contribute["root.chat.muted"] == Contribution.none)
        #expect(Contribution(rawValue: "dot") == .dot)
    }

    @Test func memoryPerNode() {
        // Provenance (origin index, seq, time) and expiry live in the node itself: 112 bytes
        // a node on 64-bit platforms, 24 more than before (88).
        #expect(MemoryLayout<BadgeTree.Node>.stride <= 112)
    }
}

@Suite struct BadgeCenterExpiryTests {
    @Test func observersHearAnExpiry() throws {
        let center = BadgeCenter()
        let heard = Heard()
        let token = try center.observe("root") { heard.append($0.show) }
        try center.set("root.promo", expires: 10)
        #expect(center.expire(through: 9).paths.isEmpty)
        #expect(center.expire(through: 10).paths == ["root.promo"])
        #expect(heard.values == [false, true, false])
        token.cancel()
    }
}

private final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Bool] = []
    func append(_ v: Bool) { lock.lock(); list.append(v); lock.unlock() }
    var values: [Bool] { lock.lock(); defer { lock.unlock() }; return list }
}

@Suite struct TreeFeatureCodableTests {
    @Test func theCodableFormKeepsSourcesExpiriesAndTokens() throws {
        var tree = BadgeTree(configuration: try .init(contribute: ["root.chat.muted": .dot]))
        try tree.increment("root.chat.muted", by: 2, source: MarkSource(seq: 7, origin: "chat", at: 1.5))
        try tree.set("root.promo", expires: 100, once: "p1")
        try tree.set("root.me.new", once: "v3.2")
        try tree.clear("root.me.new")
        let data = try JSONEncoder().encode(tree)
        var decoded = try JSONDecoder().decode(BadgeTree.self, from: data)
        #expect(decoded.configuration == tree.configuration)
        #expect(decoded.records == tree.records)
        #expect(decoded.dismissedTokens.map(\.tokens) == [["v3.2"]])
        #expect(try decoded.set("root.me.new", once: "v3.2") == .unchanged)
        #expect(decoded.expire(through: 100).paths == ["root.promo"])
        // A plain tree's form is as before: configuration and {path, mark} only.
        var plain = BadgeTree()
        try plain.increment("root.a")
        let text = String(decoding: try JSONEncoder().encode(plain), as: UTF8.self)
        #expect(!text.contains("seq") && !text.contains("dismissed") && !text.contains("contribute"))
    }
}
