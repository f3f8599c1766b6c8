/// A pushed payload ready to be stamped with a badge number: its text with the place where
/// `aps.badge`'s value goes cut out: what `badgeflow filter --stamp` adds to push results.
///
/// Made while a line is analysed (on any thread), filled in when the event is applied and
/// its icon number is known. The bytes of every member the stamp does not touch are the
/// input's own: spacing, key order, number spelling and string escapes are kept, so a
/// backend forwards to APNs what its producer wrote, with only the badge changed. An
/// existing `badge` has its value replaced in place; a payload without one gets
/// `"badge":N` added as the last member of `aps`.
///
/// When the text cannot be cut that way (a key written with escapes such as `"\u0061ps"`,
/// or a key that appears twice where json-c keeps the last one), the payload is written
/// from its parsed value instead, compactly, members in document order: the same JSON
/// value, not the same bytes.
public struct PayloadStamp: Sendable, Equatable {
    /// The payload text before the badge number, then the text after it.
    let bytes: [UInt8]
    /// Where the badge number goes in `bytes`.
    let split: Int

    init(bytes: [UInt8], split: Int) {
        self.bytes = bytes
        self.split = split
    }

    /// The payload with `aps.badge` set to `badge`.
    public func stamped(_ badge: Int) -> String {
        var w = JSONWriter(capacity: bytes.count + JSONWriter.maxDecimalBytes)
        write(badge, into: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// Appends the payload with `aps.badge` set to `badge`.
    func write(_ badge: Int, into w: inout JSONWriter) {
        bytes.withUnsafeBufferPointer { b in
            w.verbatim(UnsafeBufferPointer(rebasing: b[..<split]))
            w.bareInt(badge)
            w.verbatim(UnsafeBufferPointer(rebasing: b[split...]))
        }
    }
}

extension PayloadStamp {
    /// The stamp of the payload in `line`, a text json-c accepted: the line itself for a bare
    /// push, the value of its top-level `"payload"` member for an envelope. Nil when the
    /// text cannot be cut (see the type's notes).
    static func cut(_ line: UnsafeRawBufferPointer, envelope: Bool) -> PayloadStamp? {
        let scan = Scanner(bytes: line)
        var start = scan.skipSpace(0)
        var end = line.count
        if envelope {
            guard let member = scan.uniqueMember(of: start, named: Keys.payload) else { return nil }
            start = member.value
            end = member.end
        } else {
            while end > start, Scanner.isSpace(line[end - 1]) { end -= 1 }
        }
        guard start < end, line[start] == UInt8(ascii: "{"),
            let aps = scan.uniqueMember(of: start, named: Keys.aps), line[aps.value] == UInt8(ascii: "{"),
            let badge = scan.badgeSlot(ofObjectAt: aps.value)
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end - start + badge.insert.count)
        bytes.append(contentsOf: line[start..<badge.from])
        bytes.append(contentsOf: badge.insert)
        let split = bytes.count
        bytes.append(contentsOf: line[badge.to..<end])
        return PayloadStamp(bytes: bytes, split: split)
    }

    /// The stamp of a parsed payload, written from its value (the fallback of `cut`).
    static func rewritten(_ payload: JSONRef) -> PayloadStamp {
        var w = JSONWriter(capacity: 512)
        var split = 0
        w.fragment("{")
        var first = true
        payload.forEachMember { key, value in
            if !first { w.fragment(",") }
            first = false
            w.bareString(String(decoding: key, as: UTF8.self))
            w.fragment(":")
            guard key.elementsEqual("aps".utf8), value.kind == .object else {
                w.value(value.toValue())
                return
            }
            w.fragment("{")
            var firstInAps = true
            var stamped = false
            value.forEachMember { k, v in
                if !firstInAps { w.fragment(",") }
                firstInAps = false
                w.bareString(String(decoding: k, as: UTF8.self))
                w.fragment(":")
                if k.elementsEqual("badge".utf8) {
                    split = w.count
                    stamped = true
                } else {
                    w.value(v.toValue())
                }
            }
            if !stamped {
                w.fragment(firstInAps ? #""badge":"# : #","badge":"#)
                split = w.count
            }
            w.fragment("}")
        }
        w.fragment("}")
        return PayloadStamp(bytes: w.bytes, split: split)
    }

    private enum Keys {
        static let payload = Array("payload".utf8)
        static let aps = Array("aps".utf8)
        static let badge = Array("badge".utf8)
    }

    /// Finds members in JSON text already known to be valid; nil for anything it does not
    /// handle (escaped or repeated keys), which sends the caller to the fallback.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer

        static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

        func skipSpace(_ i: Int) -> Int {
            var i = i
            while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
            return i
        }

        /// The index after the string that starts at `i` (a quote), and whether it has escapes.
        func skipString(_ i: Int) -> (end: Int, escaped: Bool)? {
            var i = i + 1
            var escaped = false
            while i < bytes.count {
                switch bytes[i] {
                case 0x22: return (i + 1, escaped)
                case 0x5C: escaped = true; i += 2
                default: i += 1
                }
            }
            return nil
        }

        /// The index after the value that starts at `i`.
        func skipValue(_ i: Int) -> Int? {
            guard i < bytes.count else { return nil }
            switch bytes[i] {
            case 0x22:
                return skipString(i)?.end
            case 0x7B, 0x5B:
                var depth = 0
                var i = i
                while i < bytes.count {
                    switch bytes[i] {
                    case 0x22:
                        guard let s = skipString(i) else { return nil }
                        i = s.end
                        continue
                    case 0x7B, 0x5B: depth += 1
                    case 0x7D, 0x5D:
                        depth -= 1
                        if depth == 0 { return i + 1 }
                    default: break
                    }
                    i += 1
                }
                return nil
            default:
                var i = i
                while i < bytes.count {
                    let b = bytes[i]
                    if b == 0x2C || b == 0x7D || b == 0x5D || Self.isSpace(b) { break }
                    i += 1
                }
                return i
            }
        }

        /// One member of an object: where its key ends (after the quote), its value starts and ends.
        struct Member {
            var keyEnd: Int
            var value: Int
            var end: Int
        }

        func keyIs(_ m: Member, from start: Int, _ name: [UInt8]) -> Bool {
            // `start` is the opening quote; the name is between the quotes.
            let count = m.keyEnd - start - 2
            guard count == name.count else { return false }
            for j in 0..<count where bytes[start + 1 + j] != name[j] { return false }
            return true
        }

        /// The one member named `name` of the object at `open`; nil when it is missing,
        /// repeated, or a key has escapes (it might spell `name`).
        func uniqueMember(of open: Int, named name: [UInt8]) -> Member? {
            var found: Member? = nil
            var ok = true
            _ = forEachMember(of: open) { m, start, escaped in
                if escaped { ok = false; return false }
                if keyIs(m, from: start, name) {
                    if found != nil { ok = false; return false }
                    found = m
                }
                return true
            }
            return ok ? found : nil
        }

        /// Calls `body` for each member of the object at `open` with the member, its key's
        /// opening quote and whether the key has escapes; `body` returns false to stop (then
        /// nil). Returns the index of the object's `}`.
        func forEachMember(of open: Int, _ body: (Member, Int, Bool) -> Bool) -> Int? {
            var i = skipSpace(open + 1)
            guard i < bytes.count else { return nil }
            if bytes[i] == 0x7D { return i }
            while i < bytes.count, bytes[i] == 0x22 {
                let keyOpen = i
                guard let key = skipString(i) else { return nil }
                i = skipSpace(key.end)
                guard i < bytes.count, bytes[i] == 0x3A else { return nil }
                let value = skipSpace(i + 1)
                guard let end = skipValue(value) else { return nil }
                guard body(Member(keyEnd: key.end, value: value, end: end), keyOpen, key.escaped) else { return nil }
                i = skipSpace(end)
                guard i < bytes.count else { return nil }
                if bytes[i] == 0x7D { return i }
                guard bytes[i] == 0x2C else { return nil }
                i = skipSpace(i + 1)
            }
            return nil
        }

        /// Where the badge number goes in the `aps` object at `open`: the range its value
        /// takes (empty when added) and the text to put before the number.
        func badgeSlot(ofObjectAt open: Int) -> (from: Int, to: Int, insert: [UInt8])? {
            var found: Member? = nil
            var last: Member? = nil
            var ok = true
            guard
                let close = forEachMember(
                    of: open,
                    { m, start, escaped in
                        if escaped { ok = false; return false }
                        if keyIs(m, from: start, Keys.badge) {
                            if found != nil { ok = false; return false }
                            found = m
                        }
                        last = m
                        return true
                    }), ok
            else { return nil }
            if let found { return (found.value, found.end, []) }
            if let last { return (last.end, last.end, Array(#","badge":"#.utf8)) }
            return (close, close, Array(#""badge":"#.utf8))
        }
    }
}
