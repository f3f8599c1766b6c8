/// A validated badge path such as `root.chat.alice`.
///
/// Segments are joined by `.`; each is non-empty UTF-8 without `.` or control characters.
/// A path has at most 16 segments and 1024 bytes, and is case-sensitive. Whether the first
/// segment is the tree's root name is checked by the tree, which knows that name.
///
/// ```swift
/// let path = try BadgePath("root.chat.alice")
/// path.segments        // ["root", "chat", "alice"]
/// path.parent          // root.chat
/// ```
public struct BadgePath: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Most segments a path may have.
    public static let maxSegments = 16
    /// Most bytes a path may have.
    public static let maxBytes = 1024

    /// The path text.
    public let rawValue: String

    /// Validates `text` as a path.
    ///
    /// - Throws: `BadgePathError` naming the first rule the text breaks.
    public init(_ text: String) throws(BadgePathError) {
        try Self.validate(text)
        rawValue = text
    }

    package init(unchecked text: String) { rawValue = text }

    /// The path text, as ``rawValue``.
    public var description: String { rawValue }

    /// The segments, first (the root name) to last.
    public var segments: [Substring] { rawValue.split(separator: ".", omittingEmptySubsequences: false) }

    /// The last segment.
    public var name: Substring { rawValue.split(separator: ".").last ?? Substring(rawValue) }

    /// The path of the parent node, or nil for a one-segment path.
    public var parent: BadgePath? {
        guard let dot = rawValue.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        return BadgePath(unchecked: String(rawValue[..<dot]))
    }

    /// The default tree's root, `root`: the start of a path built with ``child(_:)``.
    public static let root = BadgePath(unchecked: "root")

    /// The path of a child node for `id`, escaped so it stays one segment whatever it holds:
    /// `bob@mail.com` becomes `bob@mail%2Ecom` (see ``escapeSegment(_:)``), an empty id `%`
    /// (a segment no escaped id makes, so `""` and `"\u{0}"`, which is `%00`, stay two chats).
    ///
    /// ```swift
    /// BadgePath.root.child("chat").child("bob@mail.com")   // root.chat.bob@mail%2Ecom
    /// ```
    ///
    /// The result is valid unless it passes ``maxSegments`` or ``maxBytes``; a tree refuses
    /// such a path when it is marked, and it reads as hidden.
    public func child(_ id: String) -> BadgePath {
        BadgePath(unchecked: rawValue + "." + Self.childSegment(id))
    }

    /// The segment ``child(_:)`` makes for `id`: `%` for an empty id, else the id escaped.
    static func childSegment(_ id: String) -> String { id.isEmpty ? "%" : escapeSegment(id) }

    /// The path of a child node named `segment` (which must be a valid segment).
    public func appending(_ segment: String) -> BadgePath {
        BadgePath(unchecked: rawValue + "." + segment)
    }

    /// Orders paths by the bytes of their UTF-8 text.
    public static func < (lhs: BadgePath, rhs: BadgePath) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    /// Checks that `text` is a well-formed path: the rules listed on ``BadgePath``.
    ///
    /// - Complexity: O(n) in the path's bytes.
    public static func validate(_ text: String) throws(BadgePathError) {
        let utf8 = text.utf8
        if utf8.isEmpty { throw BadgePathError(path: text, reason: "a path must not be empty") }
        if utf8.count > maxBytes {
            throw BadgePathError(path: text, reason: "a path has at most \(maxBytes) bytes, this one has \(utf8.count)")
        }
        // The common case, a valid path, in one pass over its bytes; a path that fails it is
        // read again below, for the message.
        if utf8.withContiguousStorageIfAvailable(isWellFormed) == true { return }
        var segments = 1
        var segmentLength = 0
        for b in utf8 {
            if b == UInt8(ascii: ".") {
                if segmentLength == 0 { throw BadgePathError(path: text, reason: "segment \(segments) is empty") }
                segments += 1
                segmentLength = 0
                if segments > maxSegments {
                    throw BadgePathError(path: text, reason: "a path has at most \(maxSegments) segments")
                }
            } else if b < 0x20 || b == 0x7F {
                throw BadgePathError(path: text, reason: "segment \(segments) holds a control character")
            } else {
                segmentLength += 1
            }
        }
        if segmentLength == 0 { throw BadgePathError(path: text, reason: "segment \(segments) is empty") }
    }

    /// Whether `escapeSegment` writes byte `b` as `%XX`.
    @inline(__always)
    package static func escapes(_ b: UInt8) -> Bool { b == 0x25 || b == 0x2E || b < 0x20 || b == 0x7F }

    /// Reverses `escapeSegment`: every `%XX` becomes the byte XX; the segment `%` (an empty
    /// id, see ``child(_:)``) becomes `""`.
    public static func unescapeSegment(_ segment: String) -> String {
        guard segment.utf8.contains(0x25) else { return segment }
        if segment == "%" { return "" }
        var out: [UInt8] = []
        let bytes = Array(segment.utf8)
        var i = 0
        func hexValue(_ b: UInt8) -> UInt8? {
            switch b {
            case 48...57: return b - 48
            case 65...70: return b - 55
            case 97...102: return b - 87
            default: return nil
            }
        }
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, let h = hexValue(bytes[i + 1]), let l = hexValue(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Why a text is not a valid badge path.
public struct BadgePathError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rejected text.
    public let path: String
    /// Which rule it breaks.
    public let reason: String

    /// `invalid path "TEXT": REASON`, the form error lines and messages use.
    public var description: String { "invalid path \"\(path)\": \(reason)" }
}
