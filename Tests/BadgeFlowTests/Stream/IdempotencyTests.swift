import Testing

@testable import BadgeFlow

/// Events with an `id`: a duplicate changes nothing, the last 256 ids of each account are
/// kept, with the state too.
@Suite struct IdempotencyTests {
    private func lines(_ session: FilterSession) -> [String] {
        String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private func push(_ id: String, device: String = "phone", at: Int? = nil) -> String {
        let time = at.map { #","at":\#($0)"# } ?? ""
        return
            #"{"op":"push","account":"u","device":"\#(device)","id":"\#(id)"\#(time),"payload":{"aps":{"alert":"m","thread-id":"c"}}}"#
    }

    @Test func aDuplicateChangesNothingAndSendsNothing() throws {
        var session = FilterSession(rules: .builtIn, stamp: true)
        session.feed(push("m1", at: 100))
        session.feed(#"{"op":"login","account":"u","device":"ipad","at":110}"#)
        session.feed(push("m1", device: "watch", at: 500))
        let out = lines(session)
        #expect(
            out[2]
                == #"{"seq":3,"op":"push","device":"watch","account":"u","kind":"alert","rule":"chat","path":"root.chat.c","duplicate":true,"changes":[],"icon":1}"#
        )
        let account = try #require(try session.stream.account("u"))
        // No device joined, no clock moved, counted once.
        #expect(account.devices.keys.sorted() == ["ipad", "phone"])
        #expect(account.clock == 110)
        #expect(account.tree.total == 1)
    }

    @Test func theLast256IdsAreKeptAndADuplicateKeepsItsPlace() throws {
        var session = FilterSession(rules: .builtIn)
        session.feed(push("first"))
        for i in 0..<255 { session.feed(#"{"op":"tick","account":"u","device":"phone","id":"t\#(i)"}"#) }
        // Still remembered (256 ids); the duplicate does not make "first" the newest.
        session.feed(push("first"))
        session.feed(#"{"op":"tick","account":"u","device":"phone","id":"one-more"}"#)
        session.feed(push("first"))
        let out = lines(session)
        #expect(out[256].contains(#""duplicate":true"#))
        #expect(!out[258].contains(#""duplicate""#) && out[258].contains(#""icon":2"#))
        #expect(try #require(try session.stream.account("u")).ids.list.count == RecentIDs.limit)
    }

    @Test func idsAreKeptPerAccount() {
        var session = FilterSession(rules: .builtIn)
        session.feed(push("m1"))
        session.feed(#"{"op":"push","account":"v","device":"phone","id":"m1","payload":{"aps":{"alert":"m"}}}"#)
        #expect(!lines(session)[1].contains("duplicate"))
    }

    @Test(arguments: [
        (#"1"#, "wrong-type"), (#"null"#, "wrong-type"), (#"["a"]"#, "wrong-type"), (#""""#, "invalid-value"),
        ("\"" + String(repeating: "x", count: 129) + "\"", "invalid-value"),
    ])
    func anIdIsAStringOf1To128Bytes(_ id: String, _ code: String) {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"tick","account":"u","device":"p","id":\#(id)}"#)
        let out = lines(session)
        #expect(out[0].contains(#""code":"\#(code)""#) && out[0].hasSuffix(#""at":"/id"}}"#), "\(out)")
    }

    @Test func aRejectedLineRemembersNoId() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"clear","account":"u","device":"p","id":"x","path":"root..a"}"#)
        session.feed(#"{"op":"clear","account":"u","device":"p","id":"x","path":"root.a"}"#)
        #expect(!lines(session)[1].contains("duplicate"))
    }

    @Test func idsGoThroughBothStateFormsAndTheCompactForm() throws {
        var account = Account(rules: .builtIn)
        account.ids = RecentIDs((0..<300).map { "id\($0)" })
        #expect(account.ids.list.first == "id44" && account.ids.list.count == 256)
        for compact in [false, true] {
            let json = StateFile.encodeAccount(account, compact: compact)
            let back = try StateFile.decodeAccount(json, at: "/accounts/u", file: "t.json", rules: .builtIn)
            #expect(back.ids == account.ids)
        }
        var bytes: [UInt8] = []
        AccountCodec.encode(account, into: &bytes)
        let decoded = bytes.withUnsafeBytes { AccountCodec.decode($0, rules: .builtIn) }
        #expect(decoded?.ids == account.ids)
        // An account without ids writes no `ids` key.
        #expect(!StateFile.encodeAccount(Account(rules: .builtIn)).contains(#""ids""#))
    }

    @Test(arguments: [#""ids":"x""#, #""ids":[1]"#, #""ids":[""]"#])
    func aBadIdListInAStateIsAnErrorAtItsPointer(_ ids: String) throws {
        let text = #"{"clock":0,"marks":{},"devices":{},\#(ids)}"#
        var thrown: StateFile.Failure?
        do { _ = try StateFile.decodeAccount(text, at: "/accounts/u", file: "t.json", rules: .builtIn) } catch { thrown = error }
        #expect(thrown?.at.hasPrefix("/accounts/u/ids") == true, "\(String(describing: thrown))")
    }
}
