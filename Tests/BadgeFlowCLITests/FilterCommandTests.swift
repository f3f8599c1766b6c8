import BadgeFlowTestSupport
import Foundation
import Testing

@Suite struct FilterCommandTests {
    @Test func writesOneLinePerNonBlankInputLineInOrder() async throws {
        let input = "{\"aps\":{\"alert\":\"a\",\"thread-id\":\"x\"}}\n\n{\"aps\":\n[]\n{\"op\":\"tick\"}\n"
        let r = try await CLI.run(["filter"], input: input)
        #expect(r.status == 0)
        #expect(r.lines.count == 4)
        #expect(r.lines.map { $0.prefix(9) } == ["{\"seq\":1,", "{\"seq\":3,", "{\"seq\":4,", "{\"seq\":5,"])
        #expect(r.lines[1].contains("\"invalid-json\""))
    }

    @Test func seqContinuesAcrossInputFiles() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try "{\"op\":\"tick\"}\n{\"op\":\"tick\"}".write(toFile: dir + "/a.ndjson", atomically: true, encoding: .utf8)
        try "{\"op\":\"tick\"}\n".write(toFile: dir + "/b.ndjson", atomically: true, encoding: .utf8)
        let r = try await CLI.run(["filter", dir + "/a.ndjson", dir + "/b.ndjson"])
        #expect(r.lines.map { $0.prefix(9) } == ["{\"seq\":1,", "{\"seq\":2,", "{\"seq\":3,"])
    }

    @Test func strictExitsOneWhenAnyLineWasRejected() async throws {
        #expect(try await CLI.run(["filter", "--strict"], input: "{\"op\":\"tick\"}\n").status == 0)
        let r = try await CLI.run(["filter", "--strict"], input: "nope\n{\"op\":\"tick\"}\n")
        #expect(r.status == 1)
        #expect(r.lines.count == 2)
        #expect(try await CLI.run(["filter"], input: "nope\n").status == 0)
    }

    @Test func aRulesFileFaultExitsTwoNamingFileAndPointer() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let rules = dir + "/rules.json"
        try #"{"version":1,"rules":[{"name":"a","path":"root.a","action":"bump"}]}"#.write(toFile: rules, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["filter", "--rules", rules], input: "")
        #expect(r.status == 2)
        #expect(r.stderr.contains(rules + ": /rules/0/action: unknown action \"bump\""))
    }

    @Test func aCorruptStateFileExitsThreeAndIsLeftUntouched() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/state.json"
        try "{not json".write(toFile: state, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["filter", "--state", state], input: "{\"op\":\"tick\"}\n")
        #expect(r.status == 3)
        #expect(r.stdout.isEmpty)
        #expect(try String(contentsOfFile: state, encoding: .utf8) == "{not json")
        try #"{"some":"other tool"}"#.write(toFile: state, atomically: true, encoding: .utf8)
        #expect(try await CLI.run(["filter", "--state", state], input: "").status == 3)
    }

    @Test func anUnreadableInputExitsFour() async throws {
        #expect(try await CLI.run(["filter", "/nonexistent/input.ndjson"]).status == 4)
    }

    @Test func replayIsByteIdentical() async throws {
        let input = try String(contentsOfFile: CLI.fixture("scenarios/demo.ndjson"), encoding: .utf8)
        let a = try await CLI.run(["filter"], input: input), b = try await CLI.run(["filter"], input: input)
        #expect(!a.stdout.isEmpty)
        #expect(a.stdout == b.stdout)
    }

    @Test func stateSplitAcrossTwoRunsGivesTheSameResultsAsOneRun() async throws {
        let input =
            try String(contentsOfFile: CLI.fixture("scenarios/chat-read-elsewhere.ndjson"), encoding: .utf8)
            + (try String(contentsOfFile: CLI.fixture("scenarios/sync-policy.ndjson"), encoding: .utf8))
        let lines = input.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let whole = try await CLI.run(["filter"], input: input).lines
        for cut in [1, 5, 9, 17] {
            let dir = try TemporaryFolder.make()
            defer { TemporaryFolder.remove(dir) }
            let state = dir + "/state.json"
            let first = try await CLI.run(["filter", "--state", state], input: lines[..<cut].joined(separator: "\n") + "\n")
            let second = try await CLI.run(["filter", "--state", state], input: lines[cut...].joined(separator: "\n"))
            let stripSeq = { (l: String) in l.replacing(/^\{"seq":\d+,/, with: "{") }
            #expect((first.lines + second.lines).map(stripSeq) == whole.map(stripSeq), "cut at \(cut)")
        }
    }

    @Test func crlfBomAndAMissingFinalNewlineAreFine() async throws {
        let r = try await CLI.run(["filter"], input: "\u{FEFF}{\"op\":\"tick\"}\r\n{\"op\":\"snapshot\"}")
        #expect(r.lines.count == 2)
        #expect(!r.stdout.contains("error"))
    }

    @Test func anOverlongLineIsAnsweredAndTheStreamGoesOn() async throws {
        let long = "{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 5000) + "\"}}"
        let r = try await CLI.run(["filter", "--max-line-bytes", "2048"], input: long + "\n{\"op\":\"tick\"}\n")
        #expect(r.lines.count == 2)
        #expect(r.lines[0].contains("\"line-too-long\""))
        #expect(r.lines[1].hasPrefix("{\"seq\":2,\"op\":\"tick\""))
    }

    /// Accounts held compactly between their events (`--expanded-accounts`) answer and save
    /// exactly as expanded ones: 6,000 lines over 1,500 accounts, three batches, with 10
    /// accounts expanded against the default, each from the same JSON state.
    @Test func compactAccountsAnswerAndSaveAsExpandedOnes() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        var lines: [String] = []
        for i in 0..<6000 {
            let a = (i * 7919) % 1500, at = 1_795_341_600 + i
            switch i % 5 {
            case 0, 1:
                lines.append(
                    #"{"op":"push","account":"a\#(a)","device":"d\#(i % 3)","at":\#(at),"payload":{"aps":{"alert":"x","thread-id":"t\#(i % 4)"}}}"#
                )
            case 2: lines.append(#"{"op":"clear","account":"a\#(a)","device":"d0","path":"root.chat.t\#(i % 4)"}"#)
            case 3: lines.append(#"{"op":"set","account":"a\#(a)","device":"d1","path":"root.promo","ttl":30.5,"at":\#(at)}"#)
            default: lines.append(#"{"op":"appear","account":"a\#(a)","device":"d2","page":"home","at":\#(at)}"#)
            }
        }
        let input = lines.joined(separator: "\n") + "\n"
        let first = input.split(separator: "\n").prefix(3000).joined(separator: "\n") + "\n"
        let rest = input.split(separator: "\n").dropFirst(3000).joined(separator: "\n") + "\n"
        var outputs: [[String]] = [], states: [String] = []
        // The largest N (no overflow past it) is the same as never compacting.
        for (name, extra) in [
            ("expanded", [String]()), ("compact", ["--expanded-accounts", "10"]), ("max", ["--expanded-accounts", String(Int.max)]),
        ] {
            let state = dir + "/\(name).json"
            let a = try await CLI.run(["filter", "--state", state] + extra, input: first)
            let b = try await CLI.run(["filter", "--state", state] + extra, input: rest)
            #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
            outputs.append(a.lines + b.lines)
            // Each run records stdin's digest with the time it was applied.
            states.append(CLI.withoutInputRecords(try String(contentsOfFile: state, encoding: .utf8)))
        }
        #expect(outputs[0].count == 6000)
        #expect(outputs[0] == outputs[1] && outputs[0] == outputs[2])
        #expect(states[0] == states[1] && states[0] == states[2])
        #expect(outputs[1].contains { $0.contains(#""expired":["root.promo"]"#) })
        let bad = try await CLI.run(["filter", "--expanded-accounts", "0"], input: "")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--expanded-accounts must be at least 1"))
    }
}
