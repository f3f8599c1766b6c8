import BadgeFlowTestSupport
import Foundation
import Testing

/// A run split by account (device when there is none), each part numbered and filtered with
/// `--numbered`, merges by `seq` into exactly the bytes one run writes: what the Spark job
/// in Integrations/spark does, without Spark.
@Suite struct PartitionedRunTests {
    /// A multi-device stream: accounts shared by devices, devices without one, bad and blank
    /// lines, CRLF endings, an overlong line and one exactly at the limit. Every event has
    /// `at` (see Integrations/spark/README.md: events without it need the per-account clock).
    static func stream() -> [String] {
        var x: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ n: Int) -> Int {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            return Int(x % UInt64(n))
        }
        // Devices d0…d11; d0–d7 belong to accounts a0–a2 (several devices each), d8–d11 to none.
        func envelope(_ device: Int, _ rest: String) -> String {
            let account = device < 8 ? #","account":"a\#(device % 3)""# : ""
            return #"{"device":"d\#(device)"\#(account),\#(rest)}"#
        }
        var lines: [String] = []
        for i in 0..<6_000 {
            let d = next(12), t = next(7)
            switch next(20) {
            case 0: lines.append("")
            case 1: lines.append(["not json", "[1,2]", #"{"op":"nope","at":1}"#, #"{"aps":{"badge":-1}}"#, "   "][next(5)])
            case 2, 3: lines.append(envelope(d, #""op":"clear","at":\#(i),"path":"root.chat.t\#(t)""#))
            case 4: lines.append(envelope(d, #""op":"set","at":\#(i),"path":"root.inbox","count":\#(next(9))"#))
            case 5: lines.append(envelope(d, #""op":"\#(["login", "logout", "foreground", "background", "tick"][next(5)])","at":\#(i)"#))
            case 6: lines.append(envelope(d, #""op":"\#(next(2) == 0 ? "appear" : "disappear")","page":"home","at":\#(i)"#))
            case 7: lines.append(envelope(d, #""op":"snapshot","at":\#(i)"#) + "\r")
            default:
                lines.append(envelope(d, #""op":"push","at":\#(i),"payload":{"aps":{"alert":"m\#(i) é","thread-id":"t\#(t)"}}"#))
            }
        }
        lines[100] = String(repeating: "x", count: 1500)
        let atLimit = #"{"op":"tick","device":"d9","at":100,"pad":""#
        lines[200] = atLimit + String(repeating: "p", count: 1024 - atLimit.utf8.count - 2) + #""}"#
        #expect(lines[200].utf8.count == 1024)
        return lines
    }

    /// The partition key: a string `account`, else a string `device`, else "" (as the Spark job).
    static func key(_ line: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return "" }
        if let account = object["account"] as? String { return account }
        return object["device"] as? String ?? ""
    }

    static func seq(_ result: Substring) -> Int {
        let digits = result.dropFirst(#"{"seq":"#.count).prefix { $0.isNumber }
        return Int(digits) ?? -1
    }

    @Test func resultsMergedBySeqAreOneRunByteForByte() async throws {
        let lines = Self.stream()
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let whole = dir + "/whole.ndjson"
        try (lines.joined(separator: "\n") + "\n").write(toFile: whole, atomically: true, encoding: .utf8)
        let one = try await CLI.run(["filter", "--max-line-bytes", "1024", whole])
        #expect(one.status == 0)
        #expect(one.lines.count == lines.filter { !$0.allSatisfy(\.isWhitespace) }.count)

        // Number (1-based, blank lines counted), drop blank lines, split into 3 parts by key,
        // each key's lines in number order.
        var parts = [[String]](repeating: [], count: 3)
        for (i, line) in lines.enumerated() where !line.allSatisfy(\.isWhitespace) {
            let part = Self.key(line).utf8.reduce(UInt32(5381)) { ($0 &* 33) ^ UInt32($1) } % 3
            parts[Int(part)].append("\(i + 1)\t\(line)")
        }
        #expect(parts.allSatisfy { $0.count > 500 })
        var merged: [(seq: Int, line: Substring)] = []
        for (p, part) in parts.enumerated() {
            let path = dir + "/part\(p).ndjson"
            try (part.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            let run = try await CLI.run(["filter", "--numbered", "--max-line-bytes", "1024", "--jobs", p == 0 ? "1" : "2", path])
            #expect(run.status == 0)
            #expect(run.stderr.isEmpty)
            #expect(run.lines.count == part.count)
            merged += run.stdout.split(separator: "\n").map { (Self.seq($0), $0) }
        }
        merged.sort { $0.seq < $1.seq }
        let text = merged.map { $0.line + "\n" }.joined()
        #expect(text == one.stdout)
        #expect(one.stdout.contains(#""seq":101,"error":{"code":"line-too-long","message":"line is 1500 bytes"#))
        #expect(one.stdout.contains(#"{"seq":201,"op":"tick""#))
    }

    @Test func aLineWithoutItsNumberIsAnError() async throws {
        let run = try await CLI.run(["filter", "--numbered"], input: "3\t{\"op\":\"tick\"}\n\n{\"op\":\"tick\"}\n")
        #expect(run.status == 0)
        #expect(run.lines.count == 2)
        #expect(run.lines.first == #"{"seq":3,"op":"tick","device":"","changes":[],"icon":0}"#)
        #expect(run.lines.last?.hasPrefix(#"{"seq":3,"error":{"code":"invalid-line-number","#) == true)
        let strict = try await CLI.run(["filter", "--numbered", "--strict"], input: "{\"op\":\"tick\"}\n")
        #expect(strict.status == 1)
    }
}
