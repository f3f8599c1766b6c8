import Testing

@testable import BadgeFlow

/// The precheck that spares the usual text the duplicate/NaN byte scan: each of its paths,
/// and that whatever it does not clear the scan still reports.
@Suite struct JSONTextPrecheckTests {
    /// What the precheck decides for `text`, its counts, and the scan's finding (through the
    /// precheck), for a text json-c accepts.
    private func check(
        _ text: String
    ) -> (clears: Bool, bytes: JSONTextPrecheck.Bytes, tree: JSONTextPrecheck.Tally, problem: JSONTextProblem?)? {
        var text = text
        let parser = JSONParser(maxDepth: 32)
        return text.withUTF8 { buf in
            let bytes = UnsafeRawBufferPointer(buf)
            return parser.withDocument(bytes) { result in
                guard case .success(let root) = result else { return nil }
                var tree = JSONTextPrecheck.Tally()
                root.tally(into: &tree)
                return (
                    JSONTextPrecheck.clears(bytes, root: root), JSONTextPrecheck.count(bytes), tree,
                    JSONScanner.firstProblem(bytes, root: root)
                )
            }
        }
    }

    @Test func clearsAPlainLineByItsQuotes() throws {
        let r = try #require(check(#"{"aps":{"badge":3,"alert":{"title":"Hi","body":"x"}},"tags":["a","b",1.5]}"#))
        #expect(r.bytes == .init(quotes: 20, apostrophe: false))
        #expect(r.tree == .init(members: 6, strings: 4, nonFinite: false))
        #expect(r.clears)
        #expect(r.problem == nil)
    }

    @Test func clearsAColonInsideAString() throws {
        let r = try #require(check(#"{"url":"https://example.com:8443/a","at":"12:30:00","n":{"k":"v"}}"#))
        #expect(r.clears)
        #expect(r.problem == nil)
    }

    @Test func clearsEscapedQuotesAndBackslashes() throws {
        // `\\"` ends a string (an escaped backslash), `\\\\"` too, `\\\"` does not.
        let r = try #require(check(#"{"a":"say \"hi\" C:\\","b":{"c":"\u00e9:\\\\"},"d":"x\\\"y","e":"\\\\\\"}"#))
        #expect(r.bytes.quotes == 2 * (r.tree.members + r.tree.strings))
        #expect(r.clears)
        #expect(r.problem == nil)
    }

    @Test func clearsAnApostropheInProse() throws {
        let r = try #require(check(#"{"alert":"don't","name":"O'Brien"}"#))
        #expect(!r.bytes.apostrophe)
        #expect(r.clears)
        #expect(r.problem == nil)
    }

    @Test func leavesADuplicateNestedKeyToTheScan() throws {
        let r = try #require(check(#"{"aps":{"badge":1,"alert":"a:b","badge":2}}"#))
        #expect(!r.clears)
        #expect(r.problem?.kind == .duplicateKey)
        #expect(r.problem?.pointer == "/aps/badge")
    }

    @Test func leavesADuplicateKeyWithABackslashToTheScan() throws {
        let r = try #require(check(#"{"a":{"k":"\"","k":"\\"}}"#))
        #expect(!r.clears)
        #expect(r.problem?.kind == .duplicateKey)
    }

    @Test(arguments: [#"{"a":NaN}"#, #"{"a":[1,Infinity]}"#, #"{"a":{"b":-Infinity}}"#])
    func leavesANonFiniteNumberToTheScan(_ text: String) throws {
        let r = try #require(check(text))
        #expect(r.tree.nonFinite)
        #expect(!r.clears)
        #expect(r.problem?.kind == .nonFinite)
    }

    @Test(arguments: [#"{'a"b"':1,"c":2}"#, #"{"b":{"a":1, 'c"d"':2}}"#, #"{'c':2}"#])
    func leavesASingleQuotedStringToTheScan(_ text: String) throws {
        let r = try #require(check(text))
        #expect(r.bytes.apostrophe)
        #expect(!r.clears)
        #expect(r.problem?.kind == .singleQuoted)
    }

    @Test func leavesAnApostropheAfterACommaInProseToTheScan() throws {
        let r = try #require(check(#"{"alert":"yes, 'maybe'"}"#))
        #expect(!r.clears)
        #expect(r.problem == nil)
    }

    @Test func countsEveryByteOfALongText() {
        let text = Array(repeating: UInt8(ascii: "\""), count: 1000) + Array("a\"b".utf8) + Array(#"\\"\\\\""#.utf8)
        let bytes = text.withUnsafeBytes { JSONTextPrecheck.count($0) }
        #expect(bytes == .init(quotes: 1003, apostrophe: false))
    }
}
