import Testing
@testable import BadgeFlow

/// A rules file holding one rule, with `rule` spliced in as its JSON text.
private func oneRule(_ rule: String) -> String { #"{"rules":["# + rule + "]}" }

@Suite struct RuleSetTests {
    // MARK: - Faults: each is rejected at load with the pointer of the faulty value

    static let faults: [(text: String, pointer: String, says: String)] = [
        ("not json", "", "not valid JSON"),
        ("[]", "", "must be a JSON object"),
        (#"{"rulez":[]}"#, "/rulez", "unknown key"),
        (#"{"version":2}"#, "/version", "only version 1"),
        (#"{"root":"a.b"}"#, "/root", "one path segment"),
        (#"{"root":""}"#, "/root", "one path segment"),
        (#"{"icon":"badge"}"#, "/icon", "\"tree\" or \"payload\""),
        (#"{"maxDisplay":0}"#, "/maxDisplay", "from 1 to 1000000"),
        (#"{"maxDisplay":9.5}"#, "/maxDisplay", "integer"),
        (#"{"display":[]}"#, "/display", "must be an object"),
        (#"{"display":{"root..a":"dot"}}"#, "/display/root..a", "not a badge path"),
        (#"{"display":{"other.a":"dot"}}"#, "/display/other.a", "does not start with the root"),
        (#"{"display":{"root.a":"stars"}}"#, "/display/root.a", "display mode"),
        (#"{"display":{"root.a":{"custom":""}}}"#, "/display/root.a/custom", "non-empty name"),
        (#"{"display":{"a/b~c":"dot"}}"#, "/display/a~1b~0c", "does not start with the root"),
        (
            oneRule(#"{"name":"a","match":{"/o":{"a":1}},"path":"root","action":"dot"}"#),
            "/rules/0/match/~1o", "match test object"
        ),
        (#"{"rules":{}}"#, "/rules", "must be an array"),
        (oneRule("3"), "/rules/0", "must be an object"),
        (oneRule(#"{"name":"a","when":{},"path":"root","action":"dot"}"#), "/rules/0/when", "unknown rule key"),
        (oneRule(#"{"match":{},"path":"root","action":"dot"}"#), "/rules/0/name", "non-empty string name"),
        (oneRule(#"{"name":"","path":"root","action":"dot"}"#), "/rules/0/name", "non-empty string name"),
        (
            #"{"rules":[{"name":"a","path":"root","action":"dot"},{"name":"a","path":"root","action":"dot"}]}"#,
            "/rules/1/name", "used twice"
        ),
        (oneRule(#"{"name":"a","match":[],"path":"root","action":"dot"}"#), "/rules/0/match", "must be an object"),
        (
            oneRule(#"{"name":"a","match":{"type":"chat"},"path":"root","action":"dot"}"#),
            "/rules/0/match/type", "not a JSON Pointer"
        ),
        (
            oneRule(#"{"name":"a","match":{"/t":{"exist":true}},"path":"root","action":"dot"}"#),
            "/rules/0/match/~1t", "match test object"
        ),
        (
            oneRule(#"{"name":"a","match":{"/t":{"exists":1}},"path":"root","action":"dot"}"#),
            "/rules/0/match/~1t/exists", "a boolean"
        ),
        (
            oneRule(#"{"name":"a","match":{"/t":{"in":"x"}},"path":"root","action":"dot"}"#),
            "/rules/0/match/~1t/in", "an array"
        ),
        (
            oneRule(#"{"name":"a","match":{"/t":{"prefix":1}},"path":"root","action":"dot"}"#),
            "/rules/0/match/~1t/prefix", "a string"
        ),
        (oneRule(#"{"name":"a","action":"dot"}"#), "/rules/0/path", "needs a path template"),
        (oneRule(#"{"name":"a","path":5,"action":"dot"}"#), "/rules/0/path", "needs a path template"),
        (oneRule(#"{"name":"a","path":"root.{/t","action":"dot"}"#), "/rules/0/path", "without a closing"),
        (oneRule(#"{"name":"a","path":"root.{t}","action":"dot"}"#), "/rules/0/path", "not a JSON Pointer"),
        (oneRule(#"{"name":"a","path":"root.{}","action":"dot"}"#), "/rules/0/path", "not a JSON Pointer"),
        (oneRule(#"{"name":"a","path":"other.{/t}","action":"dot"}"#), "/rules/0/path", "does not start with the root"),
        (oneRule(#"{"name":"a","path":"root..{/t}","action":"dot"}"#), "/rules/0/path", "not a badge path"),
        (oneRule(#"{"name":"a","path":"root"}"#), "/rules/0/action", "needs an action"),
        (oneRule(#"{"name":"a","path":"root","action":"bump"}"#), "/rules/0/action", "unknown action"),
        (oneRule(#"{"name":"a","path":"root","action":{"increment":1,"set":2}}"#), "/rules/0/action", "unknown action"),
        (
            oneRule(#"{"name":"a","path":"root","action":{"increment":"unread"}}"#),
            "/rules/0/action/increment", "not a JSON Pointer"
        ),
        (
            oneRule(#"{"name":"a","path":"root","action":{"increment":1.5}}"#),
            "/rules/0/action/increment", "an integer or a JSON Pointer"
        ),
        (
            oneRule(#"{"name":"a","path":"root","action":{"increment":9999999999}}"#),
            "/rules/0/action/increment", "an integer or a JSON Pointer"
        ),
        (oneRule(#"{"name":"a","path":"root","action":{"set":-1}}"#), "/rules/0/action/set", "0 or more"),
        (oneRule(#"{"name":"a","path":"root","action":{"set":""}}"#), "/rules/0/action/set", "not a JSON Pointer"),
        (oneRule(#"{"name":"a","path":"root","action":{"clear":{"force":1}}}"#), "/rules/0/action/clear", "force"),
        (oneRule(#"{"name":"a","path":"root","action":{"clear":true}}"#), "/rules/0/action/clear", "force"),
        (#"{"sync":[]}"#, "/sync", "must be an object"),
        (#"{"sync":{"pages":"home"}}"#, "/sync/pages", "array of page names"),
        (#"{"sync":{"pages":["home",1]}}"#, "/sync/pages/1", "must be a string"),
        (#"{"sync":{"interval":0}}"#, "/sync/interval", "more than 0"),
        (#"{"sync":{"away":"60"}}"#, "/sync/away", "number of seconds"),
        (#"{"sync":{"every":60}}"#, "/sync/every", "unknown sync key"),
    ]

    @Test(arguments: faults)
    func aFaultIsRejectedWithItsPointer(_ fault: (text: String, pointer: String, says: String)) {
        #expect {
            _ = try RuleSet.parse(fault.text, file: "rules.json")
        } throws: { error in
            guard let e = error as? RulesError else { return false }
            return e.file == "rules.json" && e.at == fault.pointer && e.message.contains(fault.says)
        }
    }

    @Test func theErrorNamesFilePointerAndReason() {
        let error = #expect(throws: RulesError.self) {
            _ = try RuleSet.parse(oneRule(#"{"name":"a","path":"root","action":"bump"}"#), file: "my/rules.json")
        }
        #expect(error?.description.hasPrefix(#"my/rules.json: /rules/0/action: unknown action "bump""#) == true)
    }

    @Test func aMissingFileIsAnErrorNamingIt() {
        let error = #expect(throws: RulesError.self) { _ = try RuleSet.load(file: "/nonexistent/rules.json") }
        #expect(error?.file == "/nonexistent/rules.json")
        #expect(error?.message.contains("cannot read") == true)
    }

    // MARK: - Settings

    @Test func anEmptyObjectGivesTheDefaults() throws {
        let rules = try RuleSet.parse("{}")
        #expect(rules.tree.root == "root")
        #expect(rules.tree.maxDisplay == 99)
        #expect(rules.icon == .tree)
        #expect(rules.rules.isEmpty)
        #expect(rules.sync == RuleSet.Sync(pages: ["home", "mine"], interval: 60, away: 60))
    }

    @Test func everySettingIsRead() throws {
        let rules = try RuleSet.parse(
            """
            {"version":1,"root":"app","icon":"payload","maxDisplay":9,
             "display":{"app.news":"dot","app.promo":{"custom":"new"},"app.chat":"number"},
             "rules":[],
             "sync":{"pages":["feed"],"interval":30,"away":5.5}}
            """)
        #expect(rules.tree.root == "app")
        #expect(rules.icon == .payload)
        #expect(rules.tree.maxDisplay == 9)
        #expect(rules.tree.display == ["app.news": .dot, "app.promo": .custom("new"), "app.chat": .number])
        #expect(rules.sync == RuleSet.Sync(pages: ["feed"], interval: 30, away: 5.5))
    }

    @Test func rulesKeepTheirOrderAndCompiledActions() throws {
        let rules = try RuleSet.parse(
            """
            {"rules":[
              {"name":"d","path":"root.a","action":"dot"},
              {"name":"i","path":"root.a","action":"increment"},
              {"name":"i3","path":"root.a","action":{"increment":-3}},
              {"name":"ip","path":"root.a","action":{"increment":"/n"}},
              {"name":"s","path":"root.a","action":{"set":0}},
              {"name":"sp","path":"root.a","action":{"set":"/unread"}},
              {"name":"c","path":"root.a","action":"clear"},
              {"name":"cf","path":"root.a","action":{"clear":{"force":true}}},
              {"name":"cn","path":"root.a","action":{"clear":{}}},
              {"name":"x","path":"root.a","action":"ignore"}
            ]}
            """)
        #expect(rules.rules.map(\.name) == ["d", "i", "i3", "ip", "s", "sp", "c", "cf", "cn", "x"])
        let pointer = { (s: String) in RoutingRule.Amount.pointer(try #require(JSONPointer(s))) }
        #expect(
            try rules.rules.map(\.action) == [
                .dot, .increment(.literal(1)), .increment(.literal(-3)), .increment(pointer("/n")),
                .set(.literal(0)), .set(pointer("/unread")), .clear(force: false), .clear(force: true),
                .clear(force: false), .ignore,
            ])
    }

    // MARK: - The built-in rules

    @Test func theBuiltInRulesAreTheDocumentedFile() throws {
        let file = try Fixtures.text("rules/default.json")
        #expect(RuleSet.builtInText + "\n" == file)
        // The text compiles (builtIn falls back to an empty set only on a bug).
        let compiled = try RuleSet.parse(file)
        #expect(compiled.rules.map(\.name) == RuleSet.builtIn.rules.map(\.name))
        #expect(RuleSet.builtIn.rules.count == 7)
    }
}
