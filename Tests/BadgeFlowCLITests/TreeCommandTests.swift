import BadgeFlowTestSupport
import Foundation
import Testing

@Suite struct TreeCommandTests {
    /// The state of the demo scenario, written into `dir` (a temporary folder).
    private func state(in dir: String) throws -> String {
        let state = dir + "/s.json"
        _ = try CLI.run(["filter", "--state", state, CLI.fixture("scenarios/demo.ndjson")])
        return state
    }

    @Test func drawsTheTreeAsPlainTextOffATerminal() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["tree", "--state", try state(in: dir)])
        #expect(r.status == 0)
        #expect(
            r.stdout == """
                device ""  icon 5  delivered 5
                root (5)
                ├── chat (1)
                │   └── xiaowang (1)
                ├── inbox (4)
                └── promotion [new]
                    └── double11 ●

                """)
    }

    @Test func explainListsTheMarksBehindAPath() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s.json"
        _ = try await CLI.run([
            "filter", "--state", state, "--rules", CLI.fixture("scenarios/wechat-tab.rules.json"),
            CLI.fixture("scenarios/wechat-tab.ndjson"),
        ])
        let r = try await CLI.run(["tree", "--state", state, "--explain", "root"])
        #expect(r.status == 0)
        #expect(
            r.stdout == """
                root.chat.alice  3  seq 3  rule mention  at 1002  expires never
                root.me.new-feature  dot  seq 13  rule feature  at 4700  expires never

                """)
        let j = try await CLI.run(["tree", "--state", state, "--explain", "root.chat", "--json"])
        #expect(
            j.stdout
                == #"{"path":"root.chat","explain":[{"path":"root.chat.alice","count":3,"seq":3,"rule":"mention","at":1002,"expires":null}]}"#
                + "\n")
        #expect(try await CLI.run(["tree", "--state", state, "--explain", "root.discover"]).stdout == "root.discover does not show\n")
    }

    @Test func colourIsOnlyUsedWhenAsked() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let s = try state(in: dir)
        #expect(!(try await CLI.run(["tree", "--state", s]).stdout.contains("\u{1B}[")))
        #expect(try await CLI.run(["tree", "--state", s, "--color"]).stdout.contains("\u{1B}["))
    }

    @Test func jsonListsShownNodesWithTheirMarks() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["tree", "--state", try state(in: dir), "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let nodes = try #require(object["tree"] as? [[String: Any]])
        #expect(nodes.first?["path"] as? String == "root")
        #expect(nodes.contains { $0["path"] as? String == "root.inbox" && $0["mark"] as? String == "4" })
        #expect(object["icon"] as? Int == 5)
    }

    @Test func anUnknownDeviceIsAUsageError() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["tree", "--state", try state(in: dir), "--device", "nope"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("no device \"nope\""))
    }
}

/// `tree` reads the rules a state was written with from the state file itself.
@Suite struct TreeRulesTests {
    private let rulesText =
        #"{"version":1,"root":"app","maxDisplay":9,"rules":[{"name":"t","match":{"/t":{"exists":true}},"path":"app.{/t}","action":"increment"}]}"#

    /// A rules file and a state written with it, in `dir` (a temporary folder).
    private func setUp(in dir: String) throws -> (rules: String, state: String) {
        let rules = dir + "/rules.json", state = dir + "/s.json"
        try rulesText.write(toFile: rules, atomically: false, encoding: .utf8)
        let input = String(repeating: "{\"aps\":{\"alert\":\"x\"},\"t\":\"a\"}\n", count: 12)
        #expect(try CLI.run(["filter", "--rules", rules, "--state", state], input: input).status == 0)
        return (rules, state)
    }

    @Test func worksWithoutRules() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let (_, state) = try setUp(in: dir)
        let r = try await CLI.run(["tree", "--state", state])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "device \"\"  icon 12  delivered 12\napp (9+)\n└── a (9+)\n")
    }

    @Test func theSameRulesAreFineAndOtherRulesAreNamed() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let (rules, state) = try setUp(in: dir)
        #expect(try await CLI.run(["tree", "--state", state, "--rules", rules]).status == 0)
        let builtIn = dir + "/default.json"
        try FileManager.default.copyItem(atPath: CLI.fixture("rules/default.json"), toPath: builtIn)
        let r = try await CLI.run(["tree", "--state", state, "--rules", builtIn])
        #expect(r.status == 3)
        #expect(r.stderr.contains("\(builtIn) differs from the rules \(state) was written with (root \"root\", recorded \"app\")"))
        #expect(r.stderr.contains("leave out --rules"))
    }

    @Test func aStateWithoutRecordedRulesNeedsRulesAsBefore() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let (rules, state) = try setUp(in: dir)
        // Drop "rules", as a state written before they were recorded.
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any])
        #expect(object["rules"] != nil)
        object["rules"] = nil
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: state))
        #expect(try await CLI.run(["tree", "--state", state, "--rules", rules]).stdout.contains("app (9+)"))
        let without = try await CLI.run(["tree", "--state", state])
        #expect(without.status == 3)
        #expect(without.stderr.contains("other rules"))
    }

    /// A device whose delivered number is not the account's total (here a state edited as
    /// after a rules change) is drawn as stale, and `--json` says so.
    @Test func aDeviceShowsItsDeliveredNumberAndWhetherItIsStale() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s.json"
        let input = #"{"op":"push","account":"u","device":"ipad","payload":{"aps":{"alert":"m","thread-id":"c"}}}"#
        _ = try await CLI.run(["filter", "--state", state], input: input + "\n")
        let text = try String(contentsOfFile: state, encoding: .utf8)
        #expect(text.contains(#""delivered": 1"#))
        try text.replacingOccurrences(of: #""delivered": 1"#, with: #""delivered": 0"#).write(
            toFile: state, atomically: true, encoding: .utf8)
        let drawn = try await CLI.run(["tree", "--state", state, "--account", "u", "--device", "ipad", "--no-color"])
        #expect(drawn.lines.first == #"account "u"  device "ipad"  icon 1  delivered 0  stale"#)
        let json = try await CLI.run(["tree", "--state", state, "--account", "u", "--device", "ipad", "--json"])
        #expect(json.stdout.hasPrefix(#"{"device":"ipad","account":"u","icon":1,"delivered":0,"stale":true,"tree":"#))
        // Without a device there is no delivered number to show.
        #expect(try await CLI.run(["tree", "--state", state, "--account", "u"]).lines.first == #"account "u"  icon 1"#)
    }
}

@Suite struct TreeOfASharedFileTests {
    @Test func supportDrawsAnAppsSharedFileWithItsSettingsAndEvents() async throws {
        try await TemporaryFolder.with { dir in
            let file = dir + "/badges.dat"
            let helper = URL(fileURLWithPath: CLI.executable).deletingLastPathComponent().appendingPathComponent("SharedFileHelper")
            // The app: logs in, reads a chat and mutes one, all through the shared file.
            let app = Process()
            app.executableURL = helper
            app.arguments = ["app", file]
            let input = Pipe()
            app.standardInput = input
            app.standardOutput = FileHandle.nullDevice
            try app.run()
            let commands = ["login u42 phone", "read root.chat.none", "mute root.chat.bob"]
            try input.fileHandleForWriting.write(contentsOf: Data(commands.map { $0 + "\n" }.joined().utf8))
            try input.fileHandleForWriting.close()
            await app.exited()
            let ext = Process()
            ext.executableURL = helper
            ext.arguments = [file, "root.chat.bob", "2"]
            try ext.run()
            await ext.exited()
            let r = try await CLI.run(["tree", "--shared-file", file, "--no-color"])
            #expect(r.status == 0)
            #expect(r.stdout.hasPrefix("account \"u42\"  device \"phone\"  icon 0\n"))
            #expect(r.stdout.contains("setting contribute root.chat.bob none\n"))
            #expect(r.stdout.contains("pending server events 1\n"))
            #expect(r.stdout.contains(#"{"op":"contribute","account":"u42","device":"phone","path":"root.chat.bob","mode":"none","id":"#))
            let json = try await CLI.run(["tree", "--shared-file", file, "--json"])
            #expect(json.stdout.contains(#""contribute":{"root.chat.bob":"none"}"#))
            #expect(try await CLI.run(["tree"]).status != 0)
        }
    }
}
