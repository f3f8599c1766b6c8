import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

/// What a store-backed stream is handed before a line (``StoreScan``, ``AccountTable/provide(_:hash:_:)``)
/// and what it asks to be read for a fleet-wide `expire`.
@Suite struct StoreScanTests {
    /// The due index lists exactly the entries due by a time, however the heap lies.
    @Test func theDueIndexListsTheEntriesDueByATime() {
        var r = SplitMix64(seed: 7)
        var due = DueIndex()
        var all: [(Double, String)] = []
        for i in 0..<500 {
            let time = Double(r.below(1000))
            due.insert("a\(i)", at: time)
            all.append((time, "a\(i)"))
        }
        for time in [-1.0, 0, 250, 499.5, 999, 5000] {
            let expected = all.filter { $0.0 <= time }.map(\.1).sorted()
            #expect(due.accounts(dueThrough: time).sorted() == expected, "\(time)")
        }
    }

    /// An `expire` asks for the due accounts neither in memory nor read: those the stream
    /// indexed and those the store says may be due, each once.
    @Test func anExpireAsksForTheDueAccountsNotHeld() {
        var stream = BadgeStream(rules: .builtIn)
        stream.isStoreBacked = true
        let analyzer = LineAnalyzer(rules: .builtIn)
        stream.provide("held", hash: IDIndex.hash("held"), nil)
        _ = stream.apply(
            analyzer.analyze(#"{"op":"set","account":"held","device":"d","at":10,"path":"root.promotion.p","ttl":5}"#), seq: 1)
        stream.clearProvided()
        stream.provide("read", hash: IDIndex.hash("read"), nil)
        let ids = stream.accountsToLoad(expiringThrough: 100, stored: ["held", "s1", "read", "s1", "s2"])
        #expect(ids == ["s1", "s2"])
    }

    /// A fleet-wide `expire` that loaded every due account does not leave its tables (and
    /// their zeroing) to every batch after it.
    @Test func aFleetSizedReadIsLetGoWhenCleared() {
        var t = AccountTable()
        for i in 0..<(AccountTable.aheadKept + 1) { t.provide("a\(i)", hash: IDIndex.hash("a\(i)"), nil) }
        t.clearAhead()
        #expect(t.aheadCapacity == 0)
        for i in 0..<100 { t.provide("b\(i)", hash: IDIndex.hash("b\(i)"), nil) }
        t.clearAhead()
        #expect(t.aheadCapacity >= 100, "a batch's room is kept")
        #expect(t.takePrefetched("b1", hash: IDIndex.hash("b1")) == nil)
    }
}
