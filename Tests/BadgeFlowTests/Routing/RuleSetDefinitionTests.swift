import Testing
@testable import BadgeFlow

/// The built-in rules, written in Swift.
func builtInDefinition(droppingChat: Bool = false) -> RuleSet.Definition {
    typealias D = RuleSet.Definition
    var rules: [D.Rule] = [
        .init(
            name: "read-elsewhere", match: [("/type", .equals(.string("read")))],
            path: "root.chat.{/thread}", action: .clear()),
        .init(
            name: "unread-sync", match: [("/type", .equals(.string("unread"))), ("/aps/content-available", .equals(.int(1)))],
            path: "root.inbox", action: .set(.pointer("/unread"))),
        .init(
            name: "chat", match: [("/aps/thread-id", .exists(true))],
            path: "root.chat.{/aps/thread-id}", action: .increment),
        .init(
            name: "promo", match: [("/promo", .exists(true))],
            path: "root.promotion.{/promo/campaign}", action: .dot),
        .init(name: "news", match: [("/aps/category", .equals(.string("news")))], path: "root.news", action: .dot),
        .init(
            name: "category", match: [("/aps/category", .exists(true))],
            path: "root.{/aps/category}", action: .incrementBy(.literal(1))),
        .init(name: "silent", match: [("/aps/content-available", .equals(.int(1)))], path: "root", action: .ignore),
    ]
    if droppingChat { rules.removeAll { $0.name == "chat" } }
    return D(
        display: [("root.news", .dot), ("root.promotion", .custom("new"))], rules: rules,
        sync: .init(pages: ["home", "mine"], interval: 60, away: 60))
}

/// Every result line of `lines` through `rules`, as the filter writes them with `jobs` workers.
private func run(_ lines: [String], rules: RuleSet, jobs: Int) -> String {
    let filter = ParallelFilter(stream: BadgeStream(rules: rules), jobs: jobs, linesPerBatch: 64)
    return String(decoding: filter.results(of: lines), as: UTF8.self)
}

@Suite struct RuleSetDefinitionTests {
    @Test func rulesBuiltInSwiftRouteAsTheSameRulesFromJSON() throws {
        let swift = try RuleSet(builtInDefinition())
        let json = RuleSet.builtIn
        #expect(swift.rules.map(\.name) == json.rules.map(\.name))
        #expect(swift.rules.map(\.action) == json.rules.map(\.action))
        #expect(swift.tree.display == json.tree.display)
        #expect(swift.sync == json.sync)
        #expect(swift.icon == json.icon)
        let lines =
            try Fixtures.text("scenarios/demo.ndjson").split(separator: "\n").map(String.init)
            + (0..<300).map { #"{"aps":{"alert":"m","thread-id":"t\#($0 % 7)","category":"c\#($0 % 3)"},"promo":{"campaign":"x"}}"# }
        #expect(run(lines, rules: swift, jobs: 1) == run(lines, rules: json, jobs: 1))
    }

    @Test func aFaultInASwiftDefinitionHasTheFilesPointer() {
        var d = builtInDefinition()
        d.rules[2].path = "root.chat.{aps/thread-id}"
        #expect(throws: RulesError.self) { try RuleSet(d) }
        do {
            _ = try RuleSet(d)
        } catch {
            #expect(error.at == "/rules/2/path")
        }
        var dup = builtInDefinition()
        dup.rules.append(dup.rules[0])
        do {
            _ = try RuleSet(dup)
            Issue.record("a duplicate rule name compiled")
        } catch {
            #expect(error.at == "/rules/7/name")
            #expect(error.message.contains("used twice"))
        }
        var display = builtInDefinition()
        display.display.append(("other.x", .dot))
        do {
            _ = try RuleSet(display)
            Issue.record("a display path outside the root compiled")
        } catch {
            #expect(error.at == "/display/other.x")
        }
    }

    @Test func rulesChangedInCodeGiveTheSameResultsWithOneJobAndTwo() throws {
        // Rules are changed in code by building a new set; every worker compiles its copy
        // from that set's own source, so no worker can route with the rules it replaced.
        let rules = try RuleSet(builtInDefinition(droppingChat: true))
        let lines = (0..<5_000).map { #"{"aps":{"alert":"hi","thread-id":"t\#($0 % 13)"}}"# }
        let one = run(lines, rules: rules, jobs: 1)
        let two = run(lines, rules: rules, jobs: 2)
        #expect(one == two)
        #expect(!one.contains(#""rule":"chat""#))
        #expect(one.split(separator: "\n").filter { $0.contains(#""rule":null"#) }.count == 5_000)
        #expect(rules.independentCopy().rules.map(\.name) == rules.rules.map(\.name))
    }
}
