import BadgeFlowTestSupport
import Foundation
import Testing

/// `state split` and `state merge` as the Spark job uses them, without Spark: two days
/// through one `filter --state` chain, and through P filters, each on its part of the split
/// state (lines keyed by account, else device, and partitioned by zlib's CRC-32 of the key),
/// give the same results and, merged, the same state byte for byte.
@Suite struct StateSplitCommandTests {
    /// zlib's CRC-32, written out here so that the test does not take the partitioner from
    /// the code it checks.
    static func crc32(_ s: String) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in s.utf8 {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
        }
        return ~c
    }

    /// A JSON state's text without its `inputs` (the records of inputs applied).
    static func withoutRecords(_ path: String) throws -> String {
        CLI.withoutInputRecords(try String(contentsOfFile: path, encoding: .utf8))
    }

    /// Day `day` of a stream of pushes, sets, clears and logins over accounts and
    /// account-less devices.
    static func day(_ day: Int) -> [String] {
        PartitionedRunTests.stream().map { line in
            // Day 2's events come after day 1's.
            line.replacingOccurrences(of: #""at":"#, with: #""at":\#(day)00000"#)
        }
    }

    @Test(arguments: Formats.all)
    func twoDaysThroughSplitStatesAreOneChain(format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let parts = 4
        var oneResults: [String] = []
        let one = dir + "/one." + format
        for d in 1...2 {
            let file = dir + "/day\(d).ndjson"
            try (Self.day(d).joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            let run = try await CLI.run(["filter", "--max-line-bytes", "1024", "--state", one, file])
            #expect(run.status == 0, "\(run.stderr)")
            oneResults.append(run.stdout)
        }
        // An empty state split into the parts day 1 starts from.
        let empty = dir + "/empty.json"
        try #"{"format": "badgeflow-state", "version": 2, "accounts": {}}"#.write(toFile: empty, atomically: true, encoding: .utf8)
        var start = empty
        if format != "json" {
            start = dir + "/empty." + format
            #expect(try await CLI.run(["state", "convert", empty, start]).status == 0)
        }
        #expect(try await CLI.run(["state", "split", start, "--parts", "\(parts)", dir + "/state"]).status == 0)
        for d in 1...2 {
            var byPart = [[String]](repeating: [], count: parts)
            for (i, line) in Self.day(d).enumerated() where !line.allSatisfy(\.isWhitespace) {
                byPart[Int(Self.crc32(PartitionedRunTests.key(line)) % UInt32(parts))].append("\(i + 1)\t\(line)")
            }
            var merged: [(seq: Int, line: Substring)] = []
            for p in 0..<parts {
                let state = dir + "/state/part-0000\(p)." + format
                let run = try await CLI.run(
                    ["filter", "--numbered", "--max-line-bytes", "1024", "--state", state], input: byPart[p].map { $0 + "\n" }.joined())
                #expect(run.status == 0, "\(run.stderr)")
                merged += run.stdout.split(separator: "\n").map { (PartitionedRunTests.seq($0), $0) }
            }
            merged.sort { $0.seq < $1.seq }
            #expect(merged.map { $0.line + "\n" }.joined() == oneResults[d - 1], "day \(d)")
        }
        let partPaths = (0..<parts).map { dir + "/state/part-0000\($0)." + format }
        let merge = try await CLI.run(["state", "merge", dir + "/merged." + format] + partPaths.reversed())
        #expect(merge.status == 0, "\(merge.stderr)")
        // The chain read day files, the parts stdin: their records of inputs applied differ
        // (StateFileFormat), all else is byte for byte the same.
        if format == "json" {
            #expect(try Self.withoutRecords(dir + "/merged.json") == Self.withoutRecords(one))
        } else {
            // The same accounts, row for row (key for key): the JSON the two convert to.
            #expect(try await CLI.run(["state", "convert", one, dir + "/one-c.json"]).status == 0)
            #expect(try await CLI.run(["state", "convert", dir + "/merged." + format, dir + "/merged-c.json"]).status == 0)
            #expect(try Self.withoutRecords(dir + "/merged-c.json") == Self.withoutRecords(dir + "/one-c.json"))
        }

        // Refusals: a part missing (3), a state file given twice as OUT (2), a folder not empty (2).
        let missing = try await CLI.run(["state", "merge", dir + "/m2." + format] + partPaths.dropLast())
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("missing: index 3"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/m2." + format))
        #expect(try await CLI.run(["state", "merge", dir + "/merged." + format] + partPaths).status == 2)
        let full = try await CLI.run(["state", "split", one, "--parts", "2", dir + "/state"])
        #expect(full.status == 2 && full.stderr.contains("is not empty"), "\(full.stderr)")
    }

    /// `state info` of a part shows its record (text and `--json`) in every format, and a
    /// whole state shows none; `state convert` of a part keeps the record, so that parts
    /// converted to another format still merge into the whole state.
    @Test(arguments: Formats.all)
    func infoShowsAndConvertKeepsAPartsRecord(format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let parts = 3
        let one = dir + "/one." + format, day = dir + "/day1.ndjson"
        try (Self.day(1).joined(separator: "\n") + "\n").write(toFile: day, atomically: true, encoding: .utf8)
        let run = try await CLI.run(["filter", "--max-line-bytes", "1024", "--state", one, day])
        #expect(run.status == 0, "\(run.stderr)")

        func info(_ state: String) throws -> (text: String, partition: [String: Any]?) {
            let text = try CLI.run(["state", "info", state])
            #expect(text.status == 0, "\(text.stderr)")
            let json = try CLI.run(["state", "info", "--json", state])
            #expect(json.status == 0, "\(json.stderr)")
            let object = (try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) as? [String: Any]
            let accounts = text.stdout.split(separator: "\n").first { $0.hasPrefix("accounts: ") }?.dropFirst(10)
            #expect(accounts != nil && object?["accounts"] as? Int == Int(accounts ?? ""), "\(json.stdout)")
            #expect(object?.keys.contains("partition") == true, "\(json.stdout)")
            return (text.stdout, object?["partition"] as? [String: Any])
        }
        let whole = try info(one)
        #expect(!whole.text.contains("partition"), "\(whole.text)")
        #expect(whole.partition == nil)

        #expect(try await CLI.run(["state", "split", one, "--parts", "\(parts)", dir + "/state"]).status == 0)
        for other in Formats.all {
            var converted: [String] = []
            for i in 0..<parts {
                let part = dir + "/state/part-0000\(i)." + format
                var path = part
                if other != format {
                    path = dir + "/\(other)-part\(i)." + other
                    let convert = try await CLI.run(["state", "convert", part, path])
                    #expect(convert.status == 0, "\(convert.stderr)")
                }
                converted.append(path)
                let shown = try info(path)
                #expect(shown.text.contains("\npartition: part \(i) of \(parts) (crc32)\n"), "\(other): \(shown.text)")
                #expect(shown.partition?["parts"] as? Int == parts, "\(other)")
                #expect(shown.partition?["index"] as? Int == i, "\(other)")
                #expect(shown.partition?["hash"] as? String == "crc32", "\(other)")
            }
            // The converted parts are still a split state: they merge back into the whole.
            let merged = dir + "/merged-from-\(format)." + other
            let merge = try await CLI.run(["state", "merge", merged] + converted)
            #expect(merge.status == 0, "\(other): \(merge.stderr)")
            #expect(try info(merged).partition == nil)
            let a = dir + "/a-\(other).json", b = dir + "/b-\(other).json"
            for (from, to) in [(one, a), (merged, b)] {
                if Formats.name(of: from) == "json" {
                    try FileManager.default.copyItem(atPath: from, toPath: to)
                } else {
                    #expect(try await CLI.run(["state", "convert", from, to]).status == 0)
                }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)), "\(other)")
        }
    }
}
