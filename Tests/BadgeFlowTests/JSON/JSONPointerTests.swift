import Testing
@testable import BadgeFlow

@Suite struct JSONPointerTests {
    @Test func splitsAndUnescapesTokens() throws {
        let p = try #require(JSONPointer("/a~1b/~0c/0/01"))
        #expect(p.tokens.map(\.key) == ["a/b", "~c", "0", "01"])
        #expect(p.tokens.map(\.index) == [nil, nil, 0, nil])
    }

    @Test func theEmptyPointerIsTheWholeDocument() throws {
        #expect(try #require(JSONPointer("")).tokens.isEmpty)
    }

    @Test func rejectsPointersWithoutALeadingSlashOrWithABadTilde() {
        #expect(JSONPointer("aps") == nil)
        #expect(JSONPointer("/a~2") == nil)
        #expect(JSONPointer("/a~") == nil)
    }

    @Test func escapesMemberNames() {
        #expect(JSONPointer.escape("a/b~c") == "a~1b~0c")
        #expect(JSONPointer.appending("/aps", "x/y") == "/aps/x~1y")
    }
}
