import Testing
@testable import BadgeFlow

/// Feeds `lines` to a new session and returns the result lines.
private func run(_ lines: [String], rules: RuleSet = .builtIn) -> [String] {
    var session = FilterSession(rules: rules)
    for line in lines { session.feed(line) }
    return String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

private func chat(_ thread: String, badge: Int? = nil) -> String {
    #"{"aps":{"alert":"hi","thread-id":""# + thread + #"""# + (badge.map { #","badge":\#($0)"# } ?? "") + "}}"
}

@Suite struct BadgeStreamTests {
    // MARK: - Result lines

    @Test func aPushAndAClearGiveTheSpecLines() {
        let out = run([chat("alice"), #"{"op":"clear","path":"root.chat.alice"}"#, #"{"aps":{"#])
        #expect(
            out == [
                #"{"seq":1,"op":"push","device":"","kind":"alert","rule":"chat","path":"root.chat.alice","changes":[{"path":"root.chat.alice","count":1,"show":true,"display":"1"},{"path":"root.chat","count":1,"show":true,"display":"1"},{"path":"root","count":1,"show":true,"display":"1"}],"icon":1}"#,
                #"{"seq":2,"op":"clear","device":"","path":"root.chat.alice","changes":[{"path":"root.chat.alice","count":0,"show":false,"display":"hidden"},{"path":"root.chat","count":0,"show":false,"display":"hidden"},{"path":"root","count":0,"show":false,"display":"hidden"}],"decrement":{"by":1,"paths":["root.chat.alice"]},"icon":0}"#,
                #"{"seq":3,"error":{"code":"invalid-json","message":"unexpected end of input at byte 8","at":""}}"#,
            ])
    }

    @Test(arguments: [
        (#"{"op":"push","account":"a\u0000b","device":"d","payload":{"aps":{"alert":"hi"}}}"#, "account"),
        (#"{"op":"push","device":"d\u0000","payload":{"aps":{"alert":"hi"}}}"#, "device"),
        (#"{"op":"appear","page":"\u0000home"}"#, "page"),
    ])
    func idsThatBecomeStateKeysMustNotHoldNUL(_ line: String, _ field: String) {
        // The state keeps them as object keys, and keys with U+0000 do not load back.
        #expect(
            run([line]) == [
                #"{"seq":1,"error":{"code":"invalid-value","message":"\#(field) must not hold U+0000 (\\u0000)","at":"/\#(field)"}}"#
            ])
    }

    @Test func anEventMadeInCodeIsHeldToTheSameRule() {
        var stream = BadgeStream(rules: .builtIn)
        var event = Event(op: .login)
        event.device = "d"
        event.account = "a\u{0}b"
        guard case .rejected(let d)? = stream.apply(.event(event), seq: 1)?.body else {
            Issue.record("an account holding U+0000 was applied")
            return
        }
        #expect(d.code == .invalidValue && d.at == "/account")
        #expect(stream.accountCount == 0)
    }

    @Test func aNULInAValueThatIsNotAKeyIsKept() {
        #expect(run([#"{"op":"push","account":"a","device":"d","payload":{"aps":{"alert":"h\u0000i"}}}"#])[0].contains(#""account":"a""#))
    }

    @Test func anUnmatchedPushSaysRuleNullAndChangesNothing() {
        let out = run([#"{"aps":{"alert":"hello"}}"#])
        #expect(out == [#"{"seq":1,"op":"push","device":"","kind":"alert","rule":null,"changes":[],"icon":0}"#])
    }

    @Test func warningsAppearOnlyWhenThereAreAny() {
        let out = run([#"{"aps":{"alert":"x","colour":1}}"#, #"{"aps":{"alert":"x"}}"#])
        #expect(
            out[0].hasSuffix(
                #""icon":0,"warnings":[{"code":"unknown-aps-key","message":"\"colour\" is not an aps key APNs knows; custom keys belong outside aps","at":"/aps/colour"}]}"#
            ))
        #expect(!out[1].contains("warnings"))
    }

    @Test func aSnapshotListsShownNodesParentsFirstSiblingsInByteOrder() {
        let out = run([
            chat("bob"), chat("Alice"), chat("alice"), #"{"op":"set","path":"root.news"}"#,
            #"{"op":"clear","path":"root.chat.bob"}"#, #"{"op":"snapshot"}"#,
        ])
        #expect(
            out[5]
                == #"{"seq":6,"op":"snapshot","device":"","changes":[],"icon":2,"tree":[{"path":"root","count":2,"show":true,"display":"2"},{"path":"root.chat","count":2,"show":true,"display":"2"},{"path":"root.chat.Alice","count":1,"show":true,"display":"1"},{"path":"root.chat.alice","count":1,"show":true,"display":"1"},{"path":"root.news","count":0,"show":true,"display":"dot"}]}"#
        )
    }

    @Test func maxDisplayCapsTheDisplayedNumber() throws {
        let rules = try RuleSet.parse(#"{"maxDisplay":9}"#)
        let out = run([#"{"op":"set","path":"root.a","count":10}"#], rules: rules)
        #expect(out[0].contains(#""count":10,"show":true,"display":"9+""#))
    }

    // MARK: - One line per input line

    @Test func everyNonBlankLineGetsExactlyOneLineInOrderWhateverItHolds() {
        let lines = [
            chat("a"), "", "not json", "   ", #"{"op":"bump"}"#, #"[]"#, #"{"op":"set","path":"root..x"}"#,
            #"{"op":"clear","path":"elsewhere.x"}"#, #"{"aps":{"badge":"1"}}"#, #"{"op":"tick"}"#, "\u{1}",
            #"{"op":"set","path":"root.a","count":3}"#, chat("b"),
        ]
        let out = run(lines)
        let nonBlank = lines.indices.filter { !lines[$0].allSatisfy { $0 == " " } }
        #expect(out.count == nonBlank.count)
        for (line, index) in zip(out, nonBlank) {
            #expect(line.hasPrefix(#"{"seq":\#(index + 1),"#))
        }
        #expect(out.filter { $0.contains(#""error""#) }.count == 7)
        // The stream went on: the last push counts on top of what came before.
        #expect(out.last?.contains(#""icon":5"#) == true)
    }

    @Test func aPathOutsideTheRootIsAnInvalidPathAtSlashPath() {
        let out = run([#"{"op":"set","path":"elsewhere.x"}"#])
        #expect(out[0].hasPrefix(#"{"seq":1,"error":{"code":"invalid-path","#))
        #expect(out[0].hasSuffix(#""at":"/path"}}"#))
    }

    @Test func theSameInputGivesByteIdenticalOutput() {
        var lines: [String] = []
        for i in 0..<500 {
            switch i % 7 {
            case 0: lines.append(chat("t\(i % 13)"))
            case 1: lines.append(#"{"op":"clear","path":"root.chat.t\#(i % 13)","at":\#(i)}"#)
            case 2: lines.append(#"{"op":"appear","page":"home","device":"d\#(i % 3)","at":\#(i)}"#)
            case 3: lines.append(#"{"op":"login","device":"d\#(i % 3)"}"#)
            case 4: lines.append(#"{"aps":{"alert":"x","category":"c\#(i % 5)"}}"#)
            case 5: lines.append("garbage \(i)")
            default: lines.append(#"{"op":"snapshot","device":"d\#(i % 3)"}"#)
            }
        }
        #expect(run(lines) == run(lines))
    }

    // MARK: - Devices

    @Test func devicesHaveIndependentTrees() {
        let out = run([
            #"{"op":"push","device":"phone","payload":{"aps":{"alert":"x","thread-id":"a"}}}"#,
            #"{"op":"push","device":"ipad","payload":{"aps":{"alert":"x","thread-id":"a"}}}"#,
            #"{"op":"push","device":"phone","payload":{"aps":{"alert":"x","thread-id":"a"}}}"#,
            #"{"op":"clear","device":"ipad","path":"root.chat.a"}"#,
            #"{"op":"snapshot","device":"phone"}"#,
            #"{"op":"snapshot"}"#,
        ])
        #expect(out[0].contains(#""device":"phone""#) && out[0].contains(#""icon":1"#))
        #expect(out[1].contains(#""device":"ipad""#) && out[1].contains(#""icon":1"#))
        #expect(out[2].contains(#""icon":2"#))
        #expect(out[3].contains(#""decrement":{"by":1,"paths":["root.chat.a"]},"icon":0"#))
        #expect(out[4].contains(#""tree":[{"path":"root","count":2"#))
        // The default device never heard of any of it.
        #expect(out[5] == #"{"seq":6,"op":"snapshot","device":"","changes":[],"icon":0,"tree":[]}"#)
    }

    // MARK: - Icon policies and decrement requests

    @Test func treeIconIsTheRootCount() {
        let out = run([chat("a", badge: 40), chat("b"), #"{"op":"set","path":"root.news"}"#])
        #expect(out.map { $0.contains(#""icon":1"#) } == [true, false, false])
        #expect(out[1].contains(#""icon":2"#) && out[2].contains(#""icon":2"#))
    }

    @Test func payloadIconFollowsTheLastBadgeMinusLocalDecrements() throws {
        let rules = try RuleSet.parse(
            #"{"icon":"payload","rules":[{"name":"chat","path":"root.chat.{/aps/thread-id}","action":"increment"}]}"#)
        let icons = run(
            [
                chat("a", badge: 5),  // 5 from the payload
                chat("a"),  // no badge: stays 5
                #"{"op":"clear","path":"root.chat.a"}"#,  // decrement by 2 → 3
                chat("b", badge: 1),  // payload says 1
                #"{"op":"set","path":"root.chat.b","count":4}"#,  // raising is no decrement: 1
                #"{"op":"clear","path":"root.chat.b"}"#,  // decrement by 4 → never below 0
                #"{"aps":{"badge":0}}"#,  // badge 0
            ], rules: rules
        ).map { line -> Int in
            let tail = line.split(separator: #""icon":"#).last ?? ""
            return Int(tail.prefix(while: \.isNumber)) ?? -1
        }
        #expect(icons == [5, 5, 3, 1, 1, 0, 0])
    }

    @Test func aDecrementIsReportedWheneverTheTotalDrops() {
        let out = run([
            chat("a"), chat("a"), chat("b"),
            #"{"op":"set","path":"root.chat.a","count":1}"#,  // 2 → 1: by 1
            #"{"op":"set","path":"root.chat.a","count":5}"#,  // up: none
            #"{"op":"clear","path":"root.chat","force":true}"#,  // 5 + 1: by 6, both paths
            #"{"op":"clear","path":"root.chat","force":true}"#,  // nothing left: none
            #"{"op":"set","path":"root.news"}"#,  // a dot: none
            #"{"op":"clear","path":"root.news"}"#,  // a dot cleared lowers no total
        ])
        #expect(out[3].contains(#""decrement":{"by":1,"paths":["root.chat.a"]}"#))
        #expect(!out[4].contains("decrement"))
        #expect(out[5].contains(#""decrement":{"by":6,"paths":["root.chat.a","root.chat.b"]}"#))
        #expect(!out[6].contains("decrement"))
        #expect(!out[7].contains("decrement"))
        #expect(!out[8].contains("decrement"))
    }

    @Test func aReadElsewherePushClearsAndAsksForADecrement() {
        let out = run([
            chat("alice"), chat("alice"),
            #"{"aps":{"content-available":1},"type":"read","thread":"alice"}"#,
        ])
        #expect(out[2].contains(#""rule":"read-elsewhere","path":"root.chat.alice""#))
        #expect(out[2].contains(#""decrement":{"by":2,"paths":["root.chat.alice"]},"icon":0"#))
    }

    // MARK: - Time and sync in the stream

    @Test func eventsWithoutTimeTakeThePreviousTime() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"tick","at":100}"#)
        session.feed(#"{"op":"tick"}"#)
        #expect(session.stream.accounts[""]?.clock == 100)
        session.feed(#"{"op":"tick","at":"bad"}"#)  // a rejected line leaves the clock alone
        #expect(session.stream.accounts[""]?.clock == 100)
        session.feed(#"{"op":"tick","at":50}"#)  // time may go back; it is the input's
        #expect(session.stream.accounts[""]?.clock == 50)
    }

    @Test func eachDeviceKeepsItsOwnClock() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"login","device":"a","at":100}"#)
        session.feed(#"{"op":"login","device":"b"}"#)  // b's first event: time 0, not a's 100
        session.feed(#"{"op":"tick","device":"a"}"#)
        #expect(session.stream.accounts["a"]?.clock == 100)
        #expect(session.stream.accounts["b"]?.clock == 0)
        // b logged in at 0: a watched page and a tick at 61 of b's time is an interval sync.
        session.feed(#"{"op":"appear","device":"b","page":"home"}"#)
        session.feed(#"{"op":"tick","device":"b","at":61}"#)
        #expect(session.stream.accounts["a"]?.clock == 100)
        let out = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n")
        #expect(out[4].hasSuffix(#""icon":0,"sync":{"reason":"interval"}}"#))
    }

    @Test func syncReasonsAppearOnTheResultLine() {
        let out = run([
            #"{"op":"login","at":0}"#,
            #"{"op":"appear","page":"home","at":1}"#,
            chat("a"),
            #"{"op":"tick","at":30}"#,
            #"{"op":"tick","at":62}"#,
            #"{"op":"logout","at":63}"#,
            chat("b"),
        ])
        #expect(!out[0].contains("sync"))
        #expect(out[1].hasSuffix(#""page":"home","changes":[],"icon":0,"sync":{"reason":"first-appearance"}}"#))
        #expect(out[2].contains(#""sync":{"reason":"push"}"#))
        #expect(!out[3].contains("sync"))
        #expect(out[4].contains(#""sync":{"reason":"interval"}"#))
        #expect(!out[6].contains("sync"))
    }
}
