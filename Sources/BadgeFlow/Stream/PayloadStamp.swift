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
}

extension PayloadStamp {
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

    enum Keys {
        static let payload = Array("payload".utf8)
        static let aps = Array("aps".utf8)
        static let badge = Array("badge".utf8)
    }

    /// The one member named `name` of the object at `open` in text json-c accepted: where
    /// its value starts and ends; nil when it is missing, repeated, or a key has escapes (it
    /// might spell `name`).
    static func uniqueMember(_ scan: JSONScanner, of open: Int, named name: [UInt8]) -> (value: Int, end: Int)? {
        var found: (value: Int, end: Int)? = nil
        var ok = true
        _ = scan.forEachMember(of: open) { m in
            if m.escaped { ok = false; return nil }
            guard let end = scan.valueEnd(m.value) else { return nil }
            if m.keyIs(name, in: scan.bytes) {
                if found != nil { ok = false; return nil }
                found = (m.value, end)
            }
            return end
        }
        return ok ? found : nil
    }

    /// Where the badge number goes in the `aps` object at `open`: the range its value takes
    /// (empty when added) and the text to put before the number; nil as for `uniqueMember`.
    static func badgeSlot(_ scan: JSONScanner, ofObjectAt open: Int) -> (from: Int, to: Int, insert: [UInt8])? {
        var found: (value: Int, end: Int)? = nil
        var last: Int? = nil
        var ok = true
        guard
            let after = scan.forEachMember(
                of: open,
                { m in
                    if m.escaped { ok = false; return nil }
                    guard let end = scan.valueEnd(m.value) else { return nil }
                    if m.keyIs(Keys.badge, in: scan.bytes) {
                        if found != nil { ok = false; return nil }
                        found = (m.value, end)
                    }
                    last = end
                    return end
                }), ok
        else { return nil }
        if let found { return (found.value, found.end, []) }
        if let last { return (last, last, Array(#","badge":"#.utf8)) }
        // After `{`, before `}` (with whatever space the object holds).
        return (after - 1, after - 1, Array(#""badge":"#.utf8))
    }
}
