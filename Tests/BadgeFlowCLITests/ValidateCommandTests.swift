import BadgeFlowTestSupport
import Foundation
import Testing

@Suite struct ValidateCommandTests {
    @Test func everyValidFixtureExitsZero() async throws {
        let dir = CLI.fixture("payloads/valid")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir)
            .filter { $0.hasSuffix(".json") }.sorted().map { dir + "/" + $0 }
        #expect(files.count >= 20)
        let r = try await CLI.run(["validate"] + files)
        #expect(r.status == 0, "\(r.stdout)")
    }

    @Test func eachInvalidFixtureExitsOneNamingItsCodeAndPointer() async throws {
        let dir = CLI.fixture("payloads/invalid")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") && $0 != "batch.json" }.sorted()
        #expect(files.count >= 14)
        let verdicts = try String(contentsOfFile: CLI.fixture("payloads/verdicts.tsv"), encoding: .utf8)
        for name in files {
            let r = try await CLI.run(["validate", dir + "/" + name])
            #expect(r.status == 1, "\(name)")
            let row = verdicts.split(separator: "\n").first { $0.hasPrefix("invalid/" + name + "\t") }
            let firstError = row?.split(separator: "\t").last?.split(separator: " ").first { $0.hasPrefix("error:") }
            let parts = firstError.map { $0.dropFirst(6).split(separator: "@", omittingEmptySubsequences: false) }
            let code = parts?.first.map(String.init) ?? "?"
            let pointer = parts.flatMap { $0.count > 1 ? String($0[1]) : nil } ?? ""
            let expected = pointer.isEmpty ? "error[\(code)] " : "error[\(code)] \(pointer): "
            // Line 1, or line:column for a syntax error in a multi-line file.
            let place = r.stdout.dropFirst(dir.count + name.count + 2).prefix(while: { $0 != " " })
            #expect(place == "1:" || (name == "truncated.json" && place == "5:39:"), "\(name): \(r.stdout)")
            #expect(r.stdout.contains(": " + expected), "\(name): \(r.stdout)")
        }
    }

    @Test func humanOutputIsCompilerStyle() async throws {
        let r = try await CLI.run(["validate", CLI.fixture("payloads/invalid/badge-string.json")])
        #expect(
            r.stdout.contains(
                "payloads/invalid/badge-string.json:1: error[wrong-type] /aps/badge: badge must be a non-negative integer, got string \"99+\""
            ))
    }

    @Test func readsOnePayloadPerLineFromStdin() async throws {
        let r = try await CLI.run(["validate"], input: "{\"aps\":{\"alert\":\"ok\"}}\n\n{\"aps\":{\"badge\":-1}}\n")
        #expect(r.status == 1)
        #expect(r.stdout == "<stdin>:3: error[out-of-range] /aps/badge: badge must be between 0 and 2147483647, got integer -1\n")
    }

    @Test func jsonOutputHasOneObjectPerPayload() async throws {
        let r = try await CLI.run(["validate", "--json"], input: "{\"aps\":{\"alert\":\"ok\"}}\n{\"aps\":{\"badge\":\"x\"}}\n")
        #expect(r.lines.count == 2)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(r.lines[1].utf8)) as? [String: Any])
        #expect(second["valid"] as? Bool == false)
        #expect(second["line"] as? Int == 2)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(r.lines[0].utf8)) as? [String: Any])
        #expect(first["kind"] as? String == "alert")
    }

    @Test func anUnreadableFileExitsFour() async throws {
        let r = try await CLI.run(["validate", "/nonexistent/x.ndjson"])
        #expect(r.status == 4)
        #expect(r.stderr.contains("/nonexistent/x.ndjson"))
    }

    @Test func aBadOptionExitsTwo() async throws {
        #expect(try await CLI.run(["validate", "--nope"]).status == 2)
        #expect(try await CLI.run(["frobnicate"]).status == 2)
    }
}
