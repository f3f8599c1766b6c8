import Testing
@testable import BadgeFlow

/// Scenario fixtures with their rules: (stream, expected, rules).
private func scenarios() throws -> [(name: String, rules: RuleSet)] {
    let names = ["bad-lines", "chat-read-elsewhere", "demo", "icon-payload", "promotion", "sync-policy", "unread-sync"]
    return try names.map { name in
        let rulesPath = Fixtures.path("scenarios/\(name).rules.json")
        let rules = FileIO.exists(rulesPath) ? try RuleSet.load(file: rulesPath) : RuleSet.builtIn
        return (name, rules)
    }
}

private func string(_ v: JSONValue?) -> String? {
    if case .string(let s)? = v { return s }
    return nil
}

private func int(_ v: JSONValue?) -> Int? {
    if case .int(let n)? = v { return Int(n) }
    return nil
}

@Suite struct StreamResultTests {
    /// Each fixture line's value result, read field by field, says what its NDJSON line says;
    /// and rendering the value gives the golden line.
    @Test func valueResultsEqualTheGoldenLinesOnEveryScenario() throws {
        for (name, rules) in try scenarios() {
            let input = try Fixtures.text("scenarios/\(name).ndjson").split(separator: "\n", omittingEmptySubsequences: false)
            let golden = try Fixtures.text("scenarios/\(name).expected.ndjson").split(separator: "\n").map(String.init)
            var session = FilterSession(rules: rules)
            var values: [StreamResult] = []
            for (i, line) in input.enumerated() where !(i == input.count - 1 && line.isEmpty) {
                if let r = session.result(of: String(line)) { values.append(r) }
            }
            #expect(values.count == golden.count, "\(name)")
            for (value, line) in zip(values, golden) {
                #expect(value.line == line, "\(name) seq \(value.seq)")
                let json = try JSONValue.parse(line)
                #expect(int(json["seq"]) == value.seq)
                if let error = value.error {
                    #expect(string(json["error"]?["code"]) == error.code.rawValue)
                    #expect(string(json["error"]?["at"]) == error.at)
                    continue
                }
                let a = try #require(value.applied)
                #expect(string(json["op"]) == a.event.op.rawValue)
                #expect(string(json["device"]) == a.event.device)
                #expect(int(json["icon"]) == a.icon)
                #expect(string(json["path"]) == a.event.path)
                #expect(string(json["sync"]?["reason"]) == a.sync?.rawValue)
                #expect(int(json["decrement"]?["by"]) == a.outcome.decrement?.by)
                guard case .array(let changes)? = json["changes"] else {
                    Issue.record("\(name) seq \(value.seq): no changes array")
                    continue
                }
                #expect(changes.map { string($0["path"]) } == a.outcome.changes.map(\.path))
                #expect(changes.map { int($0["count"]) } == a.outcome.changes.map(\.count))
            }
        }
    }

    @Test func aBlankLineHasNoResultAndAnErrorIsAValue() {
        var session = FilterSession(rules: .builtIn)
        #expect(session.result(of: "") == nil)
        let bad = session.result(of: "{")
        #expect(bad?.seq == 2)
        #expect(bad?.error?.code == .invalidJSON)
        let push = session.result(of: #"{"aps":{"alert":"hi","thread-id":"bob"}}"#)
        #expect(push?.applied?.icon == 1)
        #expect(push?.applied?.event.rule == "chat")
        #expect(session.rejected == 1)
    }
}
