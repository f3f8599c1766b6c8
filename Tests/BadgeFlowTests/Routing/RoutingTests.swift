import Testing
@testable import BadgeFlow

/// Routes `line` through a rules file made of `rules` (JSON array text) and returns the event.
private func route(_ rules: String, _ line: String, extra: String = "") throws -> Event {
    let set = try RuleSet.parse(#"{"rules":"# + rules + extra + "}")
    switch LineAnalyzer(rules: set).analyze(line) {
    case .event(let e): return e
    case .rejected(let d): throw d
    case .blank: throw Diagnostic(.error, .missingField, "blank", at: "")
    }
}

/// The diagnostic `line` is rejected with under `rules`.
private func rejection(_ rules: String, _ line: String) throws -> Diagnostic? {
    let set = try RuleSet.parse(#"{"rules":"# + rules + "}")
    if case .rejected(let d) = LineAnalyzer(rules: set).analyze(line) { return d }
    return nil
}

/// One rule named `hit` with `match`, path `root.hit`, action dot.
private func matching(_ match: String) -> String {
    #"[{"name":"hit","match":"# + match + #","path":"root.hit","action":"dot"}]"#
}

@Suite struct RoutingTests {
    // MARK: - Match forms

    @Test(arguments: [
        // (match, payload, matches?)
        (#"{"/type":"chat"}"#, #"{"aps":{},"type":"chat"}"#, true),
        (#"{"/type":"chat"}"#, #"{"aps":{},"type":"chats"}"#, false),
        (#"{"/type":"chat"}"#, #"{"aps":{}}"#, false),
        // Literals are type-strict: 1 is not 1.0, "1" or true.
        (#"{"/n":1}"#, #"{"aps":{},"n":1}"#, true),
        (#"{"/n":1}"#, #"{"aps":{},"n":1.0}"#, false),
        (#"{"/n":1}"#, #"{"aps":{},"n":"1"}"#, false),
        (#"{"/n":1}"#, #"{"aps":{},"n":true}"#, false),
        (#"{"/n":1.5}"#, #"{"aps":{},"n":1.5}"#, true),
        (#"{"/b":true}"#, #"{"aps":{},"b":true}"#, true),
        (#"{"/b":true}"#, #"{"aps":{},"b":1}"#, false),
        (#"{"/z":null}"#, #"{"aps":{},"z":null}"#, true),
        (#"{"/z":null}"#, #"{"aps":{}}"#, false),
        // An object literal is matched through `in` (a bare object must be a test).
        (#"{"/o":{"in":[{"a":[1,2]}]}}"#, #"{"aps":{},"o":{"a":[1,2]}}"#, true),
        (#"{"/o":{"in":[{"a":[1,2]}]}}"#, #"{"aps":{},"o":{"a":[2,1]}}"#, false),
        (#"{"/l":[1,"x"]}"#, #"{"aps":{},"l":[1,"x"]}"#, true),
        // A clamped integer (beyond 64 bits, so ±(2^63−1) itself too) never equals a literal.
        (#"{"/n":9223372036854775807}"#, #"{"aps":{},"n":99999999999999999999}"#, false),
        (#"{"/n":9223372036854775806}"#, #"{"aps":{},"n":9223372036854775806}"#, true),
        // exists
        (#"{"/promo":{"exists":true}}"#, #"{"aps":{},"promo":{}}"#, true),
        (#"{"/promo":{"exists":true}}"#, #"{"aps":{},"promo":null}"#, true),
        (#"{"/promo":{"exists":true}}"#, #"{"aps":{}}"#, false),
        (#"{"/promo":{"exists":false}}"#, #"{"aps":{}}"#, true),
        (#"{"/promo":{"exists":false}}"#, #"{"aps":{},"promo":1}"#, false),
        // in
        (#"{"/aps/category":{"in":["news","sport"]}}"#, #"{"aps":{"category":"sport"}}"#, true),
        (#"{"/aps/category":{"in":["news","sport"]}}"#, #"{"aps":{"category":"chat"}}"#, false),
        (#"{"/aps/category":{"in":["news","sport"]}}"#, #"{"aps":{}}"#, false),
        (#"{"/n":{"in":[1,"1"]}}"#, #"{"aps":{},"n":"1"}"#, true),
        (#"{"/n":{"in":[]}}"#, #"{"aps":{},"n":1}"#, false),
        // prefix
        (#"{"/aps/category":{"prefix":"chat-"}}"#, #"{"aps":{"category":"chat-group"}}"#, true),
        (#"{"/aps/category":{"prefix":"chat-"}}"#, #"{"aps":{"category":"chat"}}"#, false),
        (#"{"/c":{"prefix":"1"}}"#, #"{"aps":{},"c":1}"#, false),
        (#"{"/t":{"prefix":"日本"}}"#, #"{"aps":{},"t":"日本語"}"#, true),
        (#"{"/t":{"prefix":""}}"#, #"{"aps":{},"t":""}"#, true),
        // Pointer escapes and array indices.
        (#"{"/a~1b/c~0d":1}"#, #"{"aps":{},"a/b":{"c~d":1}}"#, true),
        (#"{"/list/1":"y"}"#, #"{"aps":{},"list":["x","y"]}"#, true),
        (#"{"/list/2":"y"}"#, #"{"aps":{},"list":["x","y"]}"#, false),
        // Every entry must hold; an empty match always holds.
        (#"{"/type":"unread","/aps/content-available":1}"#, #"{"aps":{"content-available":1},"type":"unread"}"#, true),
        (#"{"/type":"unread","/aps/content-available":1}"#, #"{"aps":{"content-available":1},"type":"chat"}"#, false),
        (#"{}"#, #"{"aps":{}}"#, true),
    ])
    func matchForms(_ match: String, _ payload: String, _ expected: Bool) throws {
        let event = try route(matching(match), payload)
        #expect((event.rule == "hit") == expected, "\(match) on \(payload)")
        #expect((event.path == "root.hit") == expected)
    }

    @Test func noRuleMatchedMeansNoRuleAndNoPath() throws {
        let event = try route(matching(#"{"/type":"chat"}"#), #"{"aps":{"alert":"x"}}"#)
        #expect(event.rule == nil)
        #expect(event.path == nil)
        #expect(event.action == .ignore)
        #expect(event.kind == .alert)
    }

    @Test func theFirstMatchingRuleWins() throws {
        let rules = """
            [{"name":"first","match":{"/t":"a"},"path":"root.first","action":"dot"},
             {"name":"second","match":{"/t":"a"},"path":"root.second","action":"increment"},
             {"name":"any","path":"root.any","action":"dot"}]
            """
        #expect(try route(rules, #"{"aps":{},"t":"a"}"#).rule == "first")
        #expect(try route(rules, #"{"aps":{},"t":"b"}"#).rule == "any")
    }

    @Test func aRuleWhoseTemplateValueIsMissingDoesNotMatch() throws {
        let rules = """
            [{"name":"chat","path":"root.chat.{/thread}","action":"increment"},
             {"name":"fallback","path":"root.other","action":"dot"}]
            """
        let event = try route(rules, #"{"aps":{"alert":"x"}}"#)
        #expect(event.rule == "fallback")
        let nullValue = try route(rules, #"{"aps":{"alert":"x"},"thread":null}"#)
        #expect(nullValue.rule == "fallback")
    }

    // MARK: - Path templates

    @Test(arguments: [
        ("alice", "root.chat.alice"),
        ("a.b", "root.chat.a%2Eb"),
        ("50%", "root.chat.50%25"),
        ("%2E", "root.chat.%252E"),
        ("tab\tline\nend", "root.chat.tab%09line%0Aend"),
        ("\u{7F}", "root.chat.%7F"),
        ("日本", "root.chat.日本"),
        ("with space", "root.chat.with space"),
    ])
    func templateValuesAreEscapedIntoOneSegment(_ value: String, _ path: String) throws {
        var w = JSONWriter()
        w.string(value)
        let line = #"{"aps":{"thread-id":"# + String(decoding: w.bytes, as: UTF8.self) + "}}"
        let event = try route(#"[{"name":"chat","path":"root.chat.{/aps/thread-id}","action":"increment"}]"#, line)
        #expect(event.path == path)
        // The escaped value is one segment and comes back unescaped.
        let segment = try #require(event.path?.split(separator: ".").last)
        #expect(BadgePath.unescapeSegment(String(segment)) == value)
    }

    @Test func integersAreWrittenInDecimalAndSeveralHolesFill() throws {
        let event = try route(
            #"[{"name":"r","path":"root.{/g}.{/id}-x","action":"dot"}]"#,
            #"{"aps":{},"g":"group","id":-42}"#)
        #expect(event.path == "root.group.-42-x")
    }

    @Test func anEmptyStringValueIsAnInvalidPath() throws {
        let d = try #require(
            try rejection(
                #"[{"name":"chat","path":"root.chat.{/aps/thread-id}","action":"increment"}]"#,
                #"{"aps":{"thread-id":""}}"#))
        #expect(d.code == .invalidPath)
        #expect(d.at == "/aps/thread-id")
    }

    @Test(arguments: [#"1.5"#, #"true"#, #"{}"#, #"[]"#, #"99999999999999999999"#])
    func aValueOfTheWrongTypeIsWrongType(_ value: String) throws {
        let d = try #require(
            try rejection(
                #"[{"name":"r","path":"root.{/v}","action":"dot"}]"#,
                #"{"aps":{},"v":"# + value + "}"))
        #expect(d.code == .wrongType)
        #expect(d.at == "/v")
    }

    @Test func pointersInEnvelopesAreIntoTheLine() throws {
        let d = try #require(
            try rejection(
                #"[{"name":"r","path":"root.{/v}","action":"dot"}]"#,
                #"{"op":"push","payload":{"aps":{},"v":true}}"#))
        #expect(d.at == "/payload/v")
    }

    // MARK: - Actions

    @Test(arguments: [
        (#""dot""#, RoutingRule.Action.dot),
        (#""increment""#, .increment(.literal(1))),
        (#"{"increment":5}"#, .increment(.literal(5))),
        (#"{"increment":-2}"#, .increment(.literal(-2))),
        (#"{"increment":"/n"}"#, .increment(.literal(7))),
        (#"{"set":3}"#, .set(.literal(3))),
        (#"{"set":0}"#, .set(.literal(0))),
        (#"{"set":"/n"}"#, .set(.literal(7))),
        (#""clear""#, .clear(force: false)),
        (#"{"clear":{"force":true}}"#, .clear(force: true)),
        (#""ignore""#, .ignore),
    ])
    func actionsArriveResolved(_ action: String, _ expected: RoutingRule.Action) throws {
        let event = try route(#"[{"name":"r","path":"root.a","action":"# + action + "}]", #"{"aps":{},"n":7}"#)
        #expect(event.rule == "r")
        #expect(event.action == expected)
    }

    @Test(arguments: [
        // (action, payload, code, pointer)
        (#"{"set":"/n"}"#, #"{"aps":{}}"#, Diagnostic.Code.missingField, "/n"),
        (#"{"set":"/n"}"#, #"{"aps":{},"n":-1}"#, .wrongType, "/n"),
        (#"{"set":"/n"}"#, #"{"aps":{},"n":"3"}"#, .wrongType, "/n"),
        (#"{"set":"/n"}"#, #"{"aps":{},"n":2147483648}"#, .wrongType, "/n"),
        (#"{"increment":"/n"}"#, #"{"aps":{},"n":1.5}"#, .wrongType, "/n"),
        (#"{"increment":"/n"}"#, #"{"aps":{},"n":99999999999999999999}"#, .wrongType, "/n"),
    ])
    func aBadPointerAmountRejectsTheLine(_ action: String, _ payload: String, _ code: Diagnostic.Code, _ at: String) throws {
        let d = try #require(try rejection(#"[{"name":"r","path":"root.a","action":"# + action + "}]", payload))
        #expect(d.code == code)
        #expect(d.at == at)
    }

    @Test func actionsChangeTheTreeAsTheSpecSays() throws {
        let rules = try RuleSet.parse(
            """
            {"rules":[
              {"name":"dot","match":{"/a":"dot"},"path":"root.x","action":"dot"},
              {"name":"inc","match":{"/a":"inc"},"path":"root.x","action":{"increment":"/n"}},
              {"name":"set","match":{"/a":"set"},"path":"root.x","action":{"set":"/n"}},
              {"name":"clear","match":{"/a":"clear"},"path":"root.x","action":"clear"},
              {"name":"force","match":{"/a":"force"},"path":"root","action":{"clear":{"force":true}}},
              {"name":"ignore","match":{"/a":"ignore"},"path":"root.x","action":"ignore"}
            ]}
            """)
        var session = FilterSession(rules: rules)
        func feed(_ a: String, _ n: Int = 0) -> BadgeTree {
            session.feed(#"{"aps":{},"a":""# + a + #"","n":\#(n)}"#)
            return session.stream.accounts[""]?.tree ?? BadgeTree()
        }
        #expect(feed("dot").mark(of: "root.x") == .dot)
        #expect(feed("inc", 4).mark(of: "root.x") == .count(4))
        #expect(feed("inc", 2).total == 6)
        #expect(feed("ignore").total == 6)
        #expect(feed("set", 2).mark(of: "root.x") == .count(2))
        #expect(feed("set", 0).mark(of: "root.x") == nil)  // set 0 clears
        #expect(feed("set", 3).total == 3)
        #expect(feed("clear").mark(of: "root.x") == nil)
        _ = feed("set", 5)
        _ = feed("dot")
        #expect(feed("force").total == 0)
        #expect(session.stream.accounts[""]?.tree.state(of: "root").show == false)
        #expect(session.rejected == 0)
    }
}
