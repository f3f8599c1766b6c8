import BadgeFlowTestSupport
import Foundation
import Testing

@Suite struct AccountCommandTests {
    private let day = CLI.fixture("scenarios/account-day.ndjson")

    @Test func stampAddsThePayloadToPushResultsButBackgroundOnes() async throws {
        let plain = try await CLI.run(["filter", day])
        let stamped = try await CLI.run(["filter", "--stamp", day])
        #expect(stamped.status == 0)
        #expect(stamped.lines.count == plain.lines.count)
        // The iPad's push carried "badge":1; the account's total is 2: replaced in place.
        #expect(
            stamped.lines[3].hasSuffix(
                #""icon":2,"badgeUpdates":[{"device":"phone","badge":2}],"sync":{"reason":"push"},"payload":{"aps":{"alert":{"title":"Carol","body":"Slides attached"},"thread-id":"carol","badge":2},"type":"chat","sender":"carol"}}"#
            ))
        // No badge in the payload: added last in aps, the other keys in their order.
        #expect(
            stamped.lines[2].hasSuffix(
                #""payload":{"aps":{"alert":{"title":"Bob","body":"Coffee at ten?"},"thread-id":"bob","sound":"default","badge":1},"type":"chat","sender":"bob"}}"#
            ))
        for (p, s) in zip(plain.lines, stamped.lines) {
            if p.contains(#""op":"push""#) && !p.contains(#""kind":"background""#) && !p.contains(#""duplicate":true"#) {
                // The same line with the payload before its closing brace.
                #expect(s.hasPrefix(p.dropLast() + #","payload":{"aps":"#))
            } else {
                // Background pushes and duplicates send nothing: no payload.
                #expect(s == p)
            }
        }
    }

    @Test func stampWorksOnStdinAndWithThreads() async throws {
        var input = ""
        for i in 0..<5000 {
            input +=
                i % 3 == 0
                ? "{\"aps\":{\"content-available\":1}}\n"
                : "{\"op\":\"push\",\"account\":\"a\(i % 7)\",\"device\":\"d\(i % 2)\",\"payload\":{\"aps\":{\"alert\":\"x\",\"thread-id\":\"t\(i % 5)\"}}}\n"
        }
        let one = try await CLI.run(["filter", "--stamp", "--jobs", "1"], input: input)
        let four = try await CLI.run(["filter", "--stamp", "--jobs", "4"], input: input)
        #expect(one.status == 0)
        #expect(one.stdout == four.stdout)
        #expect(one.lines.filter { $0.contains(#""payload":"#) }.count == 3333)
    }

    @Test func theTreeOfAnAccountByAccountOrByDevice() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/state.json"
        // Stop before the evening's reads, while the account still shows something.
        let lines = try String(contentsOfFile: day, encoding: .utf8).split(separator: "\n").prefix(14)
        let input = lines.joined(separator: "\n") + "\n"
        #expect(try await CLI.run(["filter", "--state", state], input: input).status == 0)
        let byAccount = try await CLI.run(["tree", "--state", state, "--account", "alice"])
        #expect(byAccount.status == 0)
        #expect(
            byAccount.stdout == """
                account "alice"  icon 1
                root (1)
                ├── chat (1)
                │   └── dave (1)
                └── news ●

                """)
        let byDevice = try await CLI.run(["tree", "--state", state, "--device", "phone"])
        #expect(byDevice.stdout.hasPrefix(#"account "alice"  device "phone"  icon 1  delivered 1"# + "\n"))
        let json = try await CLI.run(["tree", "--state", state, "--device", "web", "--json"])
        #expect(json.stdout.hasPrefix(#"{"device":"web","account":"alice","icon":1,"delivered":1,"stale":false,"tree":[{"path":"root","#))
        // The iPad logged out: it is no longer in the account.
        let gone = try await CLI.run(["tree", "--state", state, "--device", "ipad"])
        #expect(gone.status == 2)
        #expect(gone.stderr.contains(#"no device "ipad""#))
        let unknown = try await CLI.run(["tree", "--state", state, "--account", "bob"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains(#"no account "bob" in "# + state + #"; accounts: "alice""#))
        let text = try String(contentsOfFile: state, encoding: .utf8)
        #expect(text.contains(#""version": 2"#))
    }

    /// `tree --account` on a JSON state reads that account alone, as on an SQLite one: a
    /// damaged account elsewhere does not stop it, while `state info` (which reads them all)
    /// and a tree of the damaged account report it.
    @Test func theTreeOfOneAccountOfAJSONStateReadsThatAccountAlone() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/state.json"
        try #"""
        {"format": "badgeflow-state", "version": 2, "accounts": {
          "good": {"clock": 5, "marks": {"root.chat.x": 2}, "devices": {"d": {"delivered": 2}}},
          "bad": {"clock": 5, "marks": {"root.chat.y": -1}, "devices": {}}}}
        """#.write(toFile: state, atomically: true, encoding: .utf8)
        let good = try await CLI.run(["tree", "--state", state, "--account", "good"])
        #expect(good.status == 0)
        #expect(good.stdout.hasPrefix(#"account "good"  icon 2"# + "\n"))
        let byDevice = try await CLI.run(["tree", "--state", state, "--device", "d"])
        #expect(byDevice.status == 3)
        #expect(byDevice.stderr.contains("/accounts/bad/marks/root.chat.y"))
        let bad = try await CLI.run(["tree", "--state", state, "--account", "bad"])
        #expect(bad.status == 3)
        #expect(bad.stderr.contains("/accounts/bad/marks/root.chat.y"))
        let info = try await CLI.run(["state", "info", state])
        #expect(info.status == 3)
        #expect(info.stderr.contains("/accounts/bad/marks/root.chat.y"))
    }

    @Test func aVersionOneStateFileIsRefusedNamingItsVersion() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/state.json"
        // Devices with their own trees and one clock for all, as pre-release builds wrote them.
        let old = #"""
            {"format": "badgeflow-state", "version": 1, "clock": 1795341800,
             "devices": {"ipad": {"marks": {"root.chat.alice": 2}, "icon": 0}}}
            """#
        try old.write(toFile: state, atomically: true, encoding: .utf8)
        for args in [["filter", "--state", state], ["tree", "--state", state], ["state", "info", state]] {
            let r = try await CLI.run(args, input: #"{"op":"tick","account":"ipad"}"# + "\n")
            #expect(r.status == 3, "\(args)")
            #expect(
                r.stderr.contains("\(state): /version: state version 1 is not supported; this BadgeFlow reads version 2"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
        #expect(try String(contentsOfFile: state, encoding: .utf8) == old)
    }
}
