import BadgeFlowTestSupport
import Testing
@testable import BadgeFlow

/// Feeds `lines` to a new session and returns the result lines.
private func run(_ lines: [String], rules: RuleSet = .builtIn, stream: BadgeStream? = nil, stamp: Bool = false) -> [String] {
    var session = stream.map { FilterSession(stream: $0, stamp: stamp) } ?? FilterSession(rules: rules, stamp: stamp)
    for line in lines { session.feed(line) }
    return String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// A push of a chat message in `thread` to `device` of `account`.
private func push(_ device: String, _ account: String = "A", thread: String = "bob", at: Int? = nil) -> String {
    #"{"op":"push","account":""# + account + #"","device":""# + device + #"""#
        + (at.map { #","at":\#($0)"# } ?? "")
        + #","payload":{"aps":{"alert":"hi","thread-id":""# + thread + #""}}}"#
}

private func op(_ op: String, _ device: String, _ account: String = "A", extra: String = "") -> String {
    #"{"op":""# + op + #"","account":""# + account + #"","device":""# + device + #"""# + extra + "}"
}

/// The `"badgeUpdates":[…]` text of a result line, or nil.
private func updates(_ line: String) -> String? {
    guard let start = line.firstRange(of: #","badgeUpdates":"#),
        let end = line[start.upperBound...].firstIndex(of: "]")
    else { return nil }
    return String(line[start.upperBound...end])
}

@Suite struct AccountTests {
    // MARK: - Accounts

    @Test func devicesOfAnAccountShareItsTree() {
        let out = run([push("phone"), push("ipad"), op("snapshot", "web")])
        #expect(out[0].contains(#""icon":1"#))
        #expect(out[1].contains(#""changes":[{"path":"root.chat.bob","count":2,"#))
        #expect(out[1].contains(#""icon":2"#))
        #expect(
            out[2].hasSuffix(
                #""icon":2,"tree":[{"path":"root","count":2,"show":true,"display":"2"},{"path":"root.chat","count":2,"show":true,"display":"2"},{"path":"root.chat.bob","count":2,"show":true,"display":"2"}]}"#
            ))
    }

    @Test func theAccountComesRightAfterTheDeviceOnlyWhenTheEventNamesOne() {
        let out = run([op("tick", "phone"), #"{"op":"tick","device":"phone"}"#, #"{"op":"tick","device":"x","account":"x"}"#])
        #expect(out[0] == #"{"seq":1,"op":"tick","device":"phone","account":"A","changes":[],"icon":0}"#)
        #expect(out[1] == #"{"seq":2,"op":"tick","device":"phone","changes":[],"icon":0}"#)
        #expect(out[2] == #"{"seq":3,"op":"tick","device":"x","account":"x","changes":[],"icon":0}"#)
    }

    @Test func withoutAnAccountEachDeviceIsItsOwnAccount() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"push","device":"phone","payload":{"aps":{"alert":"hi","thread-id":"bob"}}}"#)
        session.feed(#"{"op":"push","device":"ipad","payload":{"aps":{"alert":"hi","thread-id":"bob"}}}"#)
        #expect(session.stream.accounts.keys.sorted() == ["ipad", "phone"])
        #expect(session.stream.accounts["phone"]?.devices.keys.sorted() == ["phone"])
        let text = String(decoding: session.output.bytes, as: UTF8.self)
        #expect(!text.contains("badgeUpdates"))
        #expect(!text.contains("account"))
    }

    @Test func anEventWithoutAccountUsesTheAccountNamedLikeItsDevice() {
        // "account" defaults to the device id, so both lines touch one tree.
        let out = run([
            #"{"op":"set","device":"d","path":"root.a"}"#, #"{"op":"set","account":"d","device":"e","path":"root.b","count":2}"#,
        ])
        #expect(out[1].contains(#""icon":2"#))
    }

    @Test(arguments: [#"{"op":"tick","account":3}"#, #"{"op":"tick","account":null}"#, #"{"op":"tick","account":["A"]}"#])
    func anAccountMustBeAString(_ line: String) {
        let out = run([line])
        #expect(out[0].hasPrefix(#"{"seq":1,"error":{"code":"wrong-type","message":"account must be a string, got "#))
        #expect(out[0].hasSuffix(#""at":"/account"}}"#))
    }

    @Test func theResultValueCarriesAccountAndBadgeUpdates() throws {
        var stream = BadgeStream(rules: .builtIn)
        let analyzer = LineAnalyzer(rules: .builtIn)
        _ = stream.apply(analyzer.analyze(op("login", "ipad")), seq: 1)
        let result = try #require(stream.apply(analyzer.analyze(push("phone")), seq: 2)?.applied)
        #expect(result.event.account == "A")
        #expect(result.event.accountID == "A")
        #expect(result.badgeUpdates == [BadgeUpdate(device: "ipad", badge: 1)])
        #expect(result.stampedPayload == nil)
        #expect(stream.device("ipad", account: "A")?.delivered == 1)
        #expect(stream.device("phone", account: "A")?.delivered == 1)
    }

    // MARK: - Badge updates

    @Test func badgeUpdatesListTheOtherDevicesInByteOrderOfTheirIds() {
        let devices = ["b", "é", "a", "B", "a2"]
        let out = run(devices.map { op("login", $0) } + [push("a2")])
        // Byte order: "B" (0x42) < "a" < "b" < "é" (0xC3…); the event's own device is left out.
        #expect(
            updates(out[5]) == #"[{"device":"B","badge":1},{"device":"a","badge":1},{"device":"b","badge":1},{"device":"é","badge":1}]"#)
        #expect(out[5].contains(#""icon":1,"badgeUpdates":[{"device":"B""#))
    }

    @Test func badgeUpdatesComeOnlyWhenTheTotalChanges() {
        let out = run([
            op("login", "phone"), op("login", "ipad"),
            push("phone"),
            op("set", "phone", extra: #","path":"root.news""#),  // a dot: the total stays 1
            op("set", "ipad", extra: #","path":"root.chat.bob","count":1"#),  // same count
            op("snapshot", "ipad"),
            op("clear", "ipad", extra: #","path":"root.chat.bob""#),
        ])
        #expect(updates(out[2]) == #"[{"device":"ipad","badge":1}]"#)
        #expect(updates(out[3]) == nil)
        #expect(updates(out[4]) == nil)
        #expect(updates(out[5]) == nil)
        #expect(updates(out[6]) == #"[{"device":"phone","badge":0}]"#)
    }

    @Test func aDeviceThatAlreadyShowsTheNumberGetsNothing() throws {
        // The phone was last given 2, the iPad 5 and the watch 0; the tree holds 5.
        let folder = try TemporaryFolder()
        let file = try folder.write(
            "state.json",
            Array(
                #"""
                {"format":"badgeflow-state","version":2,"accounts":{"A":{"clock":0,"marks":{"root.chat.bob":5},"devices":{
                  "phone":{"icon":0,"delivered":2},"ipad":{"icon":0,"delivered":5},"watch":{"icon":0,"delivered":0}}}}}
                """#.utf8))
        var stream = try StateFile.load(file, rules: .builtIn)
        // The web sets the count to 2: the phone already shows 2 and gets nothing.
        let out = run([op("set", "web", extra: #","path":"root.chat.bob","count":2"#)], stream: stream)
        #expect(updates(out[0]) == #"[{"device":"ipad","badge":2},{"device":"watch","badge":2}]"#)
        // The updates count as delivered: the same change again owes nothing.
        stream = try StateFile.load(file, rules: .builtIn)
        var session = FilterSession(stream: stream)
        session.feed(op("set", "web", extra: #","path":"root.chat.bob","count":2"#))
        #expect(session.stream.accounts["A"]?.devices.mapValues(\.delivered) == ["phone": 2, "ipad": 2, "watch": 2, "web": 2])
        session.feed(op("set", "web", extra: #","path":"root.chat.bob","count":4"#))
        session.feed(op("set", "phone", extra: #","path":"root.chat.bob","count":4"#))
        let lines = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(updates(lines[1]) == #"[{"device":"ipad","badge":4},{"device":"phone","badge":4},{"device":"watch","badge":4}]"#)
        #expect(updates(lines[2]) == nil)
    }

    @Test func aClearFromADeviceNotInTheAccountUpdatesEveryDeviceOfIt() {
        let out = run([
            push("phone"), push("ipad"),
            op("clear", "web", extra: #","path":"root.chat.bob""#),
            op("clear", "", extra: #","path":"root.chat""#),
        ])
        #expect(updates(out[2]) == #"[{"device":"ipad","badge":0},{"device":"phone","badge":0}]"#)
        #expect(out[2].contains(#""decrement":{"by":2,"paths":["root.chat.bob"]},"icon":0"#))
        // Nothing left to clear, and every device already shows 0.
        #expect(updates(out[3]) == nil)
    }

    @Test func logoutLeavesTheAccountAfterItsResult() {
        var session = FilterSession(rules: .builtIn)
        for line in [op("login", "phone"), op("login", "ipad"), push("phone"), op("logout", "ipad"), push("phone")] {
            session.feed(line)
        }
        let out = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        // The iPad showed 1: a logged-out device must not keep the user's number.
        #expect(
            out[3]
                == #"{"seq":4,"op":"logout","device":"ipad","account":"A","changes":[],"icon":1,"badgeUpdates":[{"device":"ipad","badge":0}]}"#
        )
        #expect(updates(out[4]) == nil)
        #expect(session.stream.accounts["A"]?.devices.keys.sorted() == ["phone"])
        // Back with its next event (a login, after which it shows 2): a member again.
        session.feed(op("login", "ipad"))
        session.feed(push("phone"))
        let more = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(updates(more[6]) == #"[{"device":"ipad","badge":3}]"#)
    }

    @Test func aDeviceNeverLeavesItsOwnAccount() {
        // Without "account", logout keeps the device's state as it always did.
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"login","device":"d","at":5}"#)
        session.feed(#"{"op":"background","device":"d"}"#)
        session.feed(#"{"op":"logout","device":"d"}"#)
        #expect(session.stream.device("d")?.sync.foreground == false)
    }

    @Test func thePayloadIconPolicyKeepsANumberPerDeviceAndSendsNoUpdates() throws {
        let rules = try RuleSet.parse(#"{"icon":"payload"}"#)
        let out = run(
            [
                #"{"op":"push","account":"A","device":"phone","payload":{"aps":{"alert":"x","badge":4}}}"#,
                #"{"op":"push","account":"A","device":"ipad","payload":{"aps":{"alert":"x","badge":7}}}"#,
                op("snapshot", "phone"),
            ], rules: rules)
        #expect(out[1].contains(#""icon":7"#))
        #expect(out[2].contains(#""icon":4"#))
        #expect(!out.joined().contains("badgeUpdates"))
    }

    // MARK: - Clock

    @Test func eventsWithoutTimeTakeTheClockOfTheirAccount() {
        let out = run([
            op("login", "phone", extra: #","at":100"#),
            op("login", "ipad"),  // A's clock: 100
            #"{"op":"login","account":"B","device":"tv"}"#,  // B's first event: 0
            op("appear", "ipad", extra: #","page":"home""#),  // first appearance at 100
            op("tick", "ipad", extra: #","at":159"#),  // 59 s later: not yet
            op("tick", "ipad", extra: #","at":160"#),  // 60 s later: an interval sync
            #"{"op":"appear","account":"B","device":"tv","page":"home"}"#,  // first appearance at 0, not 160
            #"{"op":"tick","account":"B","device":"tv","at":60}"#,  // 60 s later for B
        ])
        #expect(out[3].hasSuffix(#""sync":{"reason":"first-appearance"}}"#))
        #expect(out[4].hasSuffix(#""icon":0}"#))
        #expect(out[5].hasSuffix(#""sync":{"reason":"interval"}}"#))
        #expect(out[6].hasSuffix(#""sync":{"reason":"first-appearance"}}"#))
        #expect(out[7].hasSuffix(#""sync":{"reason":"interval"}}"#))
    }

    // MARK: - Stamping

    @Test func stampingReplacesTheBadgeInPlaceKeepingTheOtherBytes() {
        let line = #"{"aps":{"alert":{"title":"Hi \u00e9","body":"x"}, "badge" : 9 ,"thread-id":"bob","sound":"a"},"n":1.50,"z":[1e3]}"#
        let out = run([line], stamp: true)
        #expect(
            out[0].hasSuffix(
                #""icon":1,"payload":{"aps":{"alert":{"title":"Hi \u00e9","body":"x"}, "badge" : 1 ,"thread-id":"bob","sound":"a"},"n":1.50,"z":[1e3]}}"#
            ))
    }

    @Test func stampingAddsTheBadgeLastInApsKeepingKeyOrder() {
        let out = run(
            [
                #"{"op":"push","device":"d","payload":{"z":1,"aps":{"thread-id":"bob","alert":"hi"},"a":{"aps":{"badge":3}}}}"#,
                #"{"op":"push","device":"d","payload":{"aps":{},"x":"y"}}"#,
                #"{"op":"push","device":"d","payload":{ "aps" : { } }}"#,
            ], stamp: true)
        #expect(out[0].hasSuffix(#""payload":{"z":1,"aps":{"thread-id":"bob","alert":"hi","badge":1},"a":{"aps":{"badge":3}}}}"#))
        #expect(out[1].hasSuffix(#""payload":{"aps":{"badge":1},"x":"y"}}"#))
        #expect(out[2].hasSuffix(#""payload":{ "aps" : { "badge":1} }}"#))
    }

    @Test func stampingNeverTouchesBackgroundPushes() {
        let out = run(
            [
                #"{"aps":{"content-available":1}}"#,
                #"{"op":"push","payload":{"aps":{"content-available":1},"type":"read","thread":"bob"}}"#,
                #"{"op":"set","path":"root.a"}"#,
            ], stamp: true)
        #expect(out[0].contains(#""kind":"background""#))
        #expect(!out.joined().contains(#""payload""#))
    }

    @Test func withoutStampingThereIsNoPayload() {
        #expect(!run([#"{"aps":{"alert":"hi","thread-id":"bob"}}"#])[0].contains("payload"))
    }

    @Test func thePayloadComesBeforeTheWarnings() {
        let out = run([#"{"aps":{"alert":"hi","colour":1}}"#], stamp: true)
        #expect(out[0].contains(#""icon":0,"payload":{"aps":{"alert":"hi","colour":1,"badge":0}},"warnings":["#))
    }

    @Test func aPayloadTheTextCannotBeCutIsRewrittenFromItsValue() {
        // An escaped key might spell "aps" or "badge": the payload is written from json-c's parse.
        let out = run(
            [
                #"{"\u0061ps":{"alert":"hi","thread-id":"bob","b\u0061dge":4},"k":"\u00e9\n"}"#,
                #"{"aps":{"alert":"hi","thread-id":"bob","badge":4,"badge":5}}"#,
            ], stamp: true)
        #expect(out[0].hasSuffix(#""payload":{"aps":{"alert":"hi","thread-id":"bob","badge":1},"k":"é\n"}}"#))
        // A repeated key is no longer rewritten from json-c's last value: PayloadValidation makes it the
        // error duplicate-key (json-c keeps the last value, other readers the first).
        #expect(out[1].contains(#""code":"duplicate-key""#) && out[1].contains(#""at":"/aps/badge""#), "\(out[1])")
    }

    @Test func theStampIsTheIconOfTheResultUnderEitherPolicy() throws {
        let rules = try RuleSet.parse(#"{"icon":"payload"}"#)
        let out = run([#"{"aps":{"alert":"hi","badge":7}}"#, #"{"aps":{"alert":"hi"}}"#], rules: rules, stamp: true)
        #expect(out[0].hasSuffix(#""payload":{"aps":{"alert":"hi","badge":7}}}"#))
        #expect(out[1].hasSuffix(#""payload":{"aps":{"alert":"hi","badge":7}}}"#))
        var stream = BadgeStream(rules: .builtIn)
        let analyzer = LineAnalyzer(rules: .builtIn, stamp: true)
        let value = stream.apply(analyzer.analyze(#"{"aps":{"alert":"hi","thread-id":"x"}, "k": true}"#), seq: 1)?.applied
        #expect(value?.stampedPayload == #"{"aps":{"alert":"hi","thread-id":"x","badge":1}, "k": true}"#)
    }

    @Test func stampingGivesTheSameBytesOnAnyNumberOfThreads() {
        var lines: [String] = []
        for i in 0..<3000 {
            lines.append(i % 7 == 0 ? #"{"aps":{"content-available":1}}"# : push("d\(i % 5)", "acct\(i % 3)", thread: "t\(i % 11)"))
        }
        let one = run(lines, stamp: true).joined(separator: "\n") + "\n"
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: 4, linesPerBatch: 64, stamp: true)
        #expect(String(decoding: filter.results(of: lines), as: UTF8.self) == one)
    }
}
