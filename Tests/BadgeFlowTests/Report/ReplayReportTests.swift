@testable import BadgeFlow
import Foundation
import Testing

@Suite struct ReplayReportTests {
    /// Two accounts: alice (phone and ipad, a push no rule routes, a clear from the ipad, an
    /// error line naming her) and bob (one push, still shown at the end).
    static let lines = [
        #"{"op":"login","account":"alice","device":"phone","at":100}"#,
        #"{"op":"push","account":"alice","device":"phone","at":110,"payload":{"aps":{"alert":"hi","thread-id":"bob"}}}"#,
        #"{"op":"login","account":"alice","device":"ipad","at":120}"#,
        #"{"op":"push","account":"alice","device":"phone","at":130,"payload":{"aps":{"alert":"hi","thread-id":"bob"}}}"#,
        #"{"op":"push","account":"alice","device":"phone","at":140,"payload":{"aps":{"sound":"x"},"custom":1}}"#,
        #"{"op":"clear","account":"alice","device":"ipad","at":200,"path":"root.chat.bob"}"#,
        #"{"op":"push","account":"bob","device":"b1","at":150,"payload":{"aps":{"alert":"yo","thread-id":"x"}}}"#,
        #"{not json"#,
        "",
        #"{"op":"bogus","account":"alice","device":"phone"}"#,
    ]

    static func replay(
        _ lines: [String], accounts: [String] = [], shownByTime: Int = 20, rowsKept: Int = 1000, groupCap: Int = 20
    ) -> ReplayReport {
        var report = ReplayReport(
            rules: .builtIn, accounts: accounts, shownByTime: shownByTime, rowsKept: rowsKept, groupCap: groupCap)
        for line in lines { report.summarize(line) }
        report.beginDetail()
        for line in lines { report.detail(line) }
        report.finish()
        return report
    }

    @Test func summaryFiguresAreTheFiltersOnes() {
        let r = Self.replay(Self.lines)
        #expect(r.results == 9)
        #expect(r.errors == 2)
        #expect(r.decrements == 1)
        #expect(r.decrementTotal == 2)
        #expect(r.badgeUpdates == 2)
        #expect(r.unmatched == 1)
        #expect(r.accountCount == 2)
        #expect(r.deviceCount == 3)
        #expect(r.errorsByCode["invalid-json"] == .init(count: 1, firstSeq: 8))
        #expect(r.errorsByCode["unknown-op"] == .init(count: 1, firstSeq: 10))
        #expect(r.byRule["null"] == .init(count: 1, firstSeq: 5))
        #expect(r.byRule["chat"] == .init(count: 3, firstSeq: 2))
        #expect(r.shapes == ["aps{sound} custom": .init(count: 1, firstSeq: 5)])
        #expect(r.syncs["push"]?.count == 3)
        // bob's chat mark was set at 150; the input's last time is 200.
        #expect(r.oldestMarks == [.init(account: "bob", path: "root.chat.x", mark: "1", age: 50, origin: "chat", seq: 7)])
    }

    @Test func showsTheAccountsLongestAboveZeroAndTheNamedOnes() {
        // alice: above zero from 110 to 200 (90 s); bob: from 150 to the end, 200 (50 s).
        let top = Self.replay(Self.lines, shownByTime: 1)
        #expect(top.shown.map(\.id) == ["alice"])
        #expect(top.shown.first?.aboveZero == 90)
        let named = Self.replay(Self.lines, accounts: ["bob", "bob"], shownByTime: 1)
        #expect(named.shown.map(\.id) == ["bob", "alice"])
        #expect(named.shown.map(\.named) == [true, false])
        #expect(named.shown.first?.aboveZero == 50)
    }

    @Test func detailHoldsTheAccountsResultsDevicesAndErrors() throws {
        let r = Self.replay(Self.lines)
        let alice = try #require(r.shown.first { $0.id == "alice" })
        #expect(alice.rows.map(\.seq) == [1, 2, 3, 4, 5, 6, 10])
        #expect(alice.rows.map(\.icon) == [0, 1, 1, 2, 2, 0, nil])
        #expect(alice.rows.last?.error == "unknown-op")
        #expect(alice.rows[4].unmatched)
        #expect(alice.rows[5].decrement == 2)
        #expect(alice.rows[5].updates == [BadgeUpdate(device: "phone", badge: 0)])
        // The ipad joined showing 1, was owed 2 by the phone's push, then cleared to 0.
        #expect(alice.rows[2].delivered == [BadgeUpdate(device: "ipad", badge: 1)])
        #expect(alice.rows[3].delivered == [BadgeUpdate(device: "ipad", badge: 2), BadgeUpdate(device: "phone", badge: 2)])
        #expect(alice.devices == [BadgeUpdate(device: "ipad", badge: 0), BadgeUpdate(device: "phone", badge: 0)])
        #expect(alice.icon == 0)
        #expect(alice.timed)
        let bob = try #require(r.shown.first { $0.id == "bob" })
        #expect(bob.icon == 1)
        #expect(bob.marks.map(\.path) == ["root.chat.x"])
    }

    @Test func keepsAtMostRowsKeptResultsPerAccount() throws {
        let lines = (1...50).map {
            #"{"op":"push","account":"a","device":"d","at":\#($0),"payload":{"aps":{"alert":"x","thread-id":"t"}}}"#
        }
        let r = Self.replay(lines, rowsKept: 10)
        let a = try #require(r.shown.first)
        #expect(a.rows.count == 10)
        #expect(a.omitted == 40)
        #expect(a.results == 50)
        #expect(a.rows.map(\.seq) == Array(41...50))
    }

    @Test func pageCarriesTheFiguresAndEscapesIDs() {
        var lines = Self.lines
        lines.append(#"{"op":"set","account":"<b>&\"","device":"d","path":"root.inbox","count":3}"#)
        let page = Self.replay(lines).page(title: "day <1>")
        for (metric, value) in [
            ("results", 10), ("errors", 2), ("accounts", 3), ("devices", 4), ("decrements", 1), ("decrement-total", 2),
            ("badge-updates", 2), ("unmatched", 1),
        ] {
            #expect(page.contains(#"<td data-metric="\#(metric)">\#(value)</td>"#), "\(metric)")
        }
        #expect(page.contains(#"data-account="alice""#))
        #expect(page.contains(#"data-account="&lt;b&gt;&amp;&quot;""#))
        #expect(!page.contains("<b>&"))
        #expect(page.contains("day &lt;1&gt;"))
        #expect(page.contains(#"<td data-device="ipad" data-final="delivered">0</td>"#))
        // Self-contained: nothing is fetched.
        #expect(!page.contains("src=") && !page.contains("http://") && !page.contains("https://"))
    }

    @Test func anOverlongLineIsALineTooLongError() {
        var report = ReplayReport(rules: .builtIn)
        report.summarize(Self.lines[0])
        report.summarize(.overlong(5000), maxLineBytes: 1024)
        #expect(report.results == 2)
        #expect(report.errorsByCode["line-too-long"] == .init(count: 1, firstSeq: 2))
    }

    @Test func numberedLinesTakeTheirSeqFromThePrefix() throws {
        let lines = ["7\t" + Self.lines[1], "9\t{oops", "plain"]
        var report = ReplayReport(rules: .builtIn, numbered: true)
        for line in lines { report.summarize(line) }
        #expect(report.results == 3)
        #expect(report.byRule["chat"]?.firstSeq == 7)
        #expect(report.errorsByCode["invalid-json"]?.firstSeq == 9)
        #expect(report.errorsByCode["invalid-line-number"]?.firstSeq == 3)
    }

    /// Fixtures/scenarios/report-expire.ndjson: fleet-wide `expire` lines (the filter's
    /// results are in its golden): bob's inbox expires at 08:30, ann's at 09:30, one expire
    /// finds nothing due, one is rejected; the default device's push is account "".
    static let expireLines = [
        #"{"op":"push","payload":{"aps":{"alert":"hi","thread-id":"x"}},"at":"2026-11-24T08:00:00Z"}"#,
        #"{"op":"set","account":"ann","device":"phone","path":"root.inbox","count":3,"ttl":3600,"at":"2026-11-24T08:00:00Z"}"#,
        #"{"op":"login","account":"ann","device":"ipad","at":"2026-11-24T08:10:00Z"}"#,
        #"{"op":"set","account":"bob","device":"watch","path":"root.inbox","count":1,"ttl":600,"at":"2026-11-24T08:00:00Z"}"#,
        #"{"op":"push","account":"bob","device":"watch","payload":{"aps":{"alert":"yo","thread-id":"carl"}},"at":"2026-11-24T08:01:00Z"}"#,
        #"{"op":"expire","at":"2026-11-24T08:30:00Z"}"#,
        "",
        #"{"op":"expire","at":"2026-11-24T09:30:00Z"}"#,
        #"{"op":"expire","at":"2026-11-24T10:00:00Z"}"#,
        #"{"op":"push","account":"ann","device":"phone","payload":{"aps":{"alert":"back","thread-id":"dan"}},"at":"2026-11-24T10:30:00Z"}"#,
        #"{"op":"expire"}"#,
    ]

    @Test func anExpireResultCountsForEachAccountItLists() {
        let r = Self.replay(Self.expireLines)
        #expect(r.results == 10)
        #expect(r.errors == 1)
        // bob's expire decrement (1) and ann's (3), with their badge updates (1 + 2), and
        // ann's push at 10:30 owing the ipad 1.
        #expect(r.decrements == 2)
        #expect(r.decrementTotal == 4)
        #expect(r.badgeUpdates == 4)
        #expect(r.byOp["expire"] == .init(count: 3, firstSeq: 6))
        #expect(r.accountCount == 3)
    }

    @Test func anExpireMovesEachListedAccountsIconAndTimeAboveZero() throws {
        let r = Self.replay(Self.expireLines)
        // bob: above zero 08:00-10:30 (his expire left 1); "": 08:00-10:30 (one real push);
        // ann: 08:00 until her expire at 09:30, then 0 until her push at the last time.
        #expect(r.shown.map(\.id) == ["bob", "", "ann"])
        #expect(r.shown.map(\.aboveZero) == [9000, 9000, 5400])
        let ann = try #require(r.shown.first { $0.id == "ann" })
        #expect(ann.rows.map(\.seq) == [2, 3, 8, 10])
        #expect(ann.rows.map(\.icon) == [3, 3, 0, 1])
        let expire = ann.rows[2]
        #expect(expire.op == "expire")
        #expect(expire.decrement == 3)
        #expect(expire.updates == [BadgeUpdate(device: "ipad", badge: 0), BadgeUpdate(device: "phone", badge: 0)])
        #expect(expire.delivered == [BadgeUpdate(device: "ipad", badge: 0), BadgeUpdate(device: "phone", badge: 0)])
        #expect(expire.change == "2 nodes changed; expired root.inbox")
        // 2026-11-24T09:30:00Z: the account's clock moved to the expire's time.
        #expect(expire.time == 1_795_512_600)
        let bob = try #require(r.shown.first { $0.id == "bob" })
        #expect(bob.rows.map(\.seq) == [4, 5, 6])
        #expect(bob.rows.last?.decrement == 1)
        #expect(bob.rows.last?.updates == [BadgeUpdate(device: "watch", badge: 1)])
        #expect(bob.icon == 1)
        // Account "" is the default device's: its push, and no expire line or rejected expire.
        let none = try #require(r.shown.first { $0.id == "" })
        #expect(none.rows.map(\.seq) == [1])
        #expect(none.results == 1)
    }

    @Test func expireLinesAloneShowNoAccountNamedEmpty() {
        let lines = [
            #"{"op":"set","account":"ann","device":"phone","path":"root.inbox","count":2,"ttl":60,"at":100}"#,
            #"{"op":"expire","at":200}"#,
            #"{"op":"expire"}"#,
        ]
        let r = Self.replay(lines, accounts: ["ann"])
        #expect(r.shown.map(\.id) == ["ann"])
        #expect(r.shown.first?.rows.map(\.seq) == [1, 2])
        // Above zero from 100 until the expire at 200 took the mark away (due at 160).
        #expect(r.shown.first?.aboveZero == 100)
        let page = r.page(title: "t")
        #expect(!page.contains(#"data-account="""#))
        #expect(page.contains(#"<td data-metric="decrement-total">2</td>"#))
    }

    /// Issue 46: a day where "carol" is never among the longest shown, but her iPad left
    /// (unregister) showing 2, one push came twice (same id) and one line of hers was rejected
    /// at 11:00 while her clock stood at 10:00.
    static let supportLines = [
        #"{"op":"push","account":"long","device":"p","at":"2026-11-24T08:00:00Z","payload":{"aps":{"alert":"a","thread-id":"x"}}}"#,
        #"{"op":"login","account":"carol","device":"phone","at":"2026-11-24T09:00:00Z"}"#,
        #"{"op":"login","account":"carol","device":"ipad","at":"2026-11-24T09:00:00Z"}"#,
        #"{"op":"push","account":"carol","device":"phone","id":"m1","at":"2026-11-24T09:30:00Z","payload":{"aps":{"alert":"a","thread-id":"y"}}}"#,
        #"{"op":"push","account":"carol","device":"phone","id":"m2","at":"2026-11-24T09:40:00Z","payload":{"aps":{"alert":"a","thread-id":"z"}}}"#,
        #"{"op":"push","account":"carol","device":"phone","id":"m1","at":"2026-11-24T09:50:00Z","payload":{"aps":{"alert":"a","thread-id":"y"}}}"#,
        #"{"op":"unregister","account":"carol","device":"ipad","at":"2026-11-24T10:00:00Z"}"#,
        #"{"op":"set","account":"carol","device":"phone","path":"root.inbox","count":"3","at":"2026-11-24T11:00:00Z"}"#,
        #"{"op":"clear","account":"carol","device":"phone","path":"root.chat.y","at":"2026-11-24T10:00:00Z"}"#,
        #"{"op":"set","account":"only-errors","device":"w","path":"root.inbox","count":-1}"#,
        #"{"op":"push","account":"a b<c","device":"tab","at":"2026-11-24T10:30:00Z","payload":{"aps":{"alert":"a","thread-id":"q"}}}"#,
    ]

    @Test func indexesEveryAccountWithItsDevicesAndFlags() throws {
        let r = Self.replay(Self.supportLines, shownByTime: 1)
        #expect(r.index.map(\.id) == ["a b<c", "carol", "long", "only-errors"])
        let carol = try #require(r.entry("carol"))
        #expect(carol.icon == 1)
        #expect(carol.devices == [BadgeUpdate(device: "phone", badge: 1)])
        #expect(carol.left == [.init(device: "ipad", badge: 2, seq: 7, time: 1_795_514_400, op: "unregister")])
        #expect(carol.duplicates == 1)
        #expect(carol.errors == 1)
        #expect(carol.flags == [.left, .duplicates, .errors])
        #expect(r.entry("only-errors")?.errors == 1)
        #expect(r.entry("only-errors")?.devices == [])
        #expect(r.duplicates == 1)
        #expect(r.startTime == 1_795_507_200)
    }

    @Test func theDefaultSelectionAddsTheGroupsSupportAsksAbout() throws {
        let r = Self.replay(Self.supportLines, shownByTime: 1)
        #expect(r.groups.map(\.reason) == [.mismatch, .left, .duplicates, .errors])
        #expect(r.groups.map(\.count) == [0, 1, 1, 2])
        // Errors: carol and the account only a rejected line names; carol first (ties: byte order).
        #expect(r.groups[3].shown == ["carol", "only-errors"])
        #expect(r.shown.map(\.id) == ["long", "carol", "only-errors"])
        #expect(r.shown[1].reasons == [.left, .duplicates, .errors])
        let capped = Self.replay(Self.supportLines, shownByTime: 0, groupCap: 1)
        #expect(capped.groups[3].count == 2 && capped.groups[3].shown == ["carol"])
    }

    @Test func rowsCarryTimeIdDuplicatesAndErrorsAtTheirOwnTime() throws {
        let r = Self.replay(Self.supportLines, shownByTime: 0)
        let carol = try #require(r.shown.first { $0.id == "carol" })
        #expect(carol.rows.map(\.id) == [nil, nil, "m1", "m2", "m1", nil, nil, nil])
        #expect(carol.rows[4].duplicate)
        #expect(carol.rows[4].change == "duplicate of an earlier id: changed nothing")
        // The rejected line at 11:00 sits at 11:00, not at the account's clock (10:00).
        #expect(carol.rows[6].error == "wrong-type")
        #expect(carol.rows[6].time == 1_795_518_000)
        #expect(carol.departed == [.init(device: "ipad", badge: 2, seq: 7, time: 1_795_514_400, op: "unregister")])
        #expect(carol.duplicates == 1 && carol.errors == 1)
    }

    @Test func thePageHasTheIndexAnchorsCaptionsAndTimes() throws {
        var r = Self.replay(Self.supportLines)
        r.command = (["badgeflow", "report"], ["day one.ndjson"])
        let page = r.page(title: "day")
        #expect(page.contains(#"<time data-time="first">2026-11-24 08:00:00Z</time>"#))
        #expect(page.contains(#"<time data-time="last">2026-11-24 10:30:00Z</time>"#))
        #expect(page.contains(#"id="account-carol""#))
        #expect(page.contains(##"href="#account-a%20b%3Cc""##))
        #expect(page.components(separatedBy: "<table").count == page.components(separatedBy: "<caption>").count)
        // The index: every account, ids escaped (no `<` inside the script element).
        #expect(page.contains("a\\u0020b\\u003cc\t1\t\t1\t0\t0\ttab=1\t\n"))
        #expect(page.contains("carol\t1\tlde\t8\t1\t1\tphone=1\tipad=2@7\n"))
        #expect(page.contains(#"data-command-after="&#39;day one.ndjson&#39;""#))
        #expect(r.command(for: "it's") == #"badgeflow report --account 'it'\''s' 'day one.ndjson'"#)
        #expect(page.contains(#"<td data-left-device="ipad" data-seq="7">2</td>"#))
        #expect(page.contains("<mark>duplicate</mark> <code>m1</code>"))
        #expect(!page.contains("#d62728") && !page.contains("#2ca02c"))
    }

    @Test func pastTheBudgetTheIndexHoldsTheFlaggedAndShownAccounts() {
        var report = ReplayReport(rules: .builtIn, shownByTime: 0, indexBudget: 10)
        for line in Self.supportLines { report.summarize(line) }
        report.beginDetail()
        for line in Self.supportLines { report.detail(line) }
        report.finish()
        #expect(!report.indexComplete)
        let page = report.page(title: "t")
        #expect(page.contains(#"id="index-partial""#))
        #expect(!page.contains("\nlong\t"))
        #expect(page.contains("carol\t"))
    }

    @Test func theTextAnswersForOneAccount() throws {
        let r = Self.replay(Self.supportLines, accounts: ["carol"], shownByTime: 0)
        let text = try #require(r.text(for: "carol"))
        #expect(text.hasPrefix("account carol: icon 1 at the end; 8 results, 1 duplicates, 1 errors\n"))
        #expect(text.contains("  ipad    2       left by unregister at seq 7 (2026-11-24 10:00:00Z), showing 2\n"))
        #expect(text.contains("DUPLICATE m1"))
        #expect(text.contains("wrong-type"))
        #expect(text.contains("  root.chat.z  1     chat    5    phone   2026-11-24 09:40:00Z"))
        #expect(r.text(for: "nobody") == nil)
    }

    /// A user's mute (`contribute` none) is listed in the account's section and its text.
    @Test func settingsAreListedInTheSectionAndTheText() throws {
        var lines = Self.supportLines
        lines.append(#"{"op":"contribute","account":"carol","path":"root.chat.z","mode":"none","at":"2026-11-24T10:40:00Z"}"#)
        let r = Self.replay(lines, accounts: ["carol"], shownByTime: 0)
        let carol = try #require(r.shown.first { $0.id == "carol" })
        #expect(carol.icon == 0)
        #expect(carol.settings.map(\.path) == ["root.chat.z"])
        #expect(
            r.page(title: "t").contains(#"<li data-setting="contribute"><code>root.chat.z</code> contributes <code>none</code> (muted"#))
        #expect(try #require(r.text(for: "carol")).contains("  root.chat.z  none\n"))
    }
}
