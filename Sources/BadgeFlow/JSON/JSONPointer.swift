/// A compiled RFC 6901 JSON Pointer such as `/aps/thread-id`.
///
/// Compile once (rules are compiled at load) and resolve many times: each token keeps its
/// unescaped key and, when it is a canonical array index, the index.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// One reference token of the pointer.
    public struct Token: Sendable, Hashable {
        /// The unescaped member name.
        public let key: String
        /// The array index this token denotes, when it is `0` or a digit string without a leading zero.
        public let index: Int?
        /// The key prepared for json-c lookups.
        let hashed: HashedKey

        init(key: String, index: Int?) {
            self.key = key
            self.index = index
            hashed = HashedKey(key)
        }
    }

    /// The tokens, in order; empty for the whole-document pointer `""`.
    public let tokens: [Token]

    /// The pointer's text, as written (`/aps/thread-id`).
    public let description: String

    /// Parses pointer text; returns nil when it is neither empty nor starts with `/`, or
    /// has a `~` not followed by `0` or `1`.
    ///
    /// ```swift
    /// let p = JSONPointer("/aps/thread-id")   // tokens ["aps", "thread-id"]
    /// ```
    public init?(_ text: String) {
        description = text
        if text.isEmpty { tokens = []; return }
        guard text.hasPrefix("/") else { return nil }
        var out: [Token] = []
        for raw in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            var bytes: [UInt8] = []
            var it = raw.makeIterator()
            while let b = it.next() {
                if b == UInt8(ascii: "~") {
                    switch it.next() {
                    case UInt8(ascii: "0"): bytes.append(UInt8(ascii: "~"))
                    case UInt8(ascii: "1"): bytes.append(UInt8(ascii: "/"))
                    default: return nil
                    }
                } else {
                    bytes.append(b)
                }
            }
            let key = String(decoding: bytes, as: UTF8.self)
            var index: Int? = nil
            if !bytes.isEmpty, bytes.count <= 9, bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                bytes.count == 1 || bytes[0] != 48
            {
                index = Int(key)
            }
            out.append(Token(key: key, index: index))
        }
        tokens = out
    }

    /// Escapes one member name as a pointer token (`~` → `~0`, `/` → `~1`).
    public static func escape(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return key }
        var out = ""
        for ch in key.unicodeScalars {
            switch ch {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    /// The pointer that extends `base` with one member name, escaped.
    public static func appending(_ base: String, _ key: String) -> String {
        base + "/" + escape(key)
    }
}
