import Testing

@testable import BadgeFlow

/// `{"op":"expire","at":T}`: marks due by T expire in every account, resident or compact,
/// without the accounts' own events.
@Suite struct FleetExpiryTests {
    private func lines(_ session: FilterSession) -> [String] {
        String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private func mark(_ account: String, ttl: Int, at: Int, path: String = "root.news") -> String {
        #"{"op":"set","account":"\#(account)","device":"phone","path":"\#(path)","ttl":\#(ttl),"at":\#(at)}"#
    }

    @Test func dueMarksExpireInEveryAccountInByteOrder() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(mark("zed", ttl: 10, at: 100))
        session.feed(mark("amy", ttl: 20, at: 100))
        session.feed(mark("later", ttl: 500, at: 100))
        session.feed(#"{"op":"login","account":"amy","device":"ipad","at":90}"#)
        session.feed(#"{"op":"expire","at":"1970-01-01T00:02:00Z"}"#)
        session.feed(#"{"op":"expire","at":121}"#)
        let out = lines(session)
        #expect(
            out[4]
                == #"{"seq":5,"op":"expire","at":"1970-01-01T00:02:00Z","accounts":[{"account":"amy","expired":["root.news"],"changes":[{"path":"root.news","count":0,"show":false,"display":"hidden"},{"path":"root","count":0,"show":false,"display":"hidden"}],"icon":0},{"account":"zed","expired":["root.news"],"changes":[{"path":"root.news","count":0,"show":false,"display":"hidden"},{"path":"root","count":0,"show":false,"display":"hidden"}],"icon":0}]}"#
        )
        #expect(out[5] == #"{"seq":6,"op":"expire","at":121,"accounts":[]}"#)
        // The clocks of the accounts with a due mark moved to T; the other one's did not.
        #expect(try session.stream.account("amy")?.clock == 120)
        #expect(try session.stream.account("later")?.clock == 100)
        #expect(try session.stream.account("later")?.tree.mark(of: "root.news") == .dot)
    }

    @Test func anExpiryThatLowersTheTotalOwesEveryDevice() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"set","account":"u","device":"phone","path":"root.inbox","count":3,"ttl":60,"at":0}"#)
        session.feed(#"{"op":"login","account":"u","device":"ipad"}"#)
        session.feed(#"{"op":"expire","at":60}"#)
        #expect(
            lines(session)[2].hasSuffix(
                #""decrement":{"by":3,"paths":["root.inbox"]},"icon":0,"badgeUpdates":[{"device":"ipad","badge":0},{"device":"phone","badge":0}]}]}"#
            ))
    }

    @Test func compactAccountsExpireToo() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(mark("a", ttl: 5, at: 10))
        session.feed(mark("b", ttl: 5, at: 10))
        session.stream.compact(keeping: 0)
        session.feed(#"{"op":"expire","at":15}"#)
        #expect(lines(session)[2].contains(#""accounts":[{"account":"a","expired":["root.news"]"#))
        #expect(lines(session)[2].contains(#"{"account":"b","expired":["root.news"]"#))
    }

    @Test func aStreamWithoutExpiringMarksIndexesNothing() {
        var session = FilterSession(rules: .builtIn)
        for i in 0..<200 {
            session.feed(#"{"op":"push","account":"a\#(i % 7)","device":"d","payload":{"aps":{"alert":"m","thread-id":"t\#(i % 5)"}}}"#)
        }
        #expect(session.stream.due.isEmpty)
        session.feed(mark("a1", ttl: 5, at: 10))
        #expect(!session.stream.due.isEmpty)
    }

    @Test(arguments: [
        (#"{"op":"expire","account":"a","at":5}"#, "invalid-value", "/account"),
        (#"{"op":"expire","device":"d","at":5}"#, "invalid-value", "/device"),
        (#"{"op":"expire"}"#, "missing-field", "/at"),
        (#"{"op":"expire","at":null}"#, "missing-field", "/at"),
        (#"{"op":"expire","at":"soon"}"#, "invalid-time", "/at"),
    ])
    func anExpireNamesNoAccountAndGivesItsTime(_ line: String, _ code: String, _ at: String) {
        var session = FilterSession(rules: .builtIn)
        session.feed(line)
        let out = lines(session)[0]
        #expect(out.contains(#""code":"\#(code)""#) && out.hasSuffix(#""at":"\#(at)"}}"#), "\(out)")
    }

    @Test func theDueIndexGivesTheEarliestFirst() {
        var index = DueIndex()
        let times = [5.0, 1, 9, 3, 3, 7, 0.5, 12]
        for (i, t) in times.enumerated() { index.insert("a\(i)", at: t) }
        var popped: [Double] = []
        while let first = index.first {
            popped.append(first.time)
            index.removeFirst()
        }
        #expect(popped == times.sorted())
    }
}
