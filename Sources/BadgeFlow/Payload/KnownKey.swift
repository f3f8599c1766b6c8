/// Recognises member names by their bytes, so a clean payload allocates no key strings.
struct KnownKeys<Key: Sendable>: Sendable {
    private let entries: [(bytes: [UInt8], key: Key)]

    init(_ pairs: [(String, Key)]) {
        entries = pairs.map { (Array($0.0.utf8), $0.1) }
    }

    /// The key whose name is exactly `name`, if any.
    @inline(__always)
    func identify(_ name: UnsafeBufferPointer<UInt8>) -> Key? {
        guard let first = name.first else { return nil }
        for entry in entries where entry.bytes.count == name.count && entry.bytes[0] == first {
            if entry.bytes.withUnsafeBufferPointer({ $0.elementsEqual(name) }) { return entry.key }
        }
        return nil
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
