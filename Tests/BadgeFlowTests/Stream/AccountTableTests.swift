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

    /// A commit takes each account's box, not a copy of the account; the table's accounts
    /// change on without changing what the commit writes (the first change copies the
    /// account into a box of the slot's own), and once the commit lets go of a box the
    /// account changes in it in place again.
    @Test func aCommitSharesTheBoxUntilTheAccountChanges() throws {
        var t = Self.table(["a"], tracksChanges: true)
        try Self.use(&t, ["a"])
        var taken = t.beginCommit()
        let s = try #require(t.slot(of: "a"))
        let before = t.slots[s].box
        #expect(taken.first?.box === before)
        t.slots[s].account.clock = 42
        #expect(taken.first?.account.clock == 0)
        #expect(t["a"]?.clock == 42)
        // By identity: holding the box here would share it.
        let own = Self.boxID(t, s)
        #expect(own != ObjectIdentifier(before))
        // Nothing else holds the slot's box now: changed in place.
        t.slots[s].account.clock = 43
        #expect(Self.boxID(t, s) == own && t["a"]?.clock == 43)
        taken.removeAll()
        #expect(before.value.clock == 0)
    }

    /// A box a commit was given is not changed in place before the commit has ended, even
    /// once the commit let go of it: the end (after the wait for the commit) orders the
    /// commit's reads before the stream's writes. After the end, changes are in place.
    @Test func aCommitsBoxIsCopiedUntilTheCommitHasEnded() throws {
        var t = Self.table(["a"], tracksChanges: true)
        try Self.use(&t, ["a"])
        var taken = t.beginCommit()
        let s = try #require(t.slot(of: "a"))
        let given = Self.boxID(t, s)
        taken.removeAll()  // the commit is done with it, but has not ended
        t.slots[s].account.clock = 7
        #expect(Self.boxID(t, s) != given)
        // Taken again and ended: from then on, in place.
        try Self.use(&t, ["a"])
        let again = t.beginCommit()
        t.endCommit(again.map { ($0.id, (0, 0)) })
        let ended = Self.boxID(t, s)
        _ = consume again
        t.slots[s].account.clock = 8
        #expect(Self.boxID(t, s) == ended && t["a"]?.clock == 8)
    }

    /// The identity of slot `s`'s box, without holding it.
    private static func boxID(_ t: AccountTable, _ s: Int) -> ObjectIdentifier { ObjectIdentifier(t.slots[s].box) }

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

    /// A removed account is released at once, not kept in its free slot until the slot is
    /// reused: slots freed in a burst are reused last, so what they kept stayed in memory.
    @Test func aRemovedAccountIsReleasedAtOnce() throws {
        var t = AccountTable()
        var account = Account(rules: .builtIn)
        account.devices["d"] = Device(rules: .builtIn)
        account.clock = 42
        let s = t.insert(account, as: "gone")
        t.remove(s)
        #expect(t.slots[s].account.devices.isEmpty && t.slots[s].account.clock != 42)
        #expect(t.slot(of: "gone") == nil && t.count == 0)
    }

    /// With deferred release (a read-ahead frees them), an account leaving memory is handed
    /// over by the next `takeReleased()`, once, and its slot holds none of it; without, it
    /// is freed at once and nothing is handed over.
    @Test func withDeferredReleaseALeavingAccountIsHandedOverOnce() {
        var t = AccountTable()
        t.deferredRelease = true
        let a = t.insert(Self.account(clock: 1), as: "a")
        let b = t.insert(Self.account(clock: 2), as: "b")
        _ = t.insert(Self.account(clock: 3), as: "c")
        t.remove(a)
        t.remove(b)
        t.remove(b)
        #expect(t.slots[a].account.clock == 0 && t.slots[b].account.clock == 0)
        #expect(t.takeReleased().map(\.value.clock).sorted() == [1, 2])
        #expect(t.takeReleased().isEmpty)
        #expect(t.count == 1 && t.slot(of: "c") != nil)

        var now = AccountTable()
        let c = now.insert(Self.account(clock: 3), as: "c")
        now.remove(c)
        #expect(now.takeReleased().isEmpty)
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

    /// An account with `clock` as its mark (to tell copies apart).
    private static func account(clock: Double) -> Account {
        var a = Account(rules: .builtIn)
        a.clock = clock
        return a
    }

    /// Accounts read ahead come from each reader's part, unmerged: each is taken once, an
    /// id the store has none of gives `.some(nil)`, one in two parts keeps the first, and
    /// one not read ahead gives nil.
    @Test func readAheadPartsAreTakenOnceEach() {
        var t = AccountTable()
        let first: [String: Account?] = ["a": Self.account(clock: 1), "gone": Account?.none, "both": Self.account(clock: 3)]
        let second: [String: Account?] = ["b": Self.account(clock: 2), "both": Self.account(clock: 4)]
        t.installPrefetched(parts: [ReadAccounts(first), ReadAccounts(second)])
        func take(_ id: String) -> Account?? { t.takePrefetched(id, hash: IDIndex.hash(id)).map(\.account) }
        #expect(take("a")??.clock == 1)
        #expect(take("a") == nil)
        #expect(take("b")??.clock == 2)
        #expect(take("both")??.clock == 3)
        let gone = take("gone")
        var storeHasNone = false
        if case .some(.none) = gone { storeHasNone = true }
        #expect(storeHasNone)
        #expect(take("never") == nil)
        // A later install replaces what was left.
        t.installPrefetched(parts: [ReadAccounts(["c": Self.account(clock: 5)])])
        #expect(take("b") == nil && take("c")??.clock == 5)
    }

    /// A copy read ahead of an account that came into memory since it was requested, or
    /// was evicted since (with ``AccountTable/recordsEvictions``), is not installed; once
    /// the evictions are cleared (a new request), a copy read after that is.
    @Test func readAheadSkipsAccountsInMemoryOrEvictedSinceTheRequest() throws {
        var t = Self.table(["resident", "evicted"])
        t.recordsEvictions = true
        try Self.use(&t, ["resident"])
        t.evict(keeping: 1)
        #expect(t.slot(of: "evicted") == nil && t.evictedIDs == ["evicted"])
        t.installPrefetched(["resident": Self.account(clock: 1), "evicted": Self.account(clock: 2), "new": Self.account(clock: 3)])
        func take(_ id: String) -> Account?? { t.takePrefetched(id, hash: IDIndex.hash(id)).map(\.account) }
        #expect(take("resident") == nil && take("evicted") == nil)
        #expect(take("new")??.clock == 3)
        t.forgetEvictions(before: t.evictionMark)
        t.installPrefetched(["evicted": Self.account(clock: 4)])
        #expect(take("evicted")??.clock == 4)
    }

    /// With two requests outstanding, each leaves out only the accounts evicted since it
    /// was made (its ``AccountTable/evictionMark``); forgetting the evictions before the
    /// later one's mark keeps those after it.
    @Test func eachReadAheadRequestLeavesOutWhatWasEvictedSinceItsOwnMark() throws {
        var t = Self.table(["a", "b", "c"])
        t.recordsEvictions = true
        try Self.use(&t, ["c", "b", "a"])
        t.evict(keeping: 2)  // c leaves before either request
        let first = t.evictionMark
        t.evict(keeping: 1)  // b leaves after the first request
        let second = t.evictionMark
        t.evict(keeping: 0)  // a leaves after both
        #expect(t.evictedIDs == ["c", "b", "a"])
        func take(_ id: String) -> Account?? { t.takePrefetched(id, hash: IDIndex.hash(id)).map(\.account) }
        let copies: [String: Account?] = ["a": Self.account(clock: 1), "b": Self.account(clock: 2), "c": Self.account(clock: 3)]
        t.installPrefetched(parts: [ReadAccounts(copies)], evictedSince: first)
        #expect(take("a") == nil && take("b") == nil && take("c")??.clock == 3)
        t.forgetEvictions(before: second)
        #expect(t.evictedIDs == ["a"] && t.evictionMark == second + 1)
        t.installPrefetched(parts: [ReadAccounts(copies)], evictedSince: second)
        #expect(take("a") == nil && take("b")??.clock == 2 && take("c")??.clock == 3)
        // An account evicted again after it came back counts from its latest eviction.
        _ = t.insert(Self.account(clock: 4), as: "c")
        let third = t.evictionMark
        t.evict(keeping: 0)
        t.installPrefetched(parts: [ReadAccounts(copies)], evictedSince: third)
        #expect(take("c") == nil && take("b")??.clock == 2)
        t.forgetEvictions(before: t.evictionMark)
        #expect(t.evictedIDs.isEmpty && t.evictionMark == third + 1)
    }

    /// An account dropped from a commit under way's slot no longer counts as in flight, and
    /// the account that reuses the slot starts unchanged and out of any commit, while the
    /// commit keeps its copy of the account that left.
    @Test func aRemovedSlotLeavesTheCommitAndItsReuseStartsClean() throws {
        var t = Self.table(["a", "b"], tracksChanges: true)
        try Self.use(&t, ["a", "b"])
        t.slots[try #require(t.slot(of: "a"))].account.clock = 7
        let taken = t.beginCommit()
        #expect(t.inFlightCount == 2)
        let a = try #require(t.slot(of: "a"))
        t.remove(a)
        #expect(t.inFlightCount == 1 && t.count == 1 && t.slot(of: "a") == nil)
        let c = t.insert(Account(rules: .builtIn), as: "c")
        #expect(c == a && !t.slots[c].inFlight && !t.slots[c].changed && t["c"]?.clock == 0)
        #expect(taken.first { $0.id == "a" }?.account.clock == 7)
        #expect(Self.resident(t) == ["b", "c"])
    }
}
