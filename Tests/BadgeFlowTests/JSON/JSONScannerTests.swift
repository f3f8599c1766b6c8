import Testing

@testable import BadgeFlow

/// The byte scanner: members and value ends of JSON text, keys with escapes, text cut
/// short, and what the stamp and the streamed state load build on it.
@Suite struct JSONScannerTests {
    /// The members of the object at `open`: each key's bytes (quotes included), whether
    /// it has escapes, and its value's bytes; nil when the scan gives up.
    private func members(_ text: String, from open: Int = 0) -> [(String, Bool, String)]? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { b in
            let scan = JSONScanner(b)
            var out: [(String, Bool, String)] = []
            let end = scan.forEachMember(of: open) { m in
                guard let end = scan.valueEnd(m.value) else { return nil }
                out.append(
                    (
                        String(decoding: b[m.key], as: UTF8.self), m.escaped,
                        String(decoding: b[m.value..<end], as: UTF8.self)
                    ))
                return end
            }
            return end == nil ? nil : out
        }
    }

    @Test func findsEachMemberWithItsValueWhateverTheSpacing() throws {
        let found = try #require(members(#" { "a" : 1 ,"b\"c":{"x":[1,"]}"]} , "d":"e\\"\#t}"#))
        #expect(found.map(\.0) == [#""a""#, #""b\"c""#, #""d""#])
        #expect(found.map(\.1) == [false, true, false])
        #expect(found.map(\.2) == ["1", #"{"x":[1,"]}"]}"#, #""e\\""#])
        #expect(members("{}")?.isEmpty == true)
        #expect(members(" {\n}")?.isEmpty == true)
    }

    @Test(arguments: [#"{"a":1"#, #"{"a" 1}"#, #"{"a":"x}"#, #"{"a":{"b":1}"#, #"["a"]"#, "", "{a:1}"])
    func givesUpOnTextThatIsNotAnObjectThere(_ text: String) {
        #expect(members(text) == nil)
    }

    @Test func endsOfValues() {
        let cases: [(String, Int?)] = [
            (#""a\"b" x"#, 6), ("[1,[2,{}]] x", 10), ("12.5e3,", 6), ("true}", 4), (#"{"a":"}"}"#, 9),
            (#""cut"#, nil), ("[1,2", nil), (",", nil), ("", nil),
        ]
        for (text, end) in cases {
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBytes { JSONScanner($0).valueEnd(0) } == end, "\(text)")
        }
    }

    @Test func plainKeysAreReadWithoutJSONC() {
        let text = #"{"abc":1,"a\u0062":2,"é":3}"#
        let bytes = Array(text.utf8)
        let keys: [String?] = bytes.withUnsafeBytes { b in
            let scan = JSONScanner(b)
            var out: [String?] = []
            _ = scan.forEachMember(of: 0) { m in
                out.append(scan.plainKey(m.key))
                return scan.valueEnd(m.value)
            }
            return out
        }
        #expect(keys == ["abc", nil, nil])
    }

    /// The U+0000 rule: a key holding `\u0000` is found, a value holding it or an escaped
    /// backslash before `u0000` is not.
    @Test func findsTheFirstKeyHoldingNUL() {
        let cases: [(String, Int?)] = [
            (#"{"a\u0000":1}"#, 1), (#"{"a":"\u0000"}"#, nil), (#"{"a":"\\u0000"}"#, nil),
            (#"{"v":"\u0000","k\u0000" : 2}"#, 14), (#"{'k\u0000':1}"#, 1), ("{}", nil),
        ]
        for (text, offset) in cases {
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBytes { JSONScanner.keyHoldingNUL($0) } == offset, "\(text)")
        }
    }

    /// The stamp's cut keeps every byte but the badge's value; escaped or repeated keys
    /// where it looks give no cut (the caller writes from the parsed value instead).
    @Test func theStampCutsWhereTheBadgeGoes() {
        func cut(_ text: String, envelope: Bool = false) -> String? {
            Array(text.utf8).withUnsafeBytes { PayloadStamp.cut($0, envelope: envelope)?.stamped(7) }
        }
        #expect(cut(#" {"aps" : {"badge" : 1 , "alert":"x"} } "#) == #"{"aps" : {"badge" : 7 , "alert":"x"} }"#)
        #expect(cut(#"{"aps":{"alert":"x"},"z":1}"#) == #"{"aps":{"alert":"x","badge":7},"z":1}"#)
        #expect(cut(#"{"aps":{ }}"#) == #"{"aps":{ "badge":7}}"#)
        #expect(cut(#"{"op":"push","payload":{"aps":{}}}"#, envelope: true) == #"{"aps":{"badge":7}}"#)
        #expect(cut(#"{"\u0061ps":{"badge":1}}"#) == nil)
        #expect(cut(#"{"aps":{"badge":1,"badge":2}}"#) == nil)
        #expect(cut(#"{"aps":{"b\u0061dge":1}}"#) == nil)
        #expect(cut(#"{"aps":1}"#) == nil)
    }
}
