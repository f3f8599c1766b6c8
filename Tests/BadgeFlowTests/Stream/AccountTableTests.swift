import Testing

@testable import BadgeFlow

/// The residency rules of ``AccountTable``: which accounts eviction picks, and that a
/// changed account or one of a commit under way never leaves memory.
@Suite struct AccountTableTests {
    /// A table holding `ids` (in that order), each unused and unchanged.
    private static func table(_ ids: [String], tracksChanges: Bool = false) -> AccountTable {
        var t = AccountTable()
        t.tracksChanges = tracksChanges
        t.tracksUse = true
        for id in ids { t.insert(Account(rules: .builtIn), as: id) }
        return t
    }

    private static func use(_ t: inout AccountTable, _ ids: [String]) throws {
        for id in ids { t.noteUse(try #require(t.slot(of: id), "\(id)")) }
    }

    private static func resident(_ t: AccountTable) -> Set<String> { Set(t.resident.map(\.id)) }

    /// Eviction keeps the most recently used accounts, whatever order they came in.
    @Test func evictionDropsTheLeastRecentlyUsed() throws {
        var t = Self.table(["a", "b", "c", "d", "e"])
        try Self.use(&t, ["c", "a", "e", "b", "d", "a"])
        t.evict(keeping: 3)
        #expect(Self.resident(t) == ["b", "d", "a"])
        #expect(t.count == 3)
        #expect(t.slot(of: "c") == nil && t["e"] == nil)
        t.evict(keeping: 1)
        #expect(Self.resident(t) == ["a"])
    }

    /// A changed account stays until a commit takes it, however far over the limit.
    @Test func evictionNeverDropsAChangedAccount() throws {
        var t = Self.table(["a", "b", "c"], tracksChanges: true)
        try Self.use(&t, ["a", "b"])
        t.evict(keeping: 0)
        #expect(Self.resident(t) == ["a", "b"])
        #expect(t.changedCount == 2)
        let taken = t.takeChanged()
        #expect(taken.map(\.id) == ["a", "b"])
        #expect(t.changedCount == 0)
        t.evict(keeping: 0)
        #expect(t.count == 0)
    }

    /// Accounts of a commit under way stay in memory until it ends; then they may go, and
    /// what it stored is recorded in their slots.
    @Test func aCommitsAccountsStayUntilItEnds() throws {
        var t = Self.table(["a", "b", "c"], tracksChanges: true)
        try Self.use(&t, ["a", "b"])
        let taken = t.beginCommit()
        #expect(taken.map(\.id) == ["a", "b"])
        #expect(t.inFlightCount == 2 && t.changedCount == 0)
        t.evict(keeping: 0)
        #expect(Self.resident(t) == ["a", "b"])
        // Recorded in another order than handed out: matched by id.
        t.endCommit([("b", (0, 0)), ("a", (1, 2))])
        #expect(t.inFlightCount == 0)
        let a = try #require(t.slot(of: "a"))
        #expect(t.slots[a].storedCounts?.devices == 1 && t.slots[a].storedCounts?.marks == 2)
        #expect(t.takeChanged().isEmpty)
        t.evict(keeping: 0)
        #expect(t.count == 0)
    }

    /// A commit that failed gives its accounts back as changed: they stay, and the next
    /// commit takes them again.
    @Test func anAbortedCommitsAccountsCountAsChangedAgain() throws {
        var t = Self.table(["a", "b"], tracksChanges: true)
        try Self.use(&t, ["a", "b"])
        let taken = t.beginCommit()
        t.abortCommit(taken.map(\.id))
        #expect(t.inFlightCount == 0 && t.changedCount == 2)
        t.evict(keeping: 0)
        #expect(Self.resident(t) == ["a", "b"])
        #expect(t.beginCommit().map(\.id) == ["a", "b"])
        #expect(t.inFlightCount == 2)
    }

    /// A commit takes copies: the table's accounts change on without changing what the
    /// commit writes.
    @Test func aCommitTakesCopies() throws {
        var t = Self.table(["a"], tracksChanges: true)
        try Self.use(&t, ["a"])
        let taken = t.beginCommit()
        let s = try #require(t.slot(of: "a"))
        t.slots[s].account.clock = 42
        #expect(taken.first?.account.clock == 0)
        #expect(t["a"]?.clock == 42)
    }

    /// A freed slot is reused; a changed account that left does not make the next account
    /// in its slot count as changed, and one that changes is taken once.
    @Test func aReusedSlotCarriesNothingOver() throws {
        var t = Self.table(["x"], tracksChanges: true)
        try Self.use(&t, ["x"])
        let old = try #require(t.slot(of: "x"))
        t.remove(old)
        let reused = t.insert(Account(rules: .builtIn), as: "y")
        #expect(reused == old)
        #expect(t.slot(of: "x") == nil && t.count == 1)
        #expect(t.takeChanged().isEmpty)
        try Self.use(&t, ["y"])
        #expect(t.takeChanged().map(\.id) == ["y"])
    }

    /// An account loaded from the store the table commits to knows its stored counts; one
    /// made in memory does not.
    @Test func aLoadedAccountKnowsItsStoredCounts() throws {
        var t = AccountTable()
        var account = Account(rules: .builtIn)
        account.devices["d"] = Device(rules: .builtIn)
        let loaded = t.insert(account, as: "l", loaded: true)
        let made = t.insert(account, as: "m")
        #expect(t.slots[loaded].storedCounts?.devices == 1)
        #expect(t.slots[made].storedCounts == nil)
    }
}
