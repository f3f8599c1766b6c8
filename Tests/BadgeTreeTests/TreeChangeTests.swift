import Testing
@testable import BadgeTree

/// `BadgeTree.Change`, the form in which the filter takes an operation's changes (the nodes,
/// not their states): made into states, it is the outcome the public operations return, and
/// `forEachState(of:_:)` reads the same states in the same order.
@Suite struct TreeChangeTests {
    /// The states `forEachState(of:_:)` reads, as `BadgeState`s.
    private func states(of change: BadgeTree.Change, in tree: BadgeTree) -> [BadgeState] {
        var out: [BadgeState] = []
        tree.forEachState(of: change) { path, count, show, display in
            out.append(BadgeState(path: copy path, count: count, show: show, display: display))
        }
        return out
    }

    @Test func aChangeIsTheOutcomeOfTheSameOperation() throws {
        let config = try BadgeTree.Configuration(maxDisplay: 9, display: ["root.promo": .dot])
        var viaOutcome = BadgeTree(configuration: config)
        var viaChange = BadgeTree(configuration: config)
        // Deterministic: a fixed walk over a few paths, counts that rise, fall, cap and clear.
        let paths = ["root.chat.a", "root.chat.b", "root.chat", "root.promo.x", "root.promo", "root.a.b.c.d"]
        var x: UInt64 = 42
        for step in 0..<2000 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let path = paths[Int((x >> 33) % UInt64(paths.count))]
            let k = Int((x >> 20) % 13) - 4
            let outcome: Outcome
            let change: BadgeTree.Change
            switch (x >> 40) % 4 {
            case 0:
                outcome = try viaOutcome.increment(path, by: k)
                change = try viaChange.incrementChange(path, by: k, expires: nil, once: nil, source: nil)
            case 1:
                outcome = try viaOutcome.set(path, count: k)
                change = try viaChange.setChange(path, count: k, expires: nil, once: nil, source: nil)
            case 2:
                outcome = try viaOutcome.set(path)
                change = try viaChange.setChange(path, expires: nil, once: nil, source: nil)
            default:
                outcome = try viaOutcome.clear(path)
                change = try viaChange.clearChange(path)
            }
            #expect(viaChange.outcome(of: change) == outcome, "step \(step): \(path) \(k)")
            #expect(states(of: change, in: viaChange) == outcome.changes, "step \(step)")
            #expect(change.isEmpty == outcome.changes.isEmpty, "step \(step)")
            #expect(viaChange.total == viaOutcome.total)
        }
    }

    @Test func anEmptyChangeHasNoStates() {
        let tree = BadgeTree()
        #expect(states(of: BadgeTree.Change(), in: tree).isEmpty)
        #expect(tree.outcome(of: BadgeTree.Change()) == .unchanged)
    }
}
