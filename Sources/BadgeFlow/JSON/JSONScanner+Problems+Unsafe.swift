// JSONScanner's problem scan on raw bytes: what json-c accepts but JSON and APNs do not,
// found in a borrowed buffer of the text, with nesting kept in stack-allocated buffers.
// Relies on each index being checked against the text's count, and on the depth and key
// counts being checked against the buffers' capacities before a slot is written.

/// What json-c accepts but JSON (RFC 8259) and APNs do not, found in the text itself.
struct JSONTextProblem: Equatable {
    /// What was found.
    enum Kind: Equatable {
        /// An object repeats a key; json-c keeps the last value without a word.
        case duplicateKey
        /// A bare `NaN`, `Infinity` or `-Infinity` (any case): no JSON number.
        case nonFinite
        /// A string in single quotes.
        case singleQuoted
    }

    let kind: Kind
    /// Byte offset of the second key, the token or the quote.
    let offset: Int
    /// RFC 6901 pointer of the second key's value (duplicate) or of the value (the others).
    let pointer: String
    /// The key (duplicate) or the token as written.
    let text: String
}

extension JSONScanner {
    /// The first duplicate key, non-finite number or single-quoted string in `bytes`, a
    /// text json-c accepted; nil when there is none (the usual case).
    ///
    /// One pass over the bytes, nothing allocated for a text of up to 64 levels and 256 keys
    /// open at once (keys are compared by their bytes as written: `"a"` and `"\u0061"` are
    /// not taken for the same key). Pointers are built only for a problem.
    static func firstProblem(_ bytes: UnsafeRawBufferPointer) -> JSONTextProblem? {
        let n = bytes.count
        guard n > 0 else { return nil }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 64 * 3) { levels -> JSONTextProblem? in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 256 * 2) { keys -> JSONTextProblem? in
                scan(bytes, levels: levels, keys: keys)
            }
        }
    }

    /// `levels[3d]`: the first key slot of object level d (-1 for an array); `levels[3d+1]`:
    /// the current key's start (objects) or element index (arrays); `levels[3d+2]`: the
    /// current key's end. `keys[2k]`, `keys[2k+1]`: a seen key's quoted range.
    private static func scan(
        _ bytes: UnsafeRawBufferPointer, levels: UnsafeMutableBufferPointer<Int>, keys: UnsafeMutableBufferPointer<Int>
    ) -> JSONTextProblem? {
        let n = bytes.count
        let maxLevels = levels.count / 3
        let maxKeys = keys.count / 2
        var depth = 0  // open containers
        var keyCount = 0
        var expectKey = false
        var i = 0
        while i < n {
            let b = bytes[i]
            switch b {
            case 0x20, 0x0A, 0x0D, 0x09, 0x3A:
                if b == 0x3A { expectKey = false }
                i += 1
            case 0x2C:
                if depth > 0 {
                    let d = depth - 1
                    if levels[3 * d] < 0 { levels[3 * d + 1] += 1 } else { expectKey = true }
                }
                i += 1
            case 0x7B, 0x5B:
                guard depth < maxLevels else { return nil }  // json-c's depth limit is lower
                levels[3 * depth] = b == 0x7B ? keyCount : -1
                levels[3 * depth + 1] = 0
                levels[3 * depth + 2] = 0
                depth += 1
                expectKey = b == 0x7B
                i += 1
            case 0x7D, 0x5D:
                if depth > 0 {
                    depth -= 1
                    if levels[3 * depth] >= 0 { keyCount = levels[3 * depth] }
                }
                expectKey = false
                i += 1
            case 0x22:
                let start = i
                i += 1
                while i < n {
                    let c = bytes[i]
                    if c == 0x22 { break }
                    i += c == 0x5C ? 2 : 1
                }
                i += 1
                guard expectKey, depth > 0 else { continue }
                let d = depth - 1
                let first = levels[3 * d]
                guard first >= 0 else { continue }
                let end = min(i, n)
                let length = end - start
                if let base = bytes.baseAddress {
                    var k = first
                    while k < keyCount {
                        let s = keys[2 * k], e = keys[2 * k + 1]
                        if e - s == length && System.memcmp(base + s, base + start, length) == 0 {
                            levels[3 * d + 1] = start
                            levels[3 * d + 2] = end
                            return problem(.duplicateKey, at: start, bytes, levels, depth, text: start..<end)
                        }
                        k += 1
                    }
                }
                if keyCount < maxKeys {
                    keys[2 * keyCount] = start
                    keys[2 * keyCount + 1] = end
                    keyCount += 1
                }
                levels[3 * d + 1] = start
                levels[3 * d + 2] = end
            case 0x27:
                return problem(.singleQuoted, at: i, bytes, levels, depth, text: i..<min(i + 1, n))
            default:
                // A scalar: true, false, null, or a number.
                let start = i
                while i < n {
                    let c = bytes[i]
                    if c == 0x2C || c == 0x7D || c == 0x5D || c == 0x3A || isSpace(c) { break }
                    i += 1
                }
                var j = start
                if bytes[j] == 0x2D, j + 1 < i { j += 1 }
                switch bytes[j] | 0x20 {
                case 0x69:  // i: Infinity
                    return problem(.nonFinite, at: start, bytes, levels, depth, text: start..<i)
                case 0x6E where j + 1 < i && (bytes[j + 1] | 0x20) == 0x61:  // na: NaN
                    return problem(.nonFinite, at: start, bytes, levels, depth, text: start..<i)
                default:
                    break
                }
            }
        }
        return nil
    }

    /// The problem with the pointer of the value being read at `depth`.
    private static func problem(
        _ kind: JSONTextProblem.Kind, at offset: Int, _ bytes: UnsafeRawBufferPointer,
        _ levels: UnsafeMutableBufferPointer<Int>, _ depth: Int, text: Range<Int>
    ) -> JSONTextProblem {
        var pointer = ""
        for d in 0..<depth {
            if levels[3 * d] < 0 {
                pointer += "/\(levels[3 * d + 1])"
            } else {
                let s = levels[3 * d + 1], e = levels[3 * d + 2]
                guard e - s >= 2 else { continue }
                let raw = UnsafeRawBufferPointer(rebasing: bytes[(s + 1)..<(e - 1)])
                pointer = JSONPointer.appending(pointer, Self.unescaped(raw))
            }
        }
        let shown = kind == .duplicateKey ? text.count >= 2 ? (text.lowerBound + 1)..<(text.upperBound - 1) : text : text
        return JSONTextProblem(
            kind: kind, offset: offset, pointer: pointer,
            text: kind == .duplicateKey
                ? unescaped(UnsafeRawBufferPointer(rebasing: bytes[shown]))
                : String(decoding: UnsafeRawBufferPointer(rebasing: bytes[shown]), as: UTF8.self))
    }

    /// A key's text between its quotes, with the escapes JSON keys usually hold decoded
    /// (`\"`, `\\`, `\/`, `\n`, `\t`, `\uXXXX` of the BMP); others are kept as written.
    private static func unescaped(_ raw: UnsafeRawBufferPointer) -> String {
        guard raw.contains(0x5C) else { return String(decoding: raw, as: UTF8.self) }
        var out: [UInt8] = []
        var i = 0
        while i < raw.count {
            let c = raw[i]
            guard c == 0x5C, i + 1 < raw.count else {
                out.append(c)
                i += 1
                continue
            }
            let e = raw[i + 1]
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u") where i + 5 < raw.count:
                let hex = String(decoding: UnsafeRawBufferPointer(rebasing: raw[(i + 2)..<(i + 6)]), as: UTF8.self)
                if let v = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(v) {
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                    i += 6
                    continue
                }
                out.append(contentsOf: [c, e])
            default: out.append(e)
            }
            i += 2
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of the value of the top-level object's member `name` (the last one, as json-c
    /// keeps it), without surrounding whitespace; nil when `bytes` is not an object holding it
    /// under a key written without escapes.
    static func memberValue(_ name: String, in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let scanner = JSONScanner(bytes)
        let wanted = Array(name.utf8)
        var found: Range<Int>? = nil
        let end = scanner.forEachMember(of: 0) { member in
            guard let end = scanner.valueEnd(member.value) else { return nil }
            if !member.escaped && member.keyIs(wanted, in: bytes) { found = member.value..<end }
            return end
        }
        guard end != nil, let found else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[found])
    }
}

extension JSONTextProblem {
    /// The diagnostic the problem is reported as: `duplicate-key`, or `invalid-json` for
    /// what is not JSON.
    var diagnostic: Diagnostic {
        switch kind {
        case .duplicateKey:
            return .error(
                .duplicateKey,
                "key \"\(text)\" appears twice in one object: json-c keeps the second, other JSON readers the first; "
                    + "keep one", at: pointer)
        case .nonFinite:
            return .error(
                .invalidJSON, "\(text) is not JSON (JSON numbers are finite; write a number or null) at byte \(offset)",
                at: pointer)
        case .singleQuoted:
            return .error(.invalidJSON, "a string in single quotes is not JSON (use double quotes) at byte \(offset)", at: pointer)
        }
    }
}
