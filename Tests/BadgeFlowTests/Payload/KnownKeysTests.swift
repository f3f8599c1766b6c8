import Testing
@testable import BadgeFlow

/// `KnownKeys.identify` against a plain comparison of the name with every known name.
@Suite struct KnownKeysTests {
    /// Names of every length the word-wise comparison treats apart (1-3 bytes a byte at a
    /// time, 4-7 as two words of 4, 8 and more as words of 8 and an overlapping last word),
    /// with names that share a length and first byte.
    static let names = [
        "a", "ab", "abc", "alert", "badge", "sound", "title", "timer", "tick", "tock",
        "subtitle", "thread-id", "timestamp", "category", "relevance-score", "mutable-content",
        "input-push-channel", "interruption-level", "target-content-id", "content-available",
    ]

    static func identify(_ keys: KnownKeys<Int>, _ name: String) -> Int? {
        let bytes = Array(name.utf8)
        return bytes.withUnsafeBufferPointer { keys.identify($0) }
    }

    @Test func everyNameIsFoundAndOnlyIt() {
        let keys = KnownKeys(Self.names.enumerated().map { ($0.element, $0.offset) })
        for (i, name) in Self.names.enumerated() {
            #expect(Self.identify(keys, name) == i, "\(name)")
        }
    }

    @Test func nearMissesAreNotFound() {
        let keys = KnownKeys(Self.names.enumerated().map { ($0.element, $0.offset) })
        for name in Self.names {
            let bytes = Array(name.utf8)
            var variants: [[UInt8]] = [Array(bytes.dropLast()), bytes + [0x78], [0x78] + bytes]
            // Each byte changed in turn: first, middle, last, and every word boundary.
            for i in bytes.indices {
                var changed = bytes
                changed[i] ^= 0x01
                variants.append(changed)
            }
            for variant in variants {
                let text = String(decoding: variant, as: UTF8.self)
                let expected = Self.names.firstIndex(of: text)
                let found = variant.withUnsafeBufferPointer { keys.identify($0) }
                #expect(found == expected, "\(text)")
            }
        }
    }

    @Test func emptyAndLongerThanEveryNameAreNotFound() {
        let keys = KnownKeys(Self.names.enumerated().map { ($0.element, $0.offset) })
        #expect(Self.identify(keys, "") == nil)
        #expect(Self.identify(keys, String(repeating: "a", count: 40)) == nil)
        #expect(KnownKeys<Int>([]).identify(UnsafeBufferPointer(start: nil, count: 0)) == nil)
        let none = KnownKeys<Int>([])
        #expect(Self.identify(none, "alert") == nil)
    }

    @Test func apsKeysOfOneLengthAndFirstByteAreToldApart() {
        // thread-id and timestamp: 9 bytes, both start with "t", of different types.
        #expect(Self.apsKind("thread-id") == .string)
        #expect(Self.apsKind("timestamp") == .integer)
        // input-push-channel and interruption-level: 18 bytes, "i", and the same last byte.
        #expect(Self.apsKind("input-push-channel") == .string)
        #expect(Self.apsKind("interruption-level") == .interruptionLevel)
        #expect(Self.apsKind("interruption-levex") == nil)
    }

    static func apsKind(_ name: String) -> ApsKey? {
        let bytes = Array(name.utf8)
        return bytes.withUnsafeBufferPointer { ApsKey.known.identify($0) }
    }
}
