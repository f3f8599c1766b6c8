import BadgeFlowTestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `validate` as a release gate (the PayloadValidation article): folders, `--strict`, `--push-type`, `--junit FILE`,
/// syntax errors at line and column, a BOM alike in .json and NDJSON.
@Suite struct ValidateGateTests {
    @Test func walksFoldersSkippingSidecarsAndExpectations() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"aps":{"alert":"a"}}"#, dir + "/a.json")
            try writeFile(#"{"aps":{"badge":"x"}}"# + "\n", dir + "/sub/b.ndjson")
            try writeFile(#"{"seq":1,"op":"push"}"# + "\n", dir + "/sub/b.expected.ndjson")
            try writeFile(#"{"expected-errors":["wrong-type"]}"#, dir + "/sub/batch.json")
            try writeFile(#"{"version":1,"rules":[]}"#, dir + "/rules.json")
            try writeFile("not json", dir + "/notes.txt")
            let r = try await CLI.run(["validate", dir])
            #expect(r.status == 1)
            #expect(
                r.stdout == "\(dir)/sub/b.ndjson:1: error[wrong-type] /aps/badge: badge must be a non-negative integer, got string \"x\"\n")
            #expect(r.stderr.contains("2 payloads: 1 valid, 1 invalid"))
        }
    }

    @Test func strictFailsOnAWarningAndOnNoPayloads() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"aps":{"alert":"a","zz":1}}"#, dir + "/w.json")
            #expect(try await CLI.run(["validate", dir]).status == 0)
            #expect(try await CLI.run(["validate", "--strict", dir]).status == 1)
            try FileManager.default.removeItem(atPath: dir + "/w.json")
            #expect(try await CLI.run(["validate", dir]).status == 0)
            let empty = try await CLI.run(["validate", "--strict", dir])
            #expect(empty.status == 1)
            #expect(empty.stderr.contains("no payloads"))
            // An empty `find | xargs`: no PATH, nothing on stdin.
            #expect(try await CLI.run(["validate", "--strict"], input: "").status == 1)
        }
    }

    @Test func strictPassesOverTheRepositorysWarningFreeValidPayloads() async throws {
        // Every fixture the manifests call valid with no diagnostics, in one run.
        var files: [String] = []
        for manifest in ["payloads/verdicts.tsv", "payloads/corpus/SOURCES.tsv"] {
            let rows = try String(contentsOfFile: CLI.fixture(manifest), encoding: .utf8).split(separator: "\n").dropFirst()
            for row in rows {
                let cols = row.split(separator: "\t", omittingEmptySubsequences: false)
                if cols.count > 2, cols[1] != "invalid", cols[2] == "-" { files.append(CLI.fixture("payloads/" + cols[0])) }
            }
        }
        #expect(files.count > 60)
        let r = try await CLI.run(["validate", "--strict"] + files)
        #expect(r.status == 0, "\(r.stdout)")
    }

    @Test func pushTypeOptionAppliesToBarePayloads() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"aps":{"alert":"a","badge":1}}"#, dir + "/t.json")
            let r = try await CLI.run(["validate", "--push-type", "background", dir + "/t.json"])
            #expect(r.status == 0)
            #expect(r.stdout.contains("warning[push-type-mismatch] /aps:"))
            #expect(try await CLI.run(["validate", "--strict", "--push-type", "background", dir + "/t.json"]).status == 1)
            let banana = try await CLI.run(["validate", "--push-type", "banana", dir + "/t.json"])
            #expect(banana.status == 1)
            #expect(banana.stdout.contains("error[invalid-value] /push-type: push-type must be one of alert, background"))
            // A 4,551-byte VoIP template: too large as an alert, fine as voip.
            let filler = String(repeating: "v", count: 4500)
            try writeFile(#"{"aps":{},"call":""# + filler + "\"}", dir + "/voip.json")
            #expect(try await CLI.run(["validate", dir + "/voip.json"]).status == 1)
            #expect(try await CLI.run(["validate", "--push-type", "voip", dir + "/voip.json"]).status == 0)
        }
    }

    @Test func theRepositorysPushTypeAndLiveActivityFixturesGetTheirVerdicts() async throws {
        let r = try await CLI.run(["validate", "--json", CLI.fixture("payloads/push-types"), CLI.fixture("payloads/live-activity")])
        var verdicts: [String: [String]] = [:]
        for line in r.lines {
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let file = (o["file"] as? String ?? "").split(separator: "/").suffix(2).joined(separator: "/")
            let diagnostics = (o["diagnostics"] as? [[String: Any]] ?? []).map {
                "\($0["severity"] ?? ""):\($0["code"] ?? "")@\($0["at"] ?? "")"
            }
            verdicts["\(file):\(o["line"] ?? 0)"] = diagnostics
        }
        #expect(verdicts["push-types/envelopes.ndjson:1"] == [])
        #expect(verdicts["push-types/envelopes.ndjson:2"] == ["warning:push-type-mismatch@/payload/aps"])
        #expect(verdicts["push-types/envelopes.ndjson:3"] == ["warning:push-type-mismatch@/payload/aps"])
        #expect(verdicts["push-types/envelopes.ndjson:5"] == ["warning:push-type-mismatch@/payload/aps/event"])
        #expect(verdicts["push-types/envelopes.ndjson:7"] == ["warning:push-type-mismatch@/payload/aps/event"])
        #expect(verdicts["push-types/envelopes.ndjson:8"] == ["error:invalid-value@/push-type"])
        #expect(verdicts["live-activity/update-milliseconds.json:1"] == ["warning:timestamp-in-milliseconds@/aps/timestamp"])
        #expect(verdicts["live-activity/start-timestamp-zero.json:1"] == [])
        #expect(verdicts["live-activity/update-no-timestamp.json:1"] == ["error:missing-key@/aps/timestamp"])
        #expect(verdicts["live-activity/update-no-content-state.json:1"] == ["error:missing-key@/aps/content-state"])
        #expect(
            verdicts["live-activity/start-no-attributes.json:1"] == [
                "error:missing-key@/aps/attributes-type", "error:missing-key@/aps/attributes",
            ])
        #expect(verdicts["live-activity/end-no-timestamp.json:1"] == ["error:missing-key@/aps/timestamp"])
    }

    @Test func aPrettyTemplateIsMeasuredCompact() async throws {
        try await TemporaryFolder.with { dir in
            let filler = String(repeating: "p", count: 3650)
            let pretty = "{\n" + String(repeating: " ", count: 1000) + "\"aps\": {\"alert\": \"hi\"},\n    \"k\": \"" + filler + "\"\n}\n"
            #expect(pretty.utf8.count > 4096)
            try writeFile(pretty, dir + "/pretty.json")
            #expect(try await CLI.run(["validate", "--strict", dir + "/pretty.json"]).status == 0)
        }
    }

    @Test func aSyntaxErrorInAMultiLineFileHasLineAndColumn() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile("{\n  \"aps\": {\n    \"alert\": \"x\",\n  }\n}\n", dir + "/t.json")
            let r = try await CLI.run(["validate", dir + "/t.json"])
            #expect(r.status == 1)
            #expect(r.stdout.hasPrefix("\(dir)/t.json:4:3: error[invalid-json] "), "\(r.stdout)")
        }
    }

    @Test func aBOMIsSkippedInJSONAsInNDJSON() async throws {
        try await TemporaryFolder.with { dir in
            let bom = Data([0xEF, 0xBB, 0xBF])
            let payload = Data(#"{"aps":{"alert":"hi","thread-id":"a"}}"#.utf8)
            try (bom + payload).write(to: URL(fileURLWithPath: dir + "/b.json"))
            try (bom + payload + Data("\n".utf8)).write(to: URL(fileURLWithPath: dir + "/b2.ndjson"))
            let r = try await CLI.run(["validate", "--strict", dir])
            #expect(r.status == 0, "\(r.stdout)")
            #expect(r.stderr.contains("2 payloads: 2 valid"))
            let b = try await CLI.run(["batch", "--update", dir])
            #expect(b.status == 0)
            let golden = try String(contentsOfFile: dir + "/b.expected.ndjson", encoding: .utf8)
            #expect(golden.contains("\"kind\":\"alert\""), "\(golden)")
        }
    }

    @Test func junitFileBesideTheTextReport() async throws {
        try await TemporaryFolder.with { dir in
            try writeFile(#"{"aps":{"alert":"a"}}"# + "\n" + #"{"aps":{"badge":-1}}"# + "\n", dir + "/x.ndjson")
            try writeFile(#"{"aps":{"alert":"a"}}"#, dir + "/y.json")
            let r = try await CLI.run(["validate", "--junit", dir + "/v.xml", dir])
            #expect(r.status == 1)
            #expect(r.stdout.contains("x.ndjson:2: error[out-of-range]"))
            let doc = try XMLDocument(data: Data(contentsOf: URL(fileURLWithPath: dir + "/v.xml")))
            let suites = try doc.nodes(forXPath: "/testsuites/testsuite").compactMap { $0 as? XMLElement }
            #expect(suites.count == 2)
            #expect(suites.map { $0.attribute(forName: "failures")?.stringValue } == ["1", "0"])
            let cases = try doc.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
            #expect(cases.count == 3)
            #expect(cases.allSatisfy { Double($0.attribute(forName: "time")?.stringValue ?? "") != nil })
            #expect(try doc.nodes(forXPath: "//testcase/failure").count == 1)
        }
    }
}
