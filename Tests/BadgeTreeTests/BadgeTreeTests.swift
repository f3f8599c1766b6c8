import Testing
@testable import BadgeTree

/// The states in `outcome.changes` as `path count show display` lines.
private func lines(_ states: [BadgeState]) -> [String] {
    states.map { "\($0.path) \($0.count) \($0.show) \($0.display)" }
}

private func line(_ tree: BadgeTree, _ path: String) -> String {
    let s = tree.state(of: path)
    return "\(s.path) \(s.count) \(s.show) \(s.display)"
}

@Suite struct BadgeTreeTests {
    // MARK: - set(p)

    @Test func setPutsADotThatShowsUpToTheRoot() throws {
        var tree = BadgeTree()
        let outcome = try tree.set("root.news.today")
        #expect(tree.mark(of: "root.news.today") == .dot)
        #expect(
            lines(outcome.changes) == [
                "root.news.today 0 true dot",
                "root.news 0 true dot",
                "root 0 true dot",
            ])
        #expect(outcome.decrement == nil)
        #expect(tree.total == 0)
    }

    @Test func setKeepsAnExistingCount() throws {
        var tree = BadgeTree()
        try tree.set("root.chat.alice", count: 3)
        let outcome = try tree.set("root.chat.alice")
        #expect(outcome == .unchanged)
        #expect(tree.mark(of: "root.chat.alice") == .count(3))
        #expect(tree.total == 3)
    }

    @Test func setOnADotChangesNothing() throws {
        var tree = BadgeTree()
        try tree.set("root.a")
        #expect(try tree.set("root.a") == .unchanged)
        #expect(tree.mark(of: "root.a") == .dot)
    }

    @Test func theRootItselfCanCarryAMark() throws {
        var tree = BadgeTree()
        try tree.set("root", count: 2)
        #expect(tree.mark(of: "root") == .count(2))
        #expect(line(tree, "root") == "root 2 true 2")
    }

    // MARK: - set(p, count:)

    @Test func setCountMakesTheOwnMarkACount() throws {
        var tree = BadgeTree()
        try tree.set("root.inbox")
        let outcome = try tree.set("root.inbox", count: 4)
        #expect(tree.mark(of: "root.inbox") == .count(4))
        #expect(lines(outcome.changes) == ["root.inbox 4 true 4", "root 4 true 4"])
        #expect(outcome.decrement == nil)
    }

    @Test func setCountToTheSameValueChangesNothing() throws {
        var tree = BadgeTree()
        try tree.set("root.inbox", count: 4)
        #expect(try tree.set("root.inbox", count: 4) == .unchanged)
    }

    @Test func loweringACountAsksForADecrement() throws {
        var tree = BadgeTree()
        try tree.set("root.inbox", count: 7)
        let outcome = try tree.set("root.inbox", count: 2)
        #expect(outcome.decrement == Decrement(by: 5, paths: ["root.inbox"]))
        #expect(tree.total == 2)
    }

    @Test func setCountZeroIsClear() throws {
        var viaSet = BadgeTree()
        var viaClear = BadgeTree()
        for path in ["root.p", "root.p.item1"] {
            try viaSet.set(path, count: 3)
            try viaClear.set(path, count: 3)
        }
        let a = try viaSet.set("root.p.item1", count: 0)
        let b = try viaClear.clear("root.p.item1")
        #expect(a == b)
        #expect(a.decrement == Decrement(by: 3, paths: ["root.p", "root.p.item1"]))
        #expect(viaSet.marks.isEmpty)
        #expect(viaSet.snapshot() == viaClear.snapshot())
    }

    // MARK: - increment

    @Test func incrementCreatesACountOfK() throws {
        var tree = BadgeTree()
        let outcome = try tree.increment("root.chat.alice")
        #expect(tree.mark(of: "root.chat.alice") == .count(1))
        #expect(lines(outcome.changes) == ["root.chat.alice 1 true 1", "root.chat 1 true 1", "root 1 true 1"])
        try tree.increment("root.chat.alice", by: 4)
        #expect(tree.mark(of: "root.chat.alice") == .count(5))
        #expect(tree.total == 5)
    }

    @Test func incrementOnADotCountsFromZero() throws {
        var tree = BadgeTree()
        try tree.set("root.chat.alice")
        try tree.increment("root.chat.alice", by: 2)
        #expect(tree.mark(of: "root.chat.alice") == .count(2))
    }

    @Test func aNegativeIncrementLowersTheCountAndAsksForADecrement() throws {
        var tree = BadgeTree()
        try tree.set("root.chat.alice", count: 5)
        let outcome = try tree.increment("root.chat.alice", by: -2)
        #expect(tree.mark(of: "root.chat.alice") == .count(3))
        #expect(outcome.decrement == Decrement(by: 2, paths: ["root.chat.alice"]))
    }

    @Test func anIncrementReachingZeroClears() throws {
        var tree = BadgeTree()
        try tree.set("root.chat.alice", count: 2)
        let outcome = try tree.increment("root.chat.alice", by: -5)
        #expect(tree.mark(of: "root.chat.alice") == nil)
        #expect(outcome.decrement == Decrement(by: 2, paths: ["root.chat.alice"]))
        #expect(line(tree, "root") == "root 0 false hidden")
    }

    @Test func aNegativeIncrementOnNoMarkChangesNothing() throws {
        var tree = BadgeTree()
        #expect(try tree.increment("root.a", by: -1) == .unchanged)
        #expect(tree.marks.isEmpty)
    }

    // MARK: - clear

    @Test func clearRemovesTheOwnMark() throws {
        var tree = BadgeTree()
        try tree.increment("root.chat.alice")
        let outcome = try tree.clear("root.chat.alice")
        #expect(tree.mark(of: "root.chat.alice") == nil)
        #expect(
            lines(outcome.changes) == [
                "root.chat.alice 0 false hidden",
                "root.chat 0 false hidden",
                "root 0 false hidden",
            ])
        #expect(outcome.decrement == Decrement(by: 1, paths: ["root.chat.alice"]))
    }

    @Test func clearKeepsMarksBelowSoASummaryNodeKeepsShowing() throws {
        var tree = BadgeTree()
        try tree.set("root.chat")
        try tree.set("root.chat.alice", count: 2)
        let outcome = try tree.clear("root.chat")
        #expect(tree.mark(of: "root.chat") == nil)
        #expect(tree.mark(of: "root.chat.alice") == .count(2))
        #expect(line(tree, "root.chat") == "root.chat 2 true 2")
        #expect(outcome.changes.isEmpty)
        #expect(outcome.decrement == nil)
    }

    @Test func clearingAPathWithoutMarkOrNodeChangesNothing() throws {
        var tree = BadgeTree()
        try tree.set("root.a.b")
        #expect(try tree.clear("root.a") == .unchanged)
        #expect(try tree.clear("root.zzz.never") == .unchanged)
        #expect(try tree.clear("root.zzz.never", force: true) == .unchanged)
        #expect(tree.mark(of: "root.a.b") == .dot)
    }

    @Test func clearingADotRemovesItWithoutADecrement() throws {
        var tree = BadgeTree()
        try tree.set("root.news")
        let outcome = try tree.clear("root.news")
        #expect(outcome.decrement == nil)
        #expect(lines(outcome.changes) == ["root.news 0 false hidden", "root 0 false hidden"])
    }

    /// The seed's walkthrough: a promotion tab with its own dot and two promoted items.
    @Test func aParentClearsItsShadowedMarkOnceAllItsChildrenAreCleared() throws {
        var tree = BadgeTree()
        try tree.set("root.promotion")
        try tree.set("root.promotion.item1")
        try tree.set("root.promotion.item2")
        #expect(tree.mark(of: "root.promotion") == .dot)

        let first = try tree.clear("root.promotion.item1")
        #expect(tree.mark(of: "root.promotion") == .dot, "item2 still marked: the tab keeps its own mark")
        #expect(line(tree, "root.promotion") == "root.promotion 0 true dot")
        #expect(lines(first.changes) == ["root.promotion.item1 0 false hidden"])

        let second = try tree.clear("root.promotion.item2")
        #expect(tree.mark(of: "root.promotion") == nil)
        #expect(tree.marks.isEmpty)
        #expect(
            lines(second.changes) == [
                "root.promotion.item2 0 false hidden",
                "root.promotion 0 false hidden",
                "root 0 false hidden",
            ])
    }

    @Test func autoClearedShadowedCountsAreListedInTheDecrement() throws {
        var tree = BadgeTree()
        try tree.set("root.promotion", count: 5)
        try tree.set("root.promotion.item1", count: 1)
        try tree.set("root.promotion.item2", count: 2)
        #expect(tree.total == 3, "the shadowed 5 is not counted")
        #expect(try tree.clear("root.promotion.item1").decrement == Decrement(by: 1, paths: ["root.promotion.item1"]))
        #expect(
            try tree.clear("root.promotion.item2").decrement
                == Decrement(by: 2, paths: ["root.promotion", "root.promotion.item2"]))
        #expect(tree.total == 0)
    }

    @Test func autoClearWalksUpSeveralLevels() throws {
        var tree = BadgeTree()
        try tree.set("root.a")
        try tree.set("root.a.b")
        try tree.set("root.a.b.c", count: 1)
        let outcome = try tree.clear("root.a.b.c")
        #expect(tree.marks.isEmpty)
        #expect(outcome.decrement == Decrement(by: 1, paths: ["root.a", "root.a.b", "root.a.b.c"]))
    }

    @Test func autoClearStopsAtAnAncestorWithAnotherMarkedDescendant() throws {
        var tree = BadgeTree()
        try tree.set("root.a")
        try tree.set("root.a.x")
        try tree.set("root.a.y")
        try tree.set("root.a.y.z", count: 1)
        try tree.clear("root.a.y.z")
        #expect(tree.mark(of: "root.a.y") == nil)
        #expect(tree.mark(of: "root.a") == .dot)
        #expect(tree.mark(of: "root.a.x") == .dot)
    }

    @Test func clearingASummaryNodesOwnMarkLeavesItsAncestorsAlone() throws {
        var tree = BadgeTree()
        try tree.set("root.a")
        try tree.set("root.a.b")
        try tree.set("root.a.b.c")
        try tree.clear("root.a.b")
        #expect(tree.mark(of: "root.a") == .dot)
        #expect(tree.mark(of: "root.a.b.c") == .dot)
    }

    @Test func aMarkedNodeWithoutMarkedDescendantsIsNotAutoCleared() throws {
        var tree = BadgeTree()
        try tree.set("root.a", count: 2)
        try tree.set("root.b")
        try tree.clear("root.b")
        #expect(tree.mark(of: "root.a") == .count(2))
    }

    // MARK: - clear(p, force: true)

    @Test func forceClearRemovesTheWholeSubtree() throws {
        var tree = BadgeTree()
        try tree.set("root.chat")
        try tree.set("root.chat.alice", count: 2)
        try tree.set("root.chat.bob", count: 3)
        try tree.set("root.chat.bob.thread")
        try tree.set("root.news", count: 1)
        let outcome = try tree.clear("root.chat", force: true)
        #expect(tree.marks.map(\.path) == ["root.news"])
        // bob's 3 is shadowed by the dot below it: the chats counted 2.
        #expect(outcome.decrement == Decrement(by: 2, paths: ["root.chat", "root.chat.alice", "root.chat.bob", "root.chat.bob.thread"]))
        #expect(
            lines(outcome.changes) == [
                "root.chat.bob.thread 0 false hidden",
                "root.chat.alice 0 false hidden",
                "root.chat.bob 0 false hidden",
                "root.chat 0 false hidden",
                "root 1 true 1",
            ])
    }

    @Test func forceClearAlsoAutoClearsAncestors() throws {
        var tree = BadgeTree()
        try tree.set("root.a", count: 9)
        try tree.set("root.a.b.c", count: 1)
        let outcome = try tree.clear("root.a.b", force: true)
        #expect(tree.marks.isEmpty)
        #expect(outcome.decrement == Decrement(by: 1, paths: ["root.a", "root.a.b.c"]))
    }

    @Test func forceClearOfTheRootEmptiesTheTree() throws {
        var tree = BadgeTree()
        for path in ["root", "root.a", "root.a.b", "root.c"] { try tree.increment(path) }
        try tree.clear("root", force: true)
        #expect(tree.marks.isEmpty)
        #expect(tree.snapshot().isEmpty)
        #expect(tree.total == 0)
    }

    // MARK: - Summary nodes

    @Test func aSummaryNodeCountsTheSumOfItsChildren() throws {
        var tree = BadgeTree()
        try tree.set("root.chat.alice", count: 2)
        try tree.set("root.chat.bob", count: 3)
        try tree.set("root.chat.carol")
        try tree.set("root.news.x.y", count: 4)
        #expect(line(tree, "root.chat") == "root.chat 5 true 5")
        #expect(line(tree, "root.news") == "root.news 4 true 4")
        #expect(tree.total == 9)
    }

    @Test func aSummaryNodeShowsWhenAnyChildShows() throws {
        var tree = BadgeTree()
        try tree.set("root.chat.alice")
        try tree.set("root.chat.bob")
        #expect(line(tree, "root.chat") == "root.chat 0 true dot")
        try tree.clear("root.chat.alice")
        #expect(line(tree, "root.chat") == "root.chat 0 true dot")
        try tree.clear("root.chat.bob")
        #expect(line(tree, "root.chat") == "root.chat 0 false hidden")
    }

    @Test func aSummaryNodesOwnMarkIsShadowed() throws {
        var tree = BadgeTree()
        try tree.set("root.promotion", count: 7)
        #expect(tree.total == 7)
        try tree.set("root.promotion.item1")
        #expect(tree.mark(of: "root.promotion") == .count(7), "kept")
        #expect(line(tree, "root.promotion") == "root.promotion 0 true dot", "neither shown nor counted")
        #expect(tree.total == 0)
        try tree.set("root.promotion.item2", count: 2)
        #expect(line(tree, "root.promotion") == "root.promotion 2 true 2")
    }

    // MARK: - Changes

    @Test func changesListOnlyNodesWhoseCountOrShowChanged() throws {
        var tree = BadgeTree()
        try tree.set("root.a")
        let outcome = try tree.set("root.a.b")
        // root.a was (0, shown) as a dot and is (0, shown) as a summary: unchanged.
        #expect(lines(outcome.changes) == ["root.a.b 0 true dot"])

        try tree.set("root.x", count: 1)
        let bump = try tree.increment("root.x")
        #expect(lines(bump.changes) == ["root.x 2 true 2", "root 2 true 2"])
    }

    @Test func changesAreDeepestFirst() throws {
        var tree = BadgeTree()
        let outcome = try tree.increment("root.a.b.c.d.e")
        #expect(outcome.changes.map(\.path) == ["root.a.b.c.d.e", "root.a.b.c.d", "root.a.b.c", "root.a.b", "root.a", "root"])
    }

    @Test func changesCarryTheNewState() throws {
        var tree = BadgeTree()
        try tree.set("root.a", count: 3)
        let outcome = try tree.set("root.a", count: 120)
        #expect(outcome.changes == [tree.state(of: "root.a"), tree.state(of: "root")])
        #expect(outcome.changes.first?.display.description == "99+")
    }

    // MARK: - Decrement

    @Test func noDecrementWhenTheTotalRises() throws {
        var tree = BadgeTree()
        #expect(try tree.set("root.a", count: 3).decrement == nil)
        #expect(try tree.increment("root.a", by: 2).decrement == nil)
        #expect(try tree.set("root.b").decrement == nil)
    }

    @Test func noDecrementWhenTheTotalStays() throws {
        var tree = BadgeTree()
        try tree.set("root.a", count: 3)
        try tree.set("root.b")
        #expect(try tree.clear("root.b").decrement == nil)
        #expect(try tree.increment("root.a", by: 0).decrement == nil)
    }

    @Test func decrementListsEveryRemovedMarkInByteOrder() throws {
        var tree = BadgeTree()
        try tree.set("root.chat.zed", count: 1)
        try tree.set("root.chat.Alice", count: 2)
        try tree.set("root.chat.bob")
        let outcome = try tree.clear("root.chat", force: true)
        #expect(outcome.decrement == Decrement(by: 3, paths: ["root.chat.Alice", "root.chat.bob", "root.chat.zed"]))
    }

    /// Marking below a counted node shadows its count, so the total drops although no mark
    /// was removed. A decrement is due whenever the total drops (TreeSemantics.md).
    @Test func shadowingACountedNodeAsksForADecrementOfTheDrop() throws {
        var tree = BadgeTree()
        try tree.set("root.inbox", count: 4)
        let outcome = try tree.set("root.inbox.thread")
        #expect(tree.total == 0)
        #expect(outcome.decrement?.by == 4)
    }

    // MARK: - Display

    @Test func displayPrefersNumberThenCustomThenDotThenHidden() {
        let custom = DisplayMode.custom("new")
        #expect(BadgeDisplay(count: 3, show: true, mode: custom, maxDisplay: 99) == .number(3, max: 99))
        #expect(BadgeDisplay(count: 0, show: true, mode: custom, maxDisplay: 99) == .custom("new"))
        #expect(BadgeDisplay(count: 0, show: false, mode: custom, maxDisplay: 99) == .hidden)
        #expect(BadgeDisplay(count: 3, show: true, mode: .number, maxDisplay: 99) == .number(3, max: 99))
        #expect(BadgeDisplay(count: 0, show: true, mode: .number, maxDisplay: 99) == .dot)
        #expect(BadgeDisplay(count: 0, show: false, mode: .number, maxDisplay: 99) == .hidden)
        #expect(BadgeDisplay(count: 3, show: true, mode: .dot, maxDisplay: 99) == .dot)
        #expect(BadgeDisplay(count: 0, show: false, mode: .dot, maxDisplay: 99) == .hidden)
    }

    @Test func displayTextsAreTheResultLineStrings() {
        #expect(BadgeDisplay.number(3, max: 99).description == "3")
        #expect(BadgeDisplay.custom("new").description == "custom:new")
        #expect(BadgeDisplay.dot.description == "dot")
        #expect(BadgeDisplay.hidden.description == "hidden")
    }

    @Test func numbersAboveMaxDisplayAreCapped() throws {
        var tree = BadgeTree()
        try tree.set("root.a", count: 99)
        #expect(tree.state(of: "root.a").display.description == "99")
        try tree.increment("root.a")
        #expect(tree.state(of: "root.a").display.description == "99+")
        #expect(tree.state(of: "root.a").count == 100, "only the text is capped")
    }

    @Test func maxDisplayComesFromTheConfiguration() throws {
        var tree = BadgeTree(configuration: try .init(maxDisplay: 9))
        try tree.set("root.a", count: 9)
        #expect(tree.state(of: "root").display.description == "9")
        try tree.set("root.b", count: 1)
        #expect(tree.state(of: "root").display.description == "9+")
        #expect(tree.state(of: "root.a").display.description == "9")
    }

    @Test func aDotModeTabShowsADotWhileItsChildrenShowNumbers() throws {
        var tree = BadgeTree(configuration: try .init(display: ["root.chat": .dot]))
        try tree.set("root.chat.alice", count: 3)
        try tree.set("root.chat.bob", count: 1)
        #expect(line(tree, "root.chat") == "root.chat 4 true dot")
        #expect(line(tree, "root.chat.alice") == "root.chat.alice 3 true 3")
        #expect(line(tree, "root") == "root 4 true 4", "the count still sums upwards")
        try tree.clear("root.chat", force: true)
        #expect(line(tree, "root.chat") == "root.chat 0 false hidden")
    }

    @Test func aCustomModeNodeShowsItsBadgeInsteadOfTheDot() throws {
        var tree = BadgeTree(configuration: try .init(display: ["root.promotion": .custom("new")]))
        #expect(tree.state(of: "root.promotion").display == .hidden)
        let outcome = try tree.set("root.promotion.item1")
        #expect(
            lines(outcome.changes) == [
                "root.promotion.item1 0 true dot",
                "root.promotion 0 true custom:new",
                "root 0 true dot",
            ])
        try tree.set("root.promotion.item1", count: 2)
        #expect(line(tree, "root.promotion") == "root.promotion 2 true 2", "a number wins over the custom badge")
    }

    @Test func theRootCanHaveADisplayMode() throws {
        var tree = BadgeTree(configuration: try .init(display: ["root": .dot]))
        try tree.set("root.a", count: 2)
        #expect(line(tree, "root") == "root 2 true dot")
    }

    // MARK: - Paths

    @Test(arguments: ["other.a", "rootx.a", "Root.a", "roo", "a.root", "", "root..a", "root.a.", "root.\n"])
    func rejectsPathsOutsideTheRootOrInvalid(_ path: String) {
        var tree = BadgeTree()
        #expect(throws: BadgePathError.self) { try tree.set(path) }
        #expect(throws: BadgePathError.self) { try tree.set(path, count: 2) }
        #expect(throws: BadgePathError.self) { try tree.set(path, count: 0) }
        #expect(throws: BadgePathError.self) { try tree.increment(path) }
        #expect(throws: BadgePathError.self) { try tree.clear(path) }
        #expect(throws: BadgePathError.self) { try tree.clear(path, force: true) }
        #expect(tree.nodeCount == 1)
    }

    @Test func theRootNameComesFromTheConfiguration() throws {
        var tree = BadgeTree(configuration: try .init(root: "app"))
        try tree.set("app.inbox", count: 1)
        #expect(tree.total == 1)
        #expect(throws: BadgePathError.self) { try tree.set("root.inbox") }
    }

    @Test func aPathUnderTheRootThatNeverExistedIsHidden() {
        let tree = BadgeTree()
        #expect(line(tree, "root.nothing.here") == "root.nothing.here 0 false hidden")
        #expect(tree.mark(of: "root.nothing.here") == nil)
    }

    // MARK: - Snapshot, marks

    @Test func snapshotListsShownNodesParentsFirstSiblingsInByteOrder() throws {
        var tree = BadgeTree()
        for path in ["root.b.y", "root.é", "root.a b", "root.a.z", "root.B", "root.b.x", "root.a"] {
            try tree.set(path)
        }
        try tree.set("root.hidden.child")
        try tree.clear("root.hidden.child")
        #expect(
            tree.snapshot().map(\.path) == [
                "root", "root.B", "root.a", "root.a.z", "root.a b", "root.b", "root.b.x", "root.b.y", "root.é",
            ])
    }

    @Test func snapshotOfAnEmptyTreeIsEmpty() {
        #expect(BadgeTree().snapshot().isEmpty)
    }

    @Test func childrenAreListedInByteOrder() throws {
        var tree = BadgeTree()
        for path in ["root.c", "root.a", "root.B"] { try tree.set(path) }
        #expect(tree.children(of: "root") == ["root.B", "root.a", "root.c"])
        #expect(tree.children(of: "root.none").isEmpty)
    }

    @Test func marksListsOwnMarksInByteOrder() throws {
        var tree = BadgeTree()
        try tree.set("root.p.item", count: 2)
        try tree.set("root.p")
        try tree.set("root.a", count: 5)
        #expect(tree.marks.map(\.path) == ["root.a", "root.p", "root.p.item"])
        #expect(tree.marks.map(\.mark) == [.count(5), .dot, .count(2)])
    }

    @Test func marksRoundTripThroughInit() throws {
        let configuration = try BadgeTree.Configuration(maxDisplay: 9, display: ["root.chat": .dot])
        var tree = BadgeTree(configuration: configuration)
        try tree.set("root.promotion", count: 5)
        try tree.set("root.promotion.item1")
        try tree.set("root.chat.alice", count: 12)
        try tree.set("root.chat")
        try tree.set("root.news")
        try tree.set("root", count: 1)
        let rebuilt = try BadgeTree(configuration: configuration, marks: tree.marks)
        #expect(rebuilt.marks.map(\.path) == tree.marks.map(\.path))
        #expect(rebuilt.marks.map(\.mark) == tree.marks.map(\.mark))
        #expect(rebuilt.snapshot() == tree.snapshot())
        #expect(rebuilt.total == tree.total)
    }

    @Test func marksInAnyOrderRebuildTheSameTree() throws {
        let marks: [(path: String, mark: Mark)] = [("root.p.item", .count(2)), ("root.p", .count(9)), ("root.q", .dot)]
        let forwards = try BadgeTree(configuration: .init(), marks: marks)
        let backwards = try BadgeTree(configuration: .init(), marks: marks.reversed())
        #expect(forwards.snapshot() == backwards.snapshot())
        #expect(forwards.mark(of: "root.p") == .count(9))
        #expect(forwards.total == 2)
    }

    @Test func initFromMarksRejectsAPathOutsideTheRoot() {
        #expect(throws: BadgePathError.self) {
            try BadgeTree(configuration: .init(), marks: [("elsewhere.a", .dot)])
        }
    }

    // MARK: - Large counts

    @Test func countsStopAtMaxCount() throws {
        var tree = BadgeTree()
        try tree.set("root.a", count: BadgeTree.maxCount - 1)
        try tree.increment("root.a", by: 5)
        #expect(tree.mark(of: "root.a") == .count(BadgeTree.maxCount))
        try tree.increment("root.a", by: -1)
        #expect(tree.mark(of: "root.a") == .count(BadgeTree.maxCount - 1))
    }

    @Test func hugeSiblingCountsDoNotOverflowTheirParent() throws {
        var tree = BadgeTree()
        try tree.set("root.a", count: .max)
        try tree.set("root.b", count: .max)
        try tree.increment("root.c", by: .max)
        try tree.increment("root.c", by: .max)
        let counts = ["root.a", "root.b", "root.c"].map { tree.state(of: $0).count }
        #expect(counts == [BadgeTree.maxCount, BadgeTree.maxCount, BadgeTree.maxCount])
        #expect(tree.total == 3 * BadgeTree.maxCount)
        try tree.clear("root", force: true)
        #expect(tree.total == 0)
    }

    @Test func aPathsFirstSegmentMustBeTheRootExactly() throws {
        var tree = BadgeTree(configuration: try .init(root: "app"))
        for path in ["app", "app.x", "app.x.y"] {
            #expect(throws: Never.self) { try tree.set(path) }
        }
        for path in ["apps.x", "ap", "ap.x", "x.app", "appx", "root.x", "App.x"] {
            #expect {
                try tree.set(path)
            } throws: { error in
                (error as? BadgePathError)?.reason == "a path must start with the root \"app\""
            }
        }
        #expect(tree.total == 0)
    }
}
