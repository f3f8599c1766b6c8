import Foundation
import Testing

@Suite struct TreeCommandTests {
    private func state() throws -> String {
        let dir = try CLI.temporaryDirectory()
        let state = dir + "/s.json"
        _ = try CLI.run(["filter", "--state", state, CLI.fixture("scenarios/demo.ndjson")])
        return state
    }

    @Test func drawsTheTreeAsPlainTextOffATerminal() throws {
        let r = try CLI.run(["tree", "--state", try state()])
        #expect(r.status == 0)
        #expect(r.stdout == """
            device ""  icon 5
            root (5)
            ├── chat (1)
            │   └── xiaowang (1)
            ├── inbox (4)
            └── promotion [new]
                └── double11 ●

            """)
    }

    @Test func colourIsOnlyUsedWhenAsked() throws {
        let s = try state()
        #expect(!(try CLI.run(["tree", "--state", s]).stdout.contains("\u{1B}[")))
        #expect(try CLI.run(["tree", "--state", s, "--color"]).stdout.contains("\u{1B}["))
    }

    @Test func jsonListsShownNodesWithTheirMarks() throws {
        let r = try CLI.run(["tree", "--state", try state(), "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let nodes = try #require(object["tree"] as? [[String: Any]])
        #expect(nodes.first?["path"] as? String == "root")
        #expect(nodes.contains { $0["path"] as? String == "root.inbox" && $0["mark"] as? String == "4" })
        #expect(object["icon"] as? Int == 5)
    }

    @Test func anUnknownDeviceIsAUsageError() throws {
        let r = try CLI.run(["tree", "--state", try state(), "--device", "nope"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("no device \"nope\""))
    }
}
