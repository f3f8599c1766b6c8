import BadgeFlowTestSupport
import Testing
@testable import BadgeTree

@Suite struct BadgePathTests {
    // MARK: - Grammar

    @Test func acceptsDottedSegments() throws {
        let path = try BadgePath("root.chat.alice")
        #expect(path.rawValue == "root.chat.alice")
        #expect(path.description == "root.chat.alice")
    }

    @Test func acceptsASingleSegment() throws {
        #expect(try BadgePath("root").segments == ["root"])
    }

    @Test func rejectsTheEmptyPath() {
        #expect(throws: BadgePathError.self) { try BadgePath("") }
    }

    @Test(arguments: [".", ".root", "root.", "root..chat", "root.chat.", "..", "root.chat..alice"])
    func rejectsAnEmptySegment(_ text: String) {
        #expect(throws: BadgePathError.self) { try BadgePath(text) }
    }

    @Test(arguments: ["root.a\u{0}b", "root.a\nb", "root.\tchat", "root.chat\r", "root.a\u{1B}b", "root.a\u{1F}", "root.del\u{7F}"])
    func rejectsControlCharacters(_ text: String) {
        #expect(throws: BadgePathError.self) { try BadgePath(text) }
    }

    @Test func acceptsSpacesPercentAndNonASCIISegments() throws {
        for text in ["root.a b", "root.100%", "root.Ünïcødé", "root.💬.日本語", "root.%2E", "root.~!@#$^&*()"] {
            #expect(try BadgePath(text).rawValue == text)
        }
    }

    @Test func acceptsSixteenSegmentsButNotSeventeen() throws {
        let sixteen = (["root"] + (1..<16).map { "s\($0)" }).joined(separator: ".")
        #expect(try BadgePath(sixteen).segments.count == 16)
        #expect(throws: BadgePathError.self) { try BadgePath(sixteen + ".x") }
    }

    @Test func accepts1024BytesButNot1025() throws {
        let exact = "root." + String(repeating: "a", count: 1024 - 5)
        #expect(exact.utf8.count == 1024)
        #expect(try BadgePath(exact).rawValue == exact)
        #expect(throws: BadgePathError.self) { try BadgePath(exact + "a") }
    }

    @Test func countsBytesNotCharacters() throws {
        // "é" is two bytes: 5 + 2 * 509 = 1023 bytes passes, one more "é" makes 1025.
        let fits = "root." + String(repeating: "é", count: 509)
        #expect(fits.utf8.count == 1023)
        #expect(try BadgePath(fits).rawValue == fits)
        let tooLong = fits + "é"
        #expect(tooLong.count == 515)
        #expect(throws: BadgePathError.self) { try BadgePath(tooLong) }
    }

    @Test func isCaseSensitive() throws {
        let lower = try BadgePath("root.chat")
        let upper = try BadgePath("root.Chat")
        #expect(lower != upper)
        #expect(Set([lower, upper]).count == 2)
    }

    @Test func errorsNameThePathAndTheReason() {
        #expect {
            try BadgePath("root..x")
        } throws: { error in
            guard let error = error as? BadgePathError else { return false }
            return error.path == "root..x" && error.reason.contains("segment 2 is empty")
                && error.description.hasPrefix("invalid path \"root..x\"")
        }
    }

    /// What `validate` must answer for `text`, from the grammar as written (segments split
    /// on `.`, checked in order): nil for a valid path, else the reason.
    private static func expectedReason(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return "a path must not be empty" }
        if bytes.count > BadgePath.maxBytes {
            return "a path has at most \(BadgePath.maxBytes) bytes, this one has \(bytes.count)"
        }
        // Read left to right: a dot ends a segment (which must not be empty) and starts the
        // next (which must be within the limit); a control character is refused where it is.
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for (n, segment) in segments.enumerated() {
            if n > 0 {
                if segments[n - 1].isEmpty { return "segment \(n) is empty" }
                if n + 1 > BadgePath.maxSegments { return "a path has at most \(BadgePath.maxSegments) segments" }
            }
            if segment.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "segment \(n + 1) holds a control character" }
        }
        if segments[segments.count - 1].isEmpty { return "segment \(segments.count) is empty" }
        return nil
    }

    @Test func validateAnswersAsTheGrammarSays() {
        // Boundaries first: empty segments at each end and inside, the segment limit, control
        // characters (and DEL), non-ASCII bytes that are not control characters.
        let many = (1...BadgePath.maxSegments).map { "s\($0)" }
        var cases = [
            "root", "root.a", ".root", "root.", "root..a", ".", "..", "a.b.c", "root.\u{1F}", "root.a\u{7F}b",
            "root.é.日本", "root.a b", many.joined(separator: "."), (many + ["x"]).joined(separator: "."),
            (many + [""]).joined(separator: "."), String(repeating: "a", count: BadgePath.maxBytes),
            String(repeating: "a", count: BadgePath.maxBytes + 1),
        ]
        // Then random texts over an alphabet that hits every branch.
        var rng = SplitMix64(seed: 26)
        let alphabet: [Character] = ["a", "b", ".", ".", "\u{1F}", "\u{7F}", "é", " "]
        for _ in 0..<2_000 {
            let length = Int(rng.next() % 24)
            cases.append(String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }))
        }
        for text in cases {
            let expected = Self.expectedReason(text)
            do {
                try BadgePath.validate(text)
                #expect(expected == nil, "\(text.debugDescription) accepted, expected: \(expected ?? "")")
            } catch {
                #expect(error.reason == expected, "\(text.debugDescription)")
            }
        }
    }

    @Test func validateAgreesWithInit() {
        #expect(throws: Never.self) { try BadgePath.validate("root.ok") }
        #expect(throws: BadgePathError.self) { try BadgePath.validate("root.") }
    }

    // MARK: - Structure

    @Test func splitsIntoSegments() throws {
        let path = try BadgePath("root.chat.alice")
        #expect(path.segments == ["root", "chat", "alice"])
        #expect(path.name == "alice")
    }

    @Test func parentDropsTheLastSegment() throws {
        let path = try BadgePath("root.chat.alice")
        #expect(path.parent?.rawValue == "root.chat")
        #expect(path.parent?.parent?.rawValue == "root")
        #expect(path.parent?.parent?.parent == nil)
    }

    @Test func appendingAddsAChild() throws {
        let path = try BadgePath("root.chat").appending("bob")
        #expect(path.rawValue == "root.chat.bob")
        #expect(path.parent?.rawValue == "root.chat")
    }

    @Test func ordersByUTF8Bytes() throws {
        let paths = try ["root.b", "root.a", "root.B", "root.é", "root.a b", "root.a.z"].map { try BadgePath($0) }
        #expect(paths.sorted().map(\.rawValue) == ["root.B", "root.a", "root.a b", "root.a.z", "root.b", "root.é"])
    }

    // MARK: - Escaping

    @Test func escapesPercentDotAndControlCharacters() {
        #expect(BadgePath.escapeSegment("100%") == "100%25")
        #expect(BadgePath.escapeSegment("v1.2") == "v1%2E2")
        #expect(BadgePath.escapeSegment("a\nb\u{0}c\u{1F}\u{7F}") == "a%0Ab%00c%1F%7F")
        #expect(BadgePath.escapeSegment("%2E") == "%252E")
    }

    @Test func leavesOtherTextAlone() {
        for text in ["", "alice", "a b", "Ünïcødé", "💬", "~/-_+"] {
            #expect(BadgePath.escapeSegment(text) == text)
        }
    }

    @Test func anEscapedNonEmptyValueIsOneValidSegment() throws {
        for value in ["a.b", "..", "%", "x\ny", "\u{0}", ".hidden.", "日本.語"] {
            let segment = BadgePath.escapeSegment(value)
            let path = try BadgePath("root." + segment)
            #expect(path.segments.count == 2)
        }
    }

    @Test func unescapesHexOfEitherCase() {
        #expect(BadgePath.unescapeSegment("v1%2e2%2E3") == "v1.2.3")
        #expect(BadgePath.unescapeSegment("100%25") == "100%")
    }

    @Test func unescapeKeepsMalformedEscapes() {
        #expect(BadgePath.unescapeSegment("%") == "")  // the segment of an empty id (child(""))
        #expect(BadgePath.unescapeSegment("%2") == "%2")
        #expect(BadgePath.unescapeSegment("%zz") == "%zz")
        #expect(BadgePath.unescapeSegment("a%") == "a%")
    }

    @Test func escapeRoundTripsThroughUnescape() {
        var samples = [
            "", "%", "%%", "%25", "%2E", ".", "a.b.c", "\u{0}", "\u{7F}", "tab\there", "100%.", "é.ü%",
            "💬.🎉", "日本語.テキスト", "\r\n", "%%2E%", "plain",
        ]
        // Every ASCII byte alone and between two-byte and four-byte characters.
        for b in UInt8(0)..<128 {
            let s = String(decoding: [b], as: UTF8.self)
            samples.append(s)
            samples.append("é" + s + "💬" + s)
        }
        // Deterministic pseudo-random mixes.
        let alphabet: [String] = ["a", ".", "%", "2", "E", "\u{1}", "\n", "é", "💬", "日", " ", "\u{7F}", "F"]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<500 {
            var s = ""
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(seed >> 59)
            for _ in 0..<length {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                s += alphabet[Int((seed >> 33) % UInt64(alphabet.count))]
            }
            samples.append(s)
        }
        for value in samples {
            let escaped = BadgePath.escapeSegment(value)
            #expect(!escaped.utf8.contains(UInt8(ascii: ".")))
            #expect(!escaped.utf8.contains { $0 < 0x20 || $0 == 0x7F })
            #expect(BadgePath.unescapeSegment(escaped) == value, "round trip of \(value.debugDescription)")
        }
    }
}
