import Testing

@testable import BadgeFlow

/// `{"op":"contribute","account":A,"path":P,"mode":M}`: an account's own contribution
/// setting over the rules' (a user's mute), never a decrement.
@Suite struct ContributeTests {
    private func lines(_ session: FilterSession) -> [String] {
        String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private func push(_ account: String, _ device: String, thread: String) -> String {
        #"{"op":"push","account":"\#(account)","device":"\#(device)","payload":{"aps":{"alert":"m","thread-id":"\#(thread)"}}}"#
    }

    private func contribute(_ account: String, _ path: String, _ mode: String, device: String? = nil, id: String? = nil) -> String {
        let d = device.map { #","device":"\#($0)""# } ?? ""
        let i = id.map { #","id":"\#($0)""# } ?? ""
        return #"{"op":"contribute","account":"\#(account)"\#(d),"path":"\#(path)","mode":"\#(mode)"\#(i)}"#
    }

    @Test func aMuteLowersTheTotalWithBadgeUpdatesAndNoDecrement() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(push("u", "phone", thread: "bob"))
        session.feed(push("u", "phone", thread: "bob"))
        session.feed(push("u", "phone", thread: "amy"))
        session.feed(#"{"op":"login","account":"u","device":"ipad"}"#)
        session.feed(contribute("u", "root.chat.bob", "none"))
        let out = lines(session)
        #expect(
            out[4]
                == #"{"seq":5,"op":"contribute","device":"","account":"u","path":"root.chat.bob","changes":[{"path":"root.chat","count":1,"show":true,"display":"1"},{"path":"root","count":1,"show":true,"display":"1"}],"icon":1,"badgeUpdates":[{"device":"ipad","badge":1},{"device":"phone","badge":1}]}"#
        )
        let account = try #require(try session.stream.account("u"))
        #expect(account.contributions == ["root.chat.bob": .none])
        #expect(account.tree.total == 1)
        // The muted chat still shows its own number.
        #expect(account.tree.state(of: "root.chat.bob").count == 2)
    }

    @Test func anUnmuteRaisesTheTotalAndRulesRemovesTheSetting() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(push("u", "phone", thread: "bob"))
        session.feed(contribute("u", "root.chat.bob", "dot", device: "phone"))
        session.feed(contribute("u", "root.chat.bob", "count", device: "phone"))
        #expect(try session.stream.account("u")?.contributions == ["root.chat.bob": .count])
        session.feed(contribute("u", "root.chat.bob", "none"))
        session.feed(contribute("u", "root.chat.bob", "rules"))
        let out = lines(session)
        // The device's own app reported: its icon is the new total, no update owed to it.
        #expect(out[1].contains(#""icon":0}"#) && !out[1].contains("decrement") && !out[1].contains("badgeUpdates"), "\(out[1])")
        #expect(out[2].contains(#""icon":1}"#) && !out[2].contains("badgeUpdates"), "\(out[2])")
        #expect(out[3].hasSuffix(#""icon":0,"badgeUpdates":[{"device":"phone","badge":0}]}"#), "\(out[3])")
        #expect(out[4].hasSuffix(#""icon":1,"badgeUpdates":[{"device":"phone","badge":1}]}"#), "\(out[4])")
        let account = try #require(try session.stream.account("u"))
        #expect(account.contributions.isEmpty)
        #expect(account.tree.total == 1)
    }

    @Test func aSettingHoldsForMarksMadeAfterIt() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(contribute("u", "root.chat.bob", "none"))
        session.feed(push("u", "phone", thread: "bob"))
        session.feed(push("u", "phone", thread: "amy"))
        let out = lines(session)
        #expect(out[0] == #"{"seq":1,"op":"contribute","device":"","account":"u","path":"root.chat.bob","changes":[],"icon":0}"#)
        #expect(out[2].contains(#""icon":1"#), "\(out[2])")
        #expect(try session.stream.account("u")?.tree.total == 1)
    }

    @Test func aRepeatedMuteWithTheSameIDIsADuplicate() {
        var session = FilterSession(rules: .builtIn)
        session.feed(push("u", "phone", thread: "bob"))
        session.feed(contribute("u", "root.chat.bob", "none", id: "m1"))
        session.feed(contribute("u", "root.chat.bob", "count"))
        session.feed(contribute("u", "root.chat.bob", "none", id: "m1"))
        let out = lines(session)
        #expect(
            out[3] == #"{"seq":4,"op":"contribute","device":"","account":"u","path":"root.chat.bob","duplicate":true,"changes":[],"icon":1}"#)
    }

    @Test func marksDueBeforeTheSettingExpireAsUsual() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"set","account":"u","device":"phone","path":"root.inbox","count":2,"ttl":10,"at":0}"#)
        session.feed(push("u", "phone", thread: "bob"))
        session.feed(#"{"op":"contribute","account":"u","path":"root.chat.bob","mode":"none","at":20}"#)
        let out = lines(session)
        #expect(out[2].contains(#""expired":["root.inbox"]"#), "\(out[2])")
        // The expiry's decrement only: the mute lowers the total too, but is not a read.
        #expect(out[2].contains(#""decrement":{"by":2,"paths":["root.inbox"]},"icon":0"#), "\(out[2])")
    }

    @Test(arguments: [
        (#"{"op":"contribute","path":"root.chat.bob","mode":"none"}"#, "invalid-value", "/account"),
        (#"{"op":"contribute","device":"d","path":"root.chat.bob","mode":"none"}"#, "invalid-value", "/account"),
        (#"{"op":"contribute","account":"u","mode":"none"}"#, "missing-field", "/path"),
        (#"{"op":"contribute","account":"u","path":"root.chat.bob"}"#, "missing-field", "/mode"),
        (#"{"op":"contribute","account":"u","path":"root.chat.bob","mode":"mute"}"#, "invalid-value", "/mode"),
        (#"{"op":"contribute","account":"u","path":"root.chat.bob","mode":1}"#, "invalid-value", "/mode"),
        (#"{"op":"contribute","account":"u","path":"root.chat.bob","mode":null}"#, "invalid-value", "/mode"),
        (#"{"op":"contribute","account":"u","path":7,"mode":"none"}"#, "wrong-type", "/path"),
        (#"{"op":"contribute","account":"u","path":"inbox.x","mode":"none"}"#, "invalid-path", "/path"),
        (#"{"op":"contribute","account":"u","path":"root..x","mode":"none"}"#, "invalid-path", "/path"),
    ])
    func badFieldsAreErrorLinesThatChangeNothing(_ line: String, _ code: String, _ at: String) {
        var session = FilterSession(rules: .builtIn)
        session.feed(line)
        let out = lines(session)[0]
        #expect(out.contains(#""code":"\#(code)""#) && out.hasSuffix(#""at":"\#(at)"}}"#), "\(out)")
        #expect(session.stream.accountCount == 0)
    }

    @Test func theUnknownOpMessageNamesContribute() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"mute"}"#)
        #expect(lines(session)[0].contains("contribute"))
    }

    @Test func settingsSurviveEveryEncoding() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(push("u", "phone", thread: "bob"))
        session.feed(push("u", "phone", thread: "amy"))
        session.feed(contribute("u", "root.chat.bob", "none"))
        session.feed(contribute("u", "root.chat.zed", "dot"))
        session.feed(#"{"op":"push","account":"u","device":"phone","id":"e1","payload":{"aps":{"alert":"m","thread-id":"cat"}}}"#)
        let account = try #require(try session.stream.account("u"))
        let json = StateFile.encodeAccount(account, compact: true)
        #expect(json.hasSuffix(#""ids":["e1"],"settings":{"contribute":{"root.chat.bob":"none","root.chat.zed":"dot"}}}"#), "\(json)")
        let fromJSON = try StateFile.decodeAccount(json, at: "", file: "t", rules: .builtIn)
        var bytes: [UInt8] = []
        AccountCodec.encode(account, into: &bytes)
        let fromBinary = try #require(bytes.withUnsafeBytes { AccountCodec.decode($0, rules: .builtIn) })
        for var copy in [fromJSON, fromBinary] {
            #expect(copy.contributions == account.contributions)
            #expect(copy.tree.total == account.tree.total)
            #expect(copy.ids.list == ["e1"])
            // A mark made after the reload under the dot setting counts nothing.
            _ = try BadgeStream.perform(.increment(.literal(4)), on: "root.chat.zed", in: &copy.tree)
            #expect(copy.tree.total == account.tree.total)
        }
        // Without ids the settings still round-trip in the binary form.
        var plain = Account(rules: .builtIn)
        try plain.setContribution(.none, of: "root.chat.x", rules: .builtIn)
        bytes = []
        AccountCodec.encode(plain, into: &bytes)
        #expect(bytes.withUnsafeBytes { AccountCodec.decode($0, rules: .builtIn) }?.contributions == ["root.chat.x": .none])
    }

    @Test func aStoredSettingTheRulesRejectIsRefusedLikeAMark() throws {
        let json = #"{"clock":0,"marks":{},"devices":{},"settings":{"contribute":{"top.chat":"none"}}}"#
        #expect(throws: StateFile.Failure.self) { try StateFile.decodeAccount(json, at: "/accounts/u", file: "t", rules: .builtIn) }
        let bad = #"{"clock":0,"marks":{},"devices":{},"settings":{"contribute":{"root.chat":"mute"}}}"#
        #expect(throws: StateFile.Failure.self) { try StateFile.decodeAccount(bad, at: "/accounts/u", file: "t", rules: .builtIn) }
    }
}
