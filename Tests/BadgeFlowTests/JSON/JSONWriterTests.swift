import Testing
@testable import BadgeFlow

@Suite struct JSONWriterTests {
    private func text(_ body: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        body(&w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// The pretty layout of compact text is json-c's, byte for byte, at any depth: empty
    /// objects and arrays, escapes and control characters, non-ASCII text, numbers as written.
    @Test(arguments: [0, 1, 2])
    func laysOutCompactTextAsJSONCDoes(level: Int) throws {
        var w = JSONWriter()
        w.beginObject()
        w.key("clock")
        w.stateTime(1_795_425_200.1)
        w.key("marks")
        w.beginObject()
        w.key("root.chat.a\"b\\c\u{1}\n\t/é")
        w.int(2)
        w.key("root.news")
        w.string("dot")
        w.endObject()
        w.key("empty")
        w.beginObject()
        w.endObject()
        w.key("list")
        w.beginArray()
        w.endArray()
        w.key("nested")
        w.beginArray()
        w.beginObject()
        w.key("x")
        w.beginArray()
        w.string("{[,:]}")
        w.bool(true)
        w.null()
        w.int(-12)
        w.endArray()
        w.endObject()
        w.beginArray()
        w.endArray()
        w.endArray()
        w.endObject()
        var pretty: [UInt8] = []
        w.withUnsafeBytes { JSONWriter.appendPretty($0, level: level, to: &pretty) }
        // json-c lays out the same value nested `level` deep inside single-member objects.
        var wrapped = String(decoding: w.bytes, as: UTF8.self)
        for _ in 0..<level { wrapped = #"{"k":"# + wrapped + "}" }
        var expected = try JSONValue.parse(wrapped).serialized(pretty: true)
        for j in 0..<level {
            let indent = String(repeating: " ", count: 2 * j)
            let prefix = "{\n  " + indent + #""k": "#, suffix = "\n" + indent + "}"
            try #require(expected.hasPrefix(prefix) && expected.hasSuffix(suffix))
            expected = String(expected.dropFirst(prefix.count).dropLast(suffix.count))
        }
        #expect(String(decoding: pretty, as: UTF8.self) == expected)
    }

    @Test func placesCommasBetweenMembersAndElements() {
        let s = text { w in
            w.beginObject()
            w.key("a"); w.int(1)
            w.key("b"); w.beginArray(); w.int(1); w.int(-20); w.string("x"); w.endArray()
            w.key("c"); w.beginObject(); w.endObject()
            w.endObject()
            w.newline()
            w.beginObject(); w.key("d"); w.null(); w.endObject()
        }
        #expect(s == "{\"a\":1,\"b\":[1,-20,\"x\"],\"c\":{}}\n{\"d\":null}")
    }

    @Test func escapesQuotesBackslashesAndControlCharacters() {
        let s = text { $0.string("q\"b\\n\n\t\u{01}/é😀") }
        #expect(s == #""q\"b\\n\n\t\u0001/é😀""#)
    }

    @Test(arguments: ["\"", "\\", "\n", "\u{1F}", "\u{0}"])
    func findsACharacterToEscapeAtEveryPosition(_ special: String) throws {
        // Every position of a 23-byte string: each lane of the 8-byte scan and the tail.
        for i in 0..<23 {
            let raw = String(repeating: "a", count: i) + special + String(repeating: "\u{7F}é", count: (22 - i) / 3)
            let written = text { $0.string(raw) }
            #expect(written != "\"" + raw + "\"")
            #expect(try JSONValue.parse(written) == .string(raw))
        }
        // Bytes just above the limits are not escaped.
        #expect(text { $0.string(" !#[]~\u{7F}abcdefgh") } == "\" !#[]~\u{7F}abcdefgh\"")
    }

    @Test func writesIntegersAtTheLimits() {
        #expect(text { $0.int(Int64.max) } == "9223372036854775807")
        #expect(text { $0.int(Int64.min) } == "-9223372036854775808")
        #expect(text { $0.int(0) } == "0")
    }

    @Test func writesIntegersAroundEveryDigitCountBoundary() {
        var values: [Int64] = [0, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var p: Int64 = 1
        for _ in 0..<18 {
            values += [p - 1, p, p + 1, -(p - 1), -p, -(p + 1)]
            p *= 10
        }
        for v in values {
            #expect(text { $0.int(v) } == String(v))
        }
    }

    @Test func writesIntegersAroundEveryBitLength() {
        // The digit count is estimated from the bit length, then corrected against a power of
        // ten: every power of two, its neighbours and 10^18, on both sides of zero.
        var values: [Int64] = [999_999_999_999_999_999, 1_000_000_000_000_000_000, 1_000_000_000_000_000_001]
        for k in 0..<63 {
            let p = Int64(1) << k
            values += [p - 1, p, p + 1, -(p - 1), -p, -(p + 1)]
        }
        for v in values {
            #expect(text { $0.int(v) } == String(v))
        }
    }

    @Test func writesEveryNumberOfARangeThatUsesEachDigitPair() {
        // Every pair "00"..."99" in every position of up to five digits, and negatives.
        var w = JSONWriter()
        var expected = ""
        for v in Int64(-1_000)...20_000 {
            w.int(v)
            w.newline()
            expected += "\(v)\n"
        }
        #expect(String(decoding: w.bytes, as: UTF8.self) == expected)
    }

    @Test func escapesExactlyLikeAReferenceForEveryLengthAndPosition() {
        // Strings of 0...24 bytes, clean or with one special byte at each position: the
        // word-at-a-time scan, its overlapping last word and the short-string loop.
        func reference(_ s: String) -> String {
            var out = "\""
            for b in s.utf8 {
                switch b {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x01: out += "\\u0001"
                default: out.unicodeScalars.append(Unicode.Scalar(b))
                }
            }
            return out + "\""
        }
        for n in 0...24 {
            for special in ["\"", "\\", "\n", "\u{01}"] {
                for position in -1..<n {
                    var chars = Array(repeating: "a", count: n)
                    if position >= 0 { chars[position] = special }
                    let raw = chars.joined()
                    #expect(text { $0.string(raw) } == reference(raw), "n \(n), at \(position)")
                }
            }
        }
    }

    @Test func quotesRawBytesLikeAReferenceForEveryShortLength() {
        // writeQuoted on bytes: texts of 4...16 bytes are checked and copied as two
        // overlapping words. Every byte class at every position, in ASCII and non-ASCII filler.
        let hex = Array("0123456789abcdef".utf8)
        func reference(_ bytes: [UInt8]) -> [UInt8] {
            var out: [UInt8] = [0x22]
            for b in bytes {
                switch b {
                case 0x22, 0x5C: out += [0x5C, b]
                case 0x0A: out += Array("\\n".utf8)
                case 0x0D: out += Array("\\r".utf8)
                case 0x09: out += Array("\\t".utf8)
                case 0x08: out += Array("\\b".utf8)
                case 0x0C: out += Array("\\f".utf8)
                case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 0xF)]]
                default: out.append(b)
                }
            }
            return out + [0x22]
        }
        let specials: [UInt8] = [0x00, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x5C, 0x7F, 0x80, 0xC3, 0xFF]
        for filler: UInt8 in [0x62, 0xE4] {
            for n in 0...20 {
                for special in specials {
                    for position in -1..<n {
                        var bytes = [UInt8](repeating: filler, count: n)
                        if position >= 0 { bytes[position] = special }
                        var out = [UInt8](repeating: 0, count: JSONWriter.quotedBound(n))
                        let written = bytes.withUnsafeBufferPointer { s in
                            out.withUnsafeMutableBufferPointer { o in o.baseAddress.map { JSONWriter.writeQuoted(s, to: $0) } ?? 0 }
                        }
                        #expect(Array(out[0..<written]) == reference(bytes), "n \(n), \(special) at \(position)")
                    }
                }
            }
        }
    }

    @Test func writesIntegralDoublesWithoutAFraction() {
        #expect(text { $0.double(3) } == "3")
        #expect(text { $0.double(0.5) } == "0.5")
        #expect(text { $0.double(.infinity) } == "null")
    }

    @Test func writtenTextParsesBackToTheSameValue() throws {
        let v = JSONValue.object([("k\"ey", .array([.string("a\u{0}b"), .int(-3), .bool(false), .double(1.25)]))])
        let s = text { $0.value(v) }
        #expect(try JSONValue.parse(s) == v)
    }
}
