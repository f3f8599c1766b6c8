import BadgeFlowTestSupport
import Foundation
import Testing

/// Rules change over time (the StateFileFormat article): a state takes other rules when every mark fits them,
/// and `filter` without `--rules` uses the recorded ones; every format alike.
@Suite struct RulesOverTimeTests {
    static let chat = #"{"op":"push","account":"A","device":"d1","payload":{"aps":{"alert":"m","thread-id":"c1"}}}"#
    static let vip = #"{"op":"push","account":"A","device":"d1","payload":{"vip":1,"aps":{"alert":"v"}}}"#

    /// The default rules with `change` applied, written to `dir/name`.
    static func rules(_ name: String, in dir: String, _ change: (inout [String: Any]) -> Void) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: CLI.fixture("rules/default.json")))
        var rules = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        change(&rules)
        let path = dir + "/" + name
        try JSONSerialization.data(withJSONObject: rules).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: Formats.files("s"))
    func rulesThatFitAreTakenAndRecorded(state name: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/" + name
            #expect(try await CLI.run(["filter", "--state", state], input: Self.chat + "\n").status == 0)
            let more = try Self.rules("more.json", in: dir) { rules in
                var list = rules["rules"] as? [Any] ?? []
                list.insert(["name": "vip", "match": ["/vip": ["exists": true]], "path": "root.vip", "action": "increment"], at: 0)
                rules["rules"] = list
            }
            let run = try await CLI.run(["filter", "--state", state, "--rules", more], input: Self.vip + "\n")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains(#""rule":"vip","path":"root.vip""#) && run.stdout.contains(#""icon":2"#))
            // Without --rules: the rules now recorded, with the new rule.
            let again = try await CLI.run(["filter", "--state", state], input: Self.vip + "\n")
            #expect(again.status == 0 && again.stdout.contains(#""rule":"vip""#) && again.stdout.contains(#""icon":3"#), "\(again)")
        }
    }

    @Test(arguments: Formats.files("s"))
    func rulesAMarkDoesNotFitAreExit3NamingIt(state name: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/" + name
            #expect(try await CLI.run(["filter", "--state", state], input: Self.chat + "\n").status == 0)
            let top = try Self.rules("top.json", in: dir) { rules in
                rules["root"] = "top"
                rules["display"] = [String: Any]()
                rules["rules"] = (rules["rules"] as? [[String: Any]] ?? []).map { rule in
                    var rule = rule
                    if let path = rule["path"] as? String { rule["path"] = "top" + path.dropFirst(4) }
                    return rule
                }
            }
            // A folder state: what it holds, as `state info` and `state get` show it.
            let folder = Formats.isFolder(name)
            func contents() throws -> Data {
                guard folder else { return try Data(contentsOf: URL(fileURLWithPath: state)) }
                // The folder's size changes with any open (the database's own log and options files).
                let info = try CLI.run(["state", "info", state]).stdout.split(separator: "\n").filter { !$0.hasPrefix("size: ") }
                let shown = info.joined(separator: "\n") + (try CLI.run(["state", "get", state, "A", "--json"]).stdout)
                return Data(shown.utf8)
            }
            let before = try contents()
            let run = try await CLI.run(["filter", "--state", state, "--rules", top], input: Self.chat + "\n")
            #expect(run.status == 3 && run.stdout.isEmpty)
            #expect(run.stderr.contains("root.chat.c1") && run.stderr.contains(#"root "top""#), "\(run.stderr)")
            #expect(try contents() == before)
        }
    }
}
