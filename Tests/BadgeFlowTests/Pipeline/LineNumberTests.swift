import Testing
@testable import BadgeFlow

private func split(_ text: String) -> (Int, String)? {
    var text = text
    return text.withUTF8 { bytes in
        LineNumber.split(UnsafeRawBufferPointer(bytes)).map { ($0.number, String(decoding: $0.rest, as: UTF8.self)) }
    }
}

/// `filter --numbered` in the library: the prefix, and the sequential and parallel loops.
@Suite struct LineNumberTests {
    @Test func aPrefixIsDigitsThenATab() {
        #expect(split("1\t{}")! == (1, "{}"))
        #expect(split("42\t")! == (42, ""))
        #expect(split("007\t{\"a\":1}")! == (7, "{\"a\":1}"))
        #expect(split("9223372036854775807\tx")! == (Int.max, "x"))
        #expect(split("12\t\tx")! == (12, "\tx"))
    }

    @Test(arguments: [
        "", "\t{}", "0\t{}", "00\t{}", "-1\t{}", "+1\t{}", " 1\t{}", "1 \t{}", "1{}", "12",
        "1x\t{}", "9223372036854775808\t{}", "99999999999999999999\t{}", "{\"op\":\"tick\"}",
    ])
    func anythingElseIsNoPrefix(_ line: String) {
        #expect(split(line) == nil)
    }

    private static let lines: [String] = {
        var lines: [String] = []
        for i in 0..<3_000 {
            let d = "d\(i % 5)"
            switch i % 9 {
            case 0: lines.append("")
            case 1: lines.append("not json")
            case 2: lines.append(#"{"op":"clear","device":"\#(d)","at":\#(i),"path":"root.chat.t\#(i % 13)"}"#)
            case 3: lines.append(#"{"op":"login","device":"\#(d)","at":\#(i)}"#)
            case 4: lines.append(#"{"op":"snapshot","device":"\#(d)","at":\#(i)}"#)
            default: lines.append(#"{"op":"push","device":"\#(d)","at":\#(i),"payload":{"aps":{"alert":"m","thread-id":"t\#(i % 13)"}}}"#)
            }
        }
        return lines
    }()

    /// Numbering every line with its own number (blank lines left bare) changes nothing.
    private static func numbered(_ lines: [String]) -> [String] {
        lines.enumerated().map { $0.element.isEmpty ? "" : "\($0.offset + 1)\t\($0.element)" }
    }

    private static func plain(_ lines: [String]) -> [UInt8] {
        var session = FilterSession(rules: .builtIn)
        for line in lines { session.feed(line) }
        return session.output.bytes
    }

    @Test func numberingEachLineWithItsOwnNumberChangesNothing() {
        var session = FilterSession(rules: .builtIn, numbered: true)
        for line in Self.numbered(Self.lines) { session.feed(line) }
        #expect(session.output.bytes == Self.plain(Self.lines))
    }

    @Test(arguments: [(1, 7), (2, 1), (2, 64), (4, 2048)])
    func theParallelLoopMatches(_ jobs: Int, _ batch: Int) {
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: jobs, linesPerBatch: batch, numbered: true)
        #expect(filter.results(of: Self.numbered(Self.lines)) == Self.plain(Self.lines))
        #expect(filter.seq == Self.lines.count)
    }

    @Test func aLineWithoutAPrefixIsAnErrorAtItsPhysicalNumber() {
        let input = ["5\t{\"op\":\"tick\"}", "", "  ", "{\"op\":\"tick\"}", "0\t{}", "8\t", "9\t  "]
        var session = FilterSession(rules: .builtIn, numbered: true)
        for line in input { session.feed(line) }
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: 2, linesPerBatch: 2, numbered: true)
        var out: [UInt8] = []
        for var line in input {
            line.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { out += $0.bytes } }
        }
        filter.finish { out += $0.bytes }
        let expected = """
            {"seq":5,"op":"tick","device":"","changes":[],"icon":0}
            {"seq":4,"error":{"code":"invalid-line-number","message":"\(LineNumber.invalid.message)","at":""}}
            {"seq":5,"error":{"code":"invalid-line-number","message":"\(LineNumber.invalid.message)","at":""}}

            """
        #expect(String(decoding: session.output.bytes, as: UTF8.self) == expected)
        #expect(out == session.output.bytes)
    }

    @Test func anOverlongLineKeepsItsNumberAndIsMeasuredWithoutIt() {
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: 1, maxLineBytes: 1024, numbered: true)
        var out: [UInt8] = []
        // Kept by a reader with the raised limit, but its text is over 1024 bytes.
        var kept = "77\t" + String(repeating: "x", count: 1025)
        kept.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { out += $0.bytes } }
        // Exactly at the limit: kept.
        var atLimit = "78\t{\"op\":\"tick\"" + String(repeating: " ", count: 1024 - 14) + "}"
        atLimit.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { out += $0.bytes } }
        filter.finish { out += $0.bytes }
        let text = String(decoding: out, as: UTF8.self)
        #expect(text.hasPrefix(#"{"seq":77,"error":{"code":"line-too-long","message":"line is 1025 bytes"#))
        #expect(text.contains(#"{"seq":78,"op":"tick""#))
    }
}
