import Testing
@testable import BadgeFlow

@Suite struct JSONWriterTests {
    private func text(_ body: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        body(&w)
        return String(decoding: w.bytes, as: UTF8.self)
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

    @Test func writesIntegersAtTheLimits() {
        #expect(text { $0.int(Int64.max) } == "9223372036854775807")
        #expect(text { $0.int(Int64.min) } == "-9223372036854775808")
        #expect(text { $0.int(0) } == "0")
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
