import Testing

@testable import BadgeFlow

/// Several devices on one account, devices joining and leaving: which number each
/// device was delivered, and what the server is told to send.
@Suite struct DeliveredNumberTests {
    /// Feeds `lines` to a new session and returns the result lines.
    private func run(_ lines: [String], stamp: Bool = false) -> [String] {
        var session = FilterSession(rules: .builtIn, stamp: stamp)
        for line in lines { session.feed(line) }
        return String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The `badgeUpdates` of a result line, as written (`""` when it has none).
    private func updates(_ line: String) -> String {
        guard let start = line.firstRange(of: #""badgeUpdates":["#) else { return "" }
        let rest = line[start.upperBound...]
        guard let end = rest.firstIndex(of: "]") else { return "?" }
        return String(rest[..<end])
    }

    private func push(_ device: String, thread: String, account: String = "u") -> String {
        #"{"op":"push","account":"\#(account)","device":"\#(device)","payload":{"aps":{"alert":"m","thread-id":"\#(thread)"}}}"#
    }

    private func silentRead(_ device: String, thread: String) -> String {
        #"{"op":"push","account":"u","device":"\#(device)","payload":{"aps":{"content-available":1},"type":"read","thread":"\#(thread)"}}"#
    }

    @Test func aSilentReadOwesItsOwnDeviceTheNumber() {
        let out = run([
            push("phone", thread: "c1"), push("phone", thread: "c1"),
            #"{"op":"login","account":"u","device":"ipad"}"#,
            silentRead("phone", thread: "c1"),
        ])
        // The phone was given 2 by the stamped pushes; the silent push set nothing on it.
        #expect(updates(out[3]) == #"{"device":"ipad","badge":0},{"device":"phone","badge":0}"#)
        #expect(out[3].contains(#""icon":0"#))
    }

    @Test(arguments: [
        (#"{"aps":{"content-available":1},"type":"unread","unread":3}"#, "background"),
        (#"{"aps":{"alert":"x","event":"update","timestamp":1,"content-state":{}}}"#, "live-activity"),
        (#"{"aps":{},"call":"c1"},"push-type":"voip"#, "voip"),
    ])
    func aPushThatDoesNotSetTheIconIsNotStamped(_ payload: String, _ kind: String) {
        let line = #"{"op":"push","device":"d","payload":\#(payload)"# + (kind == "voip" ? #""}"# : "}")
        let out = run([line], stamp: true)
        #expect(out[0].contains(#""kind":"\#(kind)""#), "\(out)")
        #expect(!out[0].contains(#""payload":"#))
    }

    @Test func aPushThatSetsTheIconIsStampedAndDelivers() {
        let out = run([push("phone", thread: "a"), #"{"op":"tick","account":"u","device":"phone"}"#], stamp: true)
        #expect(out[0].contains(#""payload":{"aps":{"alert":"m","thread-id":"a","badge":1}}"#))
        #expect(updates(out[0]).isEmpty && updates(out[1]).isEmpty)
    }

    @Test func everyAppliedEventListsEveryStaleDevice() {
        // The phone is owed 1 after the silent push; the next event of the ipad, which does
        // not change the total, still lists it.
        let out = run([
            #"{"op":"login","account":"u","device":"phone"}"#,
            #"{"op":"push","account":"u","device":"phone","payload":{"aps":{"content-available":1},"type":"unread","unread":1}}"#,
        ])
        #expect(updates(out[1]) == #"{"device":"phone","badge":1}"#)
        let again = run([
            #"{"op":"login","account":"u","device":"phone"}"#,
            #"{"op":"login","account":"u","device":"ipad"}"#,
            #"{"op":"reconcile","account":"u","device":"phone","badge":5}"#,
            #"{"op":"tick","account":"u","device":"ipad"}"#,
        ])
        #expect(updates(again[2]) == #"{"device":"phone","badge":0}"#)
        #expect(updates(again[3]).isEmpty)
    }

    @Test func anAccountLevelEventAddsNoDevice() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(push("phone", thread: "c1"))
        session.feed(#"{"op":"clear","account":"u","path":"root.chat.c1"}"#)
        let out = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(out[1].hasPrefix(#"{"seq":2,"op":"clear","device":"","account":"u""#))
        #expect(updates(out[1]) == #"{"device":"phone","badge":0}"#)
        let account = try #require(try session.stream.account("u"))
        #expect(account.devices.keys.sorted() == ["phone"])
    }

    @Test func anAccountLevelPushGoesToEveryDevice() {
        let out = run([
            #"{"op":"login","account":"u","device":"phone"}"#,
            #"{"op":"login","account":"u","device":"ipad"}"#,
            #"{"op":"push","account":"u","payload":{"aps":{"alert":"m","thread-id":"c"}}}"#,
            #"{"op":"push","account":"u","payload":{"aps":{"content-available":1},"type":"read","thread":"c"}}"#,
        ])
        // Counted once; an alert sets every icon, a silent push owes every device.
        #expect(out[2].contains(#""icon":1"#) && updates(out[2]).isEmpty)
        #expect(updates(out[3]) == #"{"device":"ipad","badge":0},{"device":"phone","badge":0}"#)
    }

    @Test func logoutSendsZeroToADeviceThatShowsSomething() throws {
        var session = FilterSession(rules: .builtIn)
        for line in [
            push("phone", thread: "c"), #"{"op":"login","account":"u","device":"ipad"}"#,
            #"{"op":"logout","account":"u","device":"phone"}"#,
            #"{"op":"logout","account":"u","device":"ipad"}"#,
        ] { session.feed(line) }
        let out = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(updates(out[2]) == #"{"device":"phone","badge":0}"#)
        #expect(updates(out[3]) == #"{"device":"ipad","badge":0}"#)
        #expect(try #require(try session.stream.account("u")).devices.isEmpty)
    }

    @Test func unregisterDropsTheDeviceSilently() throws {
        var session = FilterSession(rules: .builtIn)
        for line in [
            push("phone", thread: "c"), #"{"op":"login","account":"u","device":"ipad"}"#,
            #"{"op":"unregister","account":"u","device":"phone"}"#,
            #"{"op":"unregister","account":"u","device":"watch"}"#,
        ] { session.feed(line) }
        let out = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(out[2] == #"{"seq":3,"op":"unregister","device":"phone","account":"u","changes":[],"icon":1}"#)
        #expect(out[3] == #"{"seq":4,"op":"unregister","device":"watch","account":"u","changes":[],"icon":1}"#)
        #expect(try #require(try session.stream.account("u")).devices.keys.sorted() == ["ipad"])
    }

    @Test func reconcileResendsEveryDeviceOrCorrectsOne() {
        let out = run([
            push("phone", thread: "c"), #"{"op":"login","account":"u","device":"ipad"}"#,
            #"{"op":"reconcile","account":"u"}"#,
            #"{"op":"reconcile","account":"u","device":"phone","badge":1}"#,
            #"{"op":"reconcile","account":"u","device":"phone","badge":4}"#,
        ])
        #expect(
            out[2]
                == #"{"seq":3,"op":"reconcile","device":"","account":"u","changes":[],"icon":1,"badgeUpdates":[{"device":"ipad","badge":1},{"device":"phone","badge":1}]}"#
        )
        #expect(updates(out[3]).isEmpty)
        #expect(updates(out[4]) == #"{"device":"phone","badge":1}"#)
    }

    @Test(arguments: [
        (#"{"op":"reconcile","account":"u","device":"p","badge":"3"}"#, "wrong-type"),
        (#"{"op":"reconcile","account":"u","device":"p","badge":null}"#, "wrong-type"),
        (#"{"op":"reconcile","account":"u","device":"p","badge":1.5}"#, "wrong-type"),
        (#"{"op":"reconcile","account":"u","device":"p","badge":-1}"#, "invalid-value"),
        (#"{"op":"reconcile","account":"u","badge":2}"#, "invalid-value"),
    ])
    func aReconcileBadgeMustBeACountFromADevice(_ line: String, _ code: String) {
        let out = run([line])
        #expect(out[0].contains(#""code":"\#(code)""#) && out[0].contains(#""at":"/badge""#), "\(out)")
    }

    @Test func unregisterNeedsADevice() {
        #expect(run([#"{"op":"unregister","account":"u"}"#])[0].contains(#""code":"missing-field","message":"unregister needs"#))
    }

    @Test func aRejectedLineCreatesNoAccountDeviceOrClock() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"set","account":"u","device":"phone","path":"root.p","ttl":10,"at":100}"#)
        session.feed(#"{"op":"clear","account":"u","device":"zz","path":"root.chat.c1.","at":500}"#)
        session.feed(#"{"op":"clear","account":"new","device":"zz","path":"root.chat.c1.","at":500}"#)
        let account = try #require(try session.stream.account("u"))
        #expect(account.devices.keys.sorted() == ["phone"])
        #expect(account.clock == 100)
        // The mark due at 110 did not expire at the rejected line's time.
        #expect(account.tree.mark(of: "root.p") == .dot)
        #expect(try session.stream.account("new") == nil)
    }
}
