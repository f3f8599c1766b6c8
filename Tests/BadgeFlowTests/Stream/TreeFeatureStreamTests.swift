import BadgeFlowTestSupport
import Testing
@testable import BadgeFlow

private let rulesText = #"""
    {
      "version": 1,
      "contribute": { "root.chat.muted": "none", "root.chat.family": "dot" },
      "rules": [
        { "name": "chat", "match": { "/type": "chat" }, "path": "root.chat.{/aps/thread-id}", "action": "increment" },
        { "name": "mention", "match": { "/type": "mention" }, "path": "root.chat.{/aps/thread-id}", "action": { "increment": 2 } },
        { "name": "promo", "match": { "/type": "promo" }, "path": "root.promo.{/campaign}", "action": "dot", "ttl": "/ttl" },
        { "name": "flash", "match": { "/type": "flash" }, "path": "root.flash", "action": { "increment": 1 }, "ttl": 10 },
        { "name": "feature", "match": { "/type": "feature" }, "path": "root.me.new", "action": "dot", "once": "v{/version}" }
      ]
    }
    """#

private func rules() throws -> RuleSet { try RuleSet.parse(rulesText) }

private func run(_ lines: [String], stream: BadgeStream? = nil) throws -> (lines: [String], stream: BadgeStream) {
    var s = try stream.map { FilterSession(stream: $0) } ?? FilterSession(rules: rules())
    for line in lines { s.feed(line) }
    let text = String(decoding: s.output.bytes, as: UTF8.self)
    return (text.split(separator: "\n").map(String.init), s.stream)
}

private func chat(_ thread: String, _ type: String = "chat", at: Int? = nil) -> String {
    let time = at.map { #""at":\#($0),"# } ?? ""
    return #"{"op":"push",\#(time)"payload":{"aps":{"alert":"x","thread-id":"\#(thread)"},"type":"\#(type)"}}"#
}

/// Saves `stream` to a temporary file and loads it back, as a restart would.
private func restart(_ stream: BadgeStream) throws -> BadgeStream {
    let folder = try TemporaryFolder()
    let file = folder.file("state.json")
    try StateFile.save(stream, to: file)
    let loaded = try StateFile.load(file, rules: rules())
    #expect(try StateFile.text(loaded) == StateFile.text(stream))
    return loaded
}

@Suite struct TreeFeatureStreamTests {
    @Test func rulesKeysAreCheckedAtLoad() {
        let bad = [
            (#"{"contribute":{"root.a":"half"}}"#, "/contribute/root.a"),
            (#"{"contribute":{"other.a":"dot"}}"#, "/contribute/other.a"),
            (#"{"rules":[{"name":"a","path":"root.a","action":"dot","ttl":-1}]}"#, "/rules/0/ttl"),
            (#"{"rules":[{"name":"a","path":"root.a","action":"dot","ttl":"x"}]}"#, "/rules/0/ttl"),
            (#"{"rules":[{"name":"a","path":"root.a","action":"dot","once":5}]}"#, "/rules/0/once"),
            (#"{"rules":[{"name":"a","path":"root.a","action":"dot","once":"v{x}"}]}"#, "/rules/0/once"),
        ]
        for (text, at) in bad {
            #expect(throws: RulesError.self) { try RuleSet.parse(text) }
            do { _ = try RuleSet.parse(text) } catch { #expect(error.at == at, "\(text)") }
        }
    }

    @Test func aMutedChatClearedProducesNoDecrement() throws {
        let out = try run([chat("alice"), chat("muted"), chat("muted"), #"{"op":"clear","path":"root.chat.muted"}"#]).lines
        #expect(out[1].contains(#""changes":[{"path":"root.chat.muted","count":1,"show":true,"display":"1"}],"icon":1"#))
        #expect(
            out[3]
                == #"{"seq":4,"op":"clear","device":"","path":"root.chat.muted","changes":[{"path":"root.chat.muted","count":0,"show":false,"display":"hidden"}],"icon":1}"#
        )
    }

    @Test func aDotContributingChatShowsTheTabWithoutCountingIt() throws {
        let out = try run([chat("family"), chat("family"), #"{"op":"clear","path":"root.chat.family"}"#]).lines
        #expect(out[0].contains(#"{"path":"root.chat","count":0,"show":true,"display":"dot"}"#))
        #expect(out[1].hasSuffix(#""icon":0}"#))
        #expect(!out[2].contains("decrement"))
    }

    @Test func twoMarksExpireAtOnceBeforeTheEvent() throws {
        let out = try run([
            #"{"op":"set","path":"root.a","count":2,"ttl":60,"at":100}"#,
            #"{"op":"set","path":"root.b","ttl":30,"at":130}"#,
            chat("alice", at: 160),
        ]).lines
        #expect(
            out[2]
                == #"{"seq":3,"op":"push","device":"","kind":"alert","rule":"chat","path":"root.chat.alice","expired":["root.a","root.b"],"changes":[{"path":"root.a","count":0,"show":false,"display":"hidden"},{"path":"root.b","count":0,"show":false,"display":"hidden"},{"path":"root","count":0,"show":false,"display":"hidden"},{"path":"root.chat.alice","count":1,"show":true,"display":"1"},{"path":"root.chat","count":1,"show":true,"display":"1"},{"path":"root","count":1,"show":true,"display":"1"}],"decrement":{"by":2,"paths":["root.a","root.b"]},"icon":1}"#
        )
    }

    @Test func aMarkExpiresExactlyAtTheEventTimeAndNotBefore() throws {
        let out = try run([
            #"{"op":"push","at":1000,"payload":{"aps":{"content-available":1},"type":"flash"}}"#,
            #"{"op":"tick","at":1009.5}"#,
            #"{"op":"tick","at":1010}"#,
        ]).lines
        #expect(!out[1].contains("expired"))
        #expect(out[2].contains(#""op":"tick","device":"","expired":["root.flash"],"changes":["#))
        #expect(out[2].contains(#""decrement":{"by":1,"paths":["root.flash"]}"#))
    }

    @Test func aTtlFromThePayloadAndSettingAgainWithoutOne() throws {
        let out = try run([
            #"{"op":"push","at":0,"payload":{"aps":{"content-available":1},"type":"promo","campaign":"sale","ttl":50}}"#,
            #"{"op":"push","at":10,"payload":{"aps":{"content-available":1},"type":"promo","campaign":"sale"}}"#,
            #"{"op":"set","path":"root.x","ttl":5,"at":20}"#,
            #"{"op":"set","path":"root.x","at":21}"#,
            #"{"op":"tick","at":100}"#,
        ]).lines
        // Without its ttl the rule's push is an error line, so the first expiry stands; root.x,
        // set again without a ttl, no longer expires.
        #expect(out[1].contains(#""error":{"code":"missing-field""#))
        #expect(out[4].contains(#""expired":["root.promo.sale"],"#))
    }

    @Test func anExpiryOutlivesARestart() throws {
        let first = try run([#"{"op":"set","path":"root.promo","ttl":3600,"at":1000}"#])
        let resumed = try run([#"{"op":"tick","at":4599}"#, #"{"op":"tick","at":4600}"#], stream: restart(first.stream))
        #expect(!resumed.lines[0].contains("expired"))
        #expect(resumed.lines[1].contains(#""expired":["root.promo"]"#))
    }

    @Test func aOnceTokenOutlivesARestartAndANewTokenShowsAgain() throws {
        func feature(_ v: String) -> String {
            #"{"op":"push","payload":{"aps":{"content-available":1},"type":"feature","version":"\#(v)"}}"#
        }
        let first = try run([feature("3.2"), #"{"op":"clear","path":"root.me.new"}"#])
        #expect(first.lines[0].contains(#"{"path":"root.me.new","count":0,"show":true,"display":"dot"}"#))
        let resumed = try run([feature("3.2"), feature("3.3")], stream: restart(first.stream))
        #expect(resumed.lines[0].contains(#""changes":[],"#))
        #expect(resumed.lines[1].contains(#"{"path":"root.me.new","count":0,"show":true,"display":"dot"}"#))
        // A set envelope may carry a token too.
        let more = try run(
            [#"{"op":"clear","path":"root.me.new"}"#, #"{"op":"set","path":"root.me.new","once":"v3.3"}"#],
            stream: resumed.stream)
        #expect(more.lines[1].contains(#""changes":[],"#))
    }

    @Test func explainAfterIncrementsByTwoRules() throws {
        let out = try run([
            chat("alice", at: 10), chat("alice", "mention", at: 20), chat("bob", at: 30), chat("muted", at: 40),
            #"{"op":"set","path":"root.news","ttl":100,"at":50}"#,
            #"{"op":"explain","path":"root"}"#,
        ])
        #expect(
            out.lines[5]
                == #"{"seq":6,"op":"explain","device":"","path":"root","changes":[],"icon":4,"explain":[{"path":"root.chat.alice","count":3,"seq":2,"rule":"mention","at":20,"expires":null},{"path":"root.chat.bob","count":1,"seq":3,"rule":"chat","at":30,"expires":null},{"path":"root.news","count":0,"seq":5,"rule":"set","at":50,"expires":150}]}"#
        )
        // The values behind the line, and explain after a restart.
        let records = try #require(out.stream.accounts[""]).tree.explain("root.chat")
        #expect(records.map(\.source?.origin) == ["mention", "chat"])
        let again = try run([#"{"op":"explain","path":"root.chat.bob"}"#], stream: restart(out.stream))
        #expect(again.lines[0].hasSuffix(#""explain":[{"path":"root.chat.bob","count":1,"seq":3,"rule":"chat","at":30,"expires":null}]}"#))
    }

    @Test func explainNeedsAPath() throws {
        let out = try run([
            #"{"op":"explain"}"#, #"{"op":"explain","path":"other.a"}"#, #"{"op":"explain","path":"root..a"}"#,
            #"{"op":"explain","path":"root.none"}"#,
        ]).lines
        #expect(out[0].contains(#""code":"missing-field""#))
        #expect(out[1].contains(#""code":"invalid-path""#) && out[1].contains(#""at":"/path""#))
        #expect(out[2].contains(#""code":"invalid-path""#))
        #expect(out[3].hasSuffix(#""explain":[]}"#))
    }
}

@Suite struct TreeFeatureDefinitionTests {
    @Test func aDefinitionCarriesContributeTtlAndOnce() throws {
        var definition = RuleSet.Definition(rules: [
            .init(name: "promo", path: "root.promo", action: .dot, ttl: .literal(5), once: "v{/v}")
        ])
        definition.contribute = [("root.chat.muted", .none)]
        let rules = try RuleSet(definition)
        #expect(rules.tree.contribute == ["root.chat.muted": Contribution.none])
        #expect(rules.rules[0].ttl == .literal(5))
        #expect(rules.rules[0].once?.description == "v{/v}")
        var bad = definition
        bad.rules[0].ttl = .literal(-1)
        #expect(throws: RulesError.self) { try RuleSet(bad) }
    }
}
