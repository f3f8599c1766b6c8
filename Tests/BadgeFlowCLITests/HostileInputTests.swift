import BadgeFlowTestSupport
import Foundation
import Testing

/// Input nobody here controls: every bad line gets one error line with a clear code, the
/// run finishes, and memory stays bounded.
@Suite struct HostileInputTests {
    private func code(of line: String) -> String? {
        guard let data = line.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let error = object["error"] as? [String: Any]
        else { return nil }
        return error["code"] as? String
    }

    private func filterLines(_ lines: [String], _ extra: [String] = []) throws -> [String] {
        let r = try CLI.run(["filter"] + extra, input: lines.joined(separator: "\n") + "\n")
        #expect(r.status == 0)
        return r.lines
    }

    @Test func eachHostileLineGetsAnErrorWithAClearCode() throws {
        let cases: [(String, String)] = [
            (#"{"aps":{"alert":"cut"#, "invalid-json"),
            (String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000), "too-deep"),
            (#"{"aps":{"badge":99999999999999999999}}"#, "out-of-range"),
            (#"{"aps":{"badge":1e400}}"#, "wrong-type"),
            (#"{"op":"set","path":"root.a","count":1e400}"#, "wrong-type"),
            (#"{"op":"set","path":"root.a","count":99999999999999999999}"#, "wrong-type"),
            (#"{"op":"tick","at":1e400}"#, "invalid-time"),
            (#"{"op":"set","path":"root."# + Array(repeating: "s", count: 3000).joined(separator: ".") + #""}"#, "invalid-path"),
            (#"{"aps":{"alert":"x","thread-id":""# + Array(repeating: "s", count: 2000).joined(separator: ".") + #""}}"#, "invalid-path"),
            ("{\"aps\":{\"alert\":\"a\u{0}b\"}}", "invalid-json"),
        ]
        let lines = try filterLines(cases.map(\.0))
        #expect(lines.count == cases.count)
        for (i, (input, expected)) in cases.enumerated() where i < lines.count {
            #expect(code(of: lines[i]) == expected, "line \(i + 1): \(input.prefix(60)) → \(lines[i].prefix(200))")
        }
    }

    @Test func invalidUTF8IsAnErrorAndTheStreamGoesOn() async throws {
        var bytes = Data(#"{"aps":{"alert":"ab"}}"#.utf8)
        bytes[17] = 0xFF
        bytes.append(contentsOf: Array("\n{\"op\":\"tick\"}\n".utf8))
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try bytes.write(to: URL(fileURLWithPath: dir + "/bad.ndjson"))
        let r = try await CLI.run(["filter", dir + "/bad.ndjson"])
        #expect(r.lines.count == 2)
        #expect(code(of: r.lines[0]) == "invalid-utf8")
        #expect(r.lines[1].contains("\"op\":\"tick\""))
    }

    @Test func loneSurrogatesBecomeReplacementCharacters() throws {
        let lines = try filterLines([#"{"aps":{"alert":"x","thread-id":"\ud800"}}"#])
        #expect(lines.count == 1)
        #expect(lines.first?.contains("root.chat.\u{FFFD}") == true)
    }

    /// Writes `huge.ndjson` in `dir`: a 10 MB line (a push whose alert is 10 MiB of `x`), then
    /// a tick; its path.
    static func writeHugeLine(in dir: String) throws -> String {
        let path = dir + "/huge.ndjson"
        var data = Data(#"{"aps":{"alert":""#.utf8)
        data.append(Data(repeating: UInt8(ascii: "x"), count: 10 << 20))
        data.append(Data(#""}}"#.utf8))
        data.append(Data("\n{\"op\":\"tick\"}\n".utf8))
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aTenMegabyteLineIsAnsweredAsTooLong() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let path = try Self.writeHugeLine(in: dir)
        let r = try await CLI.run(["filter", path])
        #expect(r.lines.count == 2)
        #expect(code(of: r.lines[0]) == "line-too-long")
        #expect(r.lines[1].contains("\"op\":\"tick\""))
    }

    /// Peak memory grows far less than a 10 MB line over a run on a tiny input (measured
    /// with `/usr/bin/time`, skipped without it).
    @Test(.enabled(if: TimedRun.available, "needs /usr/bin/time"))
    func aTenMegabyteLineIsNotHeldInMemory() throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let path = try Self.writeHugeLine(in: dir)
        let small = dir + "/small.ndjson"
        try "{\"op\":\"tick\"}\n".write(toFile: small, atomically: true, encoding: .utf8)
        let baseline = try TimedRun.peakKilobytes(CLI.executable, ["filter", small])
        let timed = try TimedRun.peakKilobytes(CLI.executable, ["filter", path])
        #expect(baseline > 0 && timed > 0)
        #expect(timed - baseline < 4_000, "peak RSS \(timed) KB against \(baseline) KB for a tiny input")
    }

    @Test func unusualButFineLinesAreProcessedNormally() async throws {
        let r = try await CLI.run(
            ["filter"], input: "\u{FEFF}{\"op\":\"login\"}\r\n\r\n{\"aps\":{\"alert\":\"é 😀\",\"thread-id\":\"a.b%c\"}}")
        #expect(r.lines.count == 2)
        #expect(r.lines.allSatisfy { !$0.contains("\"error\"") })
        #expect(r.lines[1].contains("root.chat.a%2Eb%25c"))
    }

    @Test func duplicateKeysAreAnErrorAtTheSecondOne() throws {
        // PayloadValidation: json-c would keep the last value and other readers the first, so neither is
        // taken (this test kept the last value before duplicate-key).
        let lines = try filterLines([#"{"aps":{"alert":"x","thread-id":"first","thread-id":"second"}}"#])
        #expect(lines.first?.contains(#""code":"duplicate-key""#) == true, "\(lines)")
        #expect(lines.first?.contains(#""at":"/aps/thread-id""#) == true, "\(lines)")
        #expect(lines.first?.contains("root.chat") == false)
    }
}

/// Peak RSS of a command, read from /usr/bin/time.
enum TimedRun {
    struct Missing: Error {}

    /// Whether `/usr/bin/time` is there to measure with.
    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/time") }

    static func peakKilobytes(_ executable: String, _ arguments: [String]) throws -> Int {
        guard available else { throw Missing() }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        p.arguments = ["-f", "%M", executable] + arguments
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        return Int(text.trimmingCharacters(in: .whitespaces)) ?? -1
    }
}
