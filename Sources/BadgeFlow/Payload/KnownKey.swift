#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Recognises member names by their bytes, so a clean payload allocates no key strings.
///
/// The names sit back to back in one byte array; a lookup compares the length and first
/// byte of each candidate before any bytes, so most keys are told apart by two integers.
struct KnownKeys<Key: Sendable>: Sendable {
    private struct Entry: Sendable {
        let start: Int
        let count: Int
        let first: UInt8
        let key: Key
    }

    private let names: [UInt8]
    private let entries: [Entry]

    init(_ pairs: [(String, Key)]) {
        var names: [UInt8] = []
        var entries: [Entry] = []
        for (name, key) in pairs {
            let bytes = Array(name.utf8)
            entries.append(Entry(start: names.count, count: bytes.count, first: bytes.first ?? 0, key: key))
            names.append(contentsOf: bytes)
        }
        self.names = names
        self.entries = entries
    }

    /// The key whose name is exactly `name`, if any.
    ///
    /// - Complexity: O(number of known names), comparing bytes only on a length and first-byte match.
    @inline(__always)
    func identify(_ name: UnsafeBufferPointer<UInt8>) -> Key? {
        guard let first = name.first, let nameBase = name.baseAddress else { return nil }
        let n = name.count
        return names.withUnsafeBufferPointer { names -> Key? in
            guard let namesBase = names.baseAddress else { return nil }
            return entries.withUnsafeBufferPointer { entries -> Key? in
                for i in entries.indices where entries[i].count == n && entries[i].first == first {
                    if memcmp(namesBase + entries[i].start, nameBase, n) == 0 { return entries[i].key }
                }
                return nil
            }
        }
    }
}

/// The `aps` keys of SPEC §1.
enum ApsKey: Sendable {
    case alert, badge, sound, string, contentAvailable, integer, interruptionLevel, event, relevanceScore, object,
         inputPushToken

    static let known = KnownKeys<ApsKey>([
        ("alert", .alert), ("badge", .badge), ("sound", .sound),
        ("thread-id", .string), ("category", .string), ("target-content-id", .string), ("filter-criteria", .string),
        ("attributes-type", .string), ("input-push-channel", .string),
        ("content-available", .contentAvailable),
        ("mutable-content", .integer), ("timestamp", .integer), ("stale-date", .integer), ("dismissal-date", .integer),
        ("interruption-level", .interruptionLevel), ("event", .event), ("relevance-score", .relevanceScore),
        ("content-state", .object), ("attributes", .object), ("input-push-token", .inputPushToken),
    ])
}

/// The keys of an `aps.alert` dictionary.
enum AlertKey: Sendable {
    /// title, subtitle, body, loc-key, title-loc-key: what makes an alert show something.
    case shown
    /// title or body: in Live Activities also `{loc-key, loc-args}` objects.
    case shownLocalizable
    /// Other string keys.
    case string
    /// String-array keys.
    case stringArray
    /// `sound` (Live Activities only).
    case sound

    static let known = KnownKeys<AlertKey>([
        ("title", .shownLocalizable), ("body", .shownLocalizable), ("subtitle", .shown), ("loc-key", .shown),
        ("title-loc-key", .shown), ("launch-image", .string), ("subtitle-loc-key", .string), ("action-loc-key", .string),
        ("title-loc-args", .stringArray), ("subtitle-loc-args", .stringArray), ("loc-args", .stringArray),
        ("sound", .sound),
    ])
}
