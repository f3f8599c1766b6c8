import Testing
@testable import BadgeFlow

@Suite struct JSONParserTests {
    private func parse(_ text: String) -> Result<JSONValue, JSONParseError> {
        var text = text
        let parser = JSONParser(maxDepth: 32)
        return text.withUTF8 { buf in
            parser.withDocument(UnsafeRawBufferPointer(buf)) { $0.map { $0.toValue() } }
        }
    }

    private func failure(_ text: String) -> JSONParseError? {
        if case .failure(let e) = parse(text) { return e }
        return nil
    }

    private func nested(_ levels: Int) -> String {
        String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels)
    }

    @Test func parsesObjectsKeepingMemberOrder() throws {
        let v = try parse(#"{"b":1,"a":[true,null,"x"],"c":2.5}"#).get()
        #expect(v == .object([("b", .int(1)), ("a", .array([.bool(true), .null, .string("x")])), ("c", .double(2.5))]))
    }

    /// Each kind of JSON value, read as an object member, has its `JSONRef.Kind`.
    @Test func eachValueHasItsKind() {
        let text = #"{"n":null,"b":false,"d":1.5,"i":-3,"o":{},"a":[],"s":"x"}"#
        let expected: [(String, JSONRef.Kind)] = [
            ("n", .null), ("b", .bool), ("d", .double), ("i", .int), ("o", .object), ("a", .array), ("s", .string),
        ]
        var bytes = Array(text.utf8)
        let kinds: [JSONRef.Kind?] = bytes.withUnsafeMutableBytes { buf in
            JSONParser().withDocument(UnsafeRawBufferPointer(buf)) { parsed in
                guard case .success(let root) = parsed, root.kind == .object else { return [] }
                return expected.map { root[$0.0]?.kind }
            }
        }
        #expect(kinds == expected.map(\.1))
    }

    @Test func acceptsThirtyTwoLevelsAndRejectsThirtyThree() {
        #expect(failure(nested(32)) == nil)
        #expect(failure(nested(33))?.reason == .tooDeep)
    }

    @Test func rejectsTrailingDataAfterTheValue() {
        let e = failure(#"{"a":1} xyz"#)
        #expect(e?.reason == .invalidJSON)
        #expect(e?.offset == 8)
    }

    @Test func acceptsTrailingWhitespace() {
        #expect(failure("{\"a\":1} \r\n\t") == nil)
    }

    @Test func reportsTruncatedInputAsUnexpectedEnd() {
        let e = failure(#"{"aps":"#)
        #expect(e?.reason == .invalidJSON)
        #expect(e?.message == "unexpected end of input")
    }

    @Test func rejectsEmptyInput() {
        #expect(failure("")?.reason == .invalidJSON)
    }

    @Test func parsesTopLevelScalarsIncludingNull() throws {
        #expect(try parse("12").get() == .int(12))
        #expect(try parse("null").get() == .null)
        #expect(try parse("\"s\"").get() == .string("s"))
    }

    @Test func rejectsInvalidUTF8InStrings() {
        #expect(failure("{\"a\":\"\u{00C3}\"}") == nil)  // valid two-byte UTF-8
        var bytes = Array(#"{"a":"x"}"#.utf8)
        bytes[6] = 0xC3
        bytes.insert(0x28, at: 7)
        let parser = JSONParser()
        let reason: JSONParseError.Reason? = bytes.withUnsafeBytes { buf in
            parser.withDocument(buf) { r in if case .failure(let e) = r { return e.reason } else { return nil } }
        }
        #expect(reason == .invalidUTF8)
    }

    @Test func theFirstProblemInByteOrderIsReported() {
        let parser = JSONParser()
        func reason(_ bytes: [UInt8]) -> (JSONParseError.Reason, Int)? {
            bytes.withUnsafeBytes { buf in
                parser.withDocument(buf) { r in if case .failure(let e) = r { return (e.reason, e.offset) } else { return nil } }
            }
        }
        // A raw UTF-16 surrogate (json-c alone accepts it) is invalid-utf8 at its first byte.
        let surrogate = Array(#"{"a":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8)
        #expect(reason(surrogate)?.0 == .invalidUTF8)
        #expect(reason(surrogate)?.1 == 6)
        // A syntax error before a bad byte wins; a bad byte before a syntax error wins.
        let syntaxFirst = Array(#"{"a" 1, "b":""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(reason(syntaxFirst)?.0 == .invalidJSON)
        let utf8First = Array(#"{"a":""#.utf8) + [0xFF] + Array(#"", "b" 1}"#.utf8)
        #expect(reason(utf8First)?.0 == .invalidUTF8)
        // Truncated after a bad byte: the bad byte is what is reported.
        let truncated = Array(#"{"a":""#.utf8) + [0xC3]
        #expect(reason(truncated)?.0 == .invalidUTF8)
    }

    @Test func rejectsSyntaxThatStrictModeForbids() {
        #expect(failure("{\"a\":1,}")?.reason == .invalidJSON)
        #expect(failure("{\"a\" 1}")?.reason == .invalidJSON)
    }

    @Test func reusesOneTokenerAcrossDocuments() throws {
        let parser = JSONParser()
        for text in ["{\"a\":", "{\"a\":1}", "[", "[2]"] {
            var t = text
            _ = t.withUTF8 { parser.withDocument(UnsafeRawBufferPointer($0)) { _ in 0 } }
        }
        var t = "{\"k\":\"v\"}"
        let v = t.withUTF8 { parser.withDocument(UnsafeRawBufferPointer($0)) { r in (try? r.get())?["k"]?.string } }
        #expect(v == "v")
    }

    @Test func resolvesPointersThroughObjectsAndArrays() throws {
        let parser = JSONParser()
        var t = #"{"a":{"b/c":[10,{"~d":"x"}]}}"#
        let found: String? = t.withUTF8 { buf in
            parser.withDocument(UnsafeRawBufferPointer(buf)) { r in
                guard let root = try? r.get(), let p = JSONPointer("/a/b~1c/1/~0d") else { return nil }
                return root.resolve(p)?.string
            }
        }
        #expect(found == "x")
    }

    @Test func flagsIntegersBeyondSixtyFourBits() {
        let parser = JSONParser()
        var t = #"{"n":99999999999999999999,"m":5}"#
        let flags: (Bool, Bool) = t.withUTF8 { buf in
            parser.withDocument(UnsafeRawBufferPointer(buf)) { r in
                let root = try? r.get()
                return (root?["n"]?.intOverflowed ?? false, root?["m"]?.intOverflowed ?? true)
            }
        }
        #expect(flags.0)
        #expect(!flags.1)
    }

    @Test func aKeyHoldingAnEscapedNULIsRefusedWhereItStarts() {
        // json-c would read the key as "alert", silently.
        let top = failure(#"{"alert\u0000x":"hi"}"#)
        #expect(top?.reason == .invalidJSON)
        #expect(top?.offset == 1)
        #expect(top?.message.contains("U+0000") == true)
        #expect(failure(#"{"aps":{"a":1, "k\u0000" :2}}"#)?.offset == 15)
        // json-c's strict mode still takes single-quoted keys.
        #expect(failure(#"{'a\u0000b':1}"#)?.offset == 1)
        #expect(failure(#"{"x":"it's", 'k\u0000"':2}"#)?.offset == 13)
        // The scan jumps from backslash to backslash: escapes before the key do not hide it,
        // nor does an escaped backslash just before it.
        #expect(failure(#"{"t":"a\"b\\c\n\t","k\u0000":1}"#)?.offset == 19)
        #expect(failure(#"{"\\":1,"\u0000":2}"#)?.offset == 8)
    }

    @Test func valuesWithNULAndEscapedBackslashesBeforeU0000AreKept() throws {
        #expect(try parse(#"{"a":"x\u0000y"}"#).get() == .object([("a", .string("x\u{0}y"))]))
        // `\\u0000` is a backslash and then the letters u0000: no U+0000 anywhere.
        #expect(try parse(#"{"k\\u0000":1}"#).get() == .object([("k\\u0000", .int(1))]))
        #expect(try parse(#"["\u0000", {"a": "\u0000"}]"#).get() == .array([.string("\u{0}"), .object([("a", .string("\u{0}"))])]))
    }

    @Test func serializesWithJSONCWithoutEscapingSlashes() {
        let v = JSONValue.object([("url", .string("a/b")), ("n", .int(3))])
        #expect(v.serialized() == #"{"url":"a/b","n":3}"#)
    }
}
