/// Where a known name sits in `KnownKeys`' byte array. Not nested in the generic type: a
/// nested type would be generic too, and its metadata made at run time.
struct KnownName: Sendable {
    let start: Int
    let count: Int
    let first: UInt8
}

/// Recognises member names by their bytes, so a clean payload allocates no key strings.
///
/// The names sit back to back in one byte array, grouped by length: a lookup visits only the
/// names as long as the key, compares their first byte, and on a match the rest a word at a
/// time, inline (no `memcmp` call).
struct KnownKeys<Key: Sendable>: Sendable {
    let bytes: [UInt8]
    let names: [KnownName]
    let keys: [Key]
    /// `names[byLength[n]..<byLength[n + 1]]` are the names of `n` bytes.
    let byLength: [Int]

    init(_ pairs: [(String, Key)]) {
        // Stable by length, so names of one length keep their order.
        let sorted = pairs.enumerated().sorted { a, b in
            (a.element.0.utf8.count, a.offset) < (b.element.0.utf8.count, b.offset)
        }.map(\.element)
        var bytes: [UInt8] = []
        var names: [KnownName] = []
        for (name, _) in sorted {
            let utf8 = Array(name.utf8)
            names.append(KnownName(start: bytes.count, count: utf8.count, first: utf8.first ?? 0))
            bytes.append(contentsOf: utf8)
        }
        let longest = names.last?.count ?? 0
        var byLength = [Int](repeating: names.count, count: longest + 2)
        for (i, name) in names.enumerated().reversed() { byLength[name.count] = i }
        for n in stride(from: longest, through: 0, by: -1) where byLength[n] > byLength[n + 1] {
            byLength[n] = byLength[n + 1]
        }
        self.bytes = bytes
        self.names = names
        self.byLength = byLength
        keys = sorted.map(\.1)
    }
}

/// The `aps` keys of Apple's payload key reference, by the type their value must have.
enum ApsKey: Sendable {
    case alert, badge, sound, string, contentAvailable, integer, interruptionLevel, event, relevanceScore, object,
        inputPushToken
    /// `url-args` (Safari web push): an array of strings.
    case stringArray
    /// `content-changed` (WidgetKit push): a boolean.
    case boolean
    /// `stale-date`, `dismissal-date`: an integer of UNIX seconds.
    case date

    static let known = KnownKeys<ApsKey>([
        ("alert", .alert), ("badge", .badge), ("sound", .sound),
        ("thread-id", .string), ("category", .string), ("target-content-id", .string), ("filter-criteria", .string),
        ("attributes-type", .string), ("input-push-channel", .string),
        ("content-available", .contentAvailable),
        ("mutable-content", .integer), ("timestamp", .integer), ("stale-date", .date), ("dismissal-date", .date),
        ("interruption-level", .interruptionLevel), ("event", .event), ("relevance-score", .relevanceScore),
        ("content-state", .object), ("attributes", .object), ("input-push-token", .inputPushToken),
        ("url-args", .stringArray), ("content-changed", .boolean),
    ])
}

/// The keys of an `aps.alert` dictionary.
enum AlertKey: Sendable {
    /// subtitle, loc-key, title-loc-key, subtitle-loc-key: what makes an alert show something.
    case shown
    /// title or body: shown too, and in Live Activities also `{loc-key, loc-args}` objects.
    case shownLocalizable
    /// Other string keys: launch-image, action (Safari), summary-arg.
    case string
    /// `action-loc-key`: a string, or `null` to hide the action button.
    case stringOrNull
    /// `summary-arg-count`: an integer ≥ 0.
    case count
    /// String-array keys.
    case stringArray
    /// `sound` (Live Activities only).
    case sound

    static let known = KnownKeys<AlertKey>([
        ("title", .shownLocalizable), ("body", .shownLocalizable), ("subtitle", .shown), ("loc-key", .shown),
        ("title-loc-key", .shown), ("subtitle-loc-key", .shown), ("launch-image", .string), ("action", .string),
        ("summary-arg", .string), ("action-loc-key", .stringOrNull), ("summary-arg-count", .count),
        ("title-loc-args", .stringArray), ("subtitle-loc-args", .stringArray), ("loc-args", .stringArray),
        ("sound", .sound),
    ])
}

/// The keys of a sound dictionary `{critical, name, volume}`.
enum SoundKey: Sendable {
    case critical, name, volume

    static let known = KnownKeys<SoundKey>([("critical", .critical), ("name", .name), ("volume", .volume)])
}

/// The keys of a Live Activity's localized `title` or `body` object `{loc-key, loc-args}`.
enum LocalizedTextKey: Sendable {
    case locKey, locArgs

    static let known = KnownKeys<LocalizedTextKey>([("loc-key", .locKey), ("loc-args", .locArgs)])
}
