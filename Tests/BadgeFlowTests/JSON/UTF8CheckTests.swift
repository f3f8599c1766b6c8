import Testing
@testable import BadgeFlow

private func firstInvalid(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBytes { UTF8Check.firstInvalid($0) }
}

@Suite struct UTF8CheckTests {
    @Test(arguments: [
        "", "a", "plain ASCII that is longer than one word", "é", "日本語", "😀", "mixed é 日本 😀 text",
        "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
    ])
    func wellFormedTextPasses(_ text: String) {
        #expect(firstInvalid(Array(text.utf8)) == nil)
    }

    @Test(
        arguments: [
            // (bytes, offset of the first bad sequence)
            ([0x80], 0),  // a lone continuation byte
            ([0x61, 0xC3], 1),  // truncated at the end
            ([0xC3, 0x28], 0),  // lead without continuation
            ([0xC0, 0x80], 0),  // overlong NUL
            ([0xC1, 0xBF], 0),  // overlong
            ([0xE0, 0x80, 0x80], 0),  // overlong three-byte
            ([0xED, 0xA0, 0x80], 0),  // UTF-16 surrogate D800
            ([0xED, 0xBF, 0xBF], 0),  // surrogate DFFF
            ([0xF0, 0x80, 0x80, 0x80], 0),  // overlong four-byte
            ([0xF4, 0x90, 0x80, 0x80], 0),  // above U+10FFFF
            ([0xF5, 0x80, 0x80, 0x80], 0),  // no such lead
            ([0xFF], 0),
            ([0xE2, 0x82], 0),  // truncated three-byte
            ([0xF0, 0x9F, 0x98], 0),  // truncated four-byte
            ([0xE2, 0x28, 0xA1], 0),
            ([0xF0, 0x9F, 0x28, 0x80], 0),
            ([0xF0, 0x9F, 0x98, 0x28], 0),
        ] as [([UInt8], Int)])
    func illFormedSequencesAreFound(_ bytes: [UInt8], _ offset: Int) {
        #expect(firstInvalid(bytes) == offset)
        // The same after an ASCII run that crosses word boundaries.
        for pad in [1, 7, 8, 9, 17, 31, 32, 33, 63, 64, 95] {
            #expect(firstInvalid(Array(repeating: 0x61, count: pad) + bytes) == pad + offset)
        }
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        // Bytes drawn from a pool that makes near-valid sequences likely.
        let pool: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
            0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(truncatingIfNeeded: state >> 1)
        }
        for _ in 0..<20_000 {
            let count = next() % 24
            let bytes = (0..<count).map { _ in pool[next() % pool.count] }
            let reference = String(validating: bytes, as: UTF8.self) != nil
            #expect((firstInvalid(bytes) == nil) == reference, "\(bytes)")
        }
    }

    @Test func findsTheFirstBadByteInARunOfMultiByteCharacters() {
        // Runs of two-, three- and four-byte characters are read one sequence after another
        // (not back through the ASCII loop): a bad sequence at any place in a run, and at the
        // end of the text, is found at its first byte; the run itself passes.
        let characters: [[UInt8]] = [[0xC3, 0xA9], [0xE4, 0xBB, 0x8A], [0xF0, 0x9F, 0x98, 0x80]]
        let bad: [[UInt8]] = [[0x80], [0xC0, 0x80], [0xE4, 0xBB], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF]]
        for count in 0...12 {
            let run = (0..<count).flatMap { characters[$0 % characters.count] }
            #expect(firstInvalid(run) == nil, "run of \(count)")
            #expect(firstInvalid(run + Array("ok".utf8)) == nil)
            for b in bad {
                for after: [UInt8] in [[], [0x61], [0xC3, 0xA9, 0xC3, 0xA9, 0xC3, 0xA9]] {
                    let bytes = run + b + after
                    #expect(firstInvalid(bytes) == run.count, "run of \(count), then \(b), then \(after)")
                    #expect(String(validating: bytes, as: UTF8.self) == nil)
                }
            }
        }
    }

    @Test func findsTheFirstBadByteAfterLongASCIIRuns() {
        // ASCII runs of 0...100 bytes put a bad or multi-byte sequence at every offset of the
        // 32- and 8-byte strides, and after it more ASCII, so a skipped byte would show.
        let tails: [([UInt8], Int?)] = [
            ([0xC3, 0xA9], nil), ([0xF0, 0x9F, 0x98, 0x80], nil), ([0x80], 0),
            ([0xE2, 0x82], 0), ([0xED, 0xA0, 0x80], 0), ([0xFF], 0),
        ]
        for run in 0...100 {
            for (tail, bad) in tails {
                let bytes = Array(repeating: 0x61, count: run) + tail + Array(repeating: 0x62, count: 40)
                #expect(firstInvalid(bytes) == bad.map { run + $0 }, "run \(run), tail \(tail)")
                #expect((firstInvalid(bytes) == nil) == (String(validating: bytes, as: UTF8.self) != nil))
            }
        }
    }

    @Test(
        arguments: [
            // Empty; ASCII of 1, 15 (the most a small string holds) and 16 bytes; non-ASCII short
            // and long; ill-formed bytes short and long (repaired as String(decoding:) repairs).
            [], Array("a".utf8), Array("root.chat.t2109".utf8), Array("root.chat.t21090".utf8),
            Array("é日".utf8), Array("mixed é 日本 😀 text, longer than a small string".utf8),
            [0x61, 0x80, 0x62], [0xE6, 0x97] + Array("a text longer than fifteen bytes".utf8), [0xF4, 0x90, 0x80, 0x80],
        ] as [[UInt8]])
    func stringIsWhatDecodingMakes(_ bytes: [UInt8]) {
        let made = bytes.withUnsafeBufferPointer { UTF8Check.string($0) }
        let decoded = String(decoding: bytes, as: UTF8.self)
        #expect(made == decoded)
        #expect(Array(made.utf8) == Array(decoded.utf8))
    }
}
