private import CJSONC
/// A borrowed view of one value inside a parsed json-c document.
///
/// A `JSONRef` is valid only inside the `JSONParser.withDocument` call that produced it: the
/// parser releases the whole document when that call returns. It never owns memory and is
/// never stored. JSON `null` is represented by json-c as a NULL pointer, so `raw` is optional.
struct JSONRef {
    /// The json-c object, or nil for JSON `null`.
    fileprivate let raw: OpaquePointer?

    /// The kinds of JSON value.
    enum Kind: UInt8, Sendable {
        case null, bool, int, double, string, array, object
    }

    fileprivate init(_ raw: OpaquePointer?) { self.raw = raw }

    /// Wraps a json-c object owned by the caller (the parser).
    init(borrowing raw: OpaquePointer?) { self.raw = raw }

    /// The kind of this value.
    var kind: Kind {
        switch json_object_get_type(raw) {
        case json_type_boolean: return .bool
        case json_type_int: return .int
        case json_type_double: return .double
        case json_type_string: return .string
        case json_type_array: return .array
        case json_type_object: return .object
        default: return .null
        }
    }

    var isNull: Bool { raw == nil }

    /// The integer value when this is a JSON integer; json-c clamps integers beyond 64 bits.
    var int: Int64? {
        guard kind == .int else { return nil }
        return json_object_get_int64(raw)
    }

    /// True when this integer was clamped by json-c because it does not fit in 64 bits.
    var intOverflowed: Bool {
        guard kind == .int else { return false }
        let v = json_object_get_int64(raw)
        if v == Int64.max || v == Int64.min { return true }
        return false
    }

    /// The value as a Double when this is any JSON number.
    var number: Double? {
        switch kind {
        case .int: return Double(json_object_get_int64(raw))
        case .double: return json_object_get_double(raw)
        default: return nil
        }
    }

    var bool: Bool? {
        guard kind == .bool else { return nil }
        return json_object_get_boolean(raw) != 0
    }

    /// The string value, copied into a Swift `String`, when this is a JSON string.
    var string: String? {
        guard kind == .string else { return nil }
        return withStringBytes { UTF8Check.string($0) }
    }

    /// Calls `body` with the string's UTF-8 bytes without copying them.
    func withStringBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard kind == .string, let p = json_object_get_string(raw) else {
            return body(UnsafeBufferPointer(start: nil, count: 0))
        }
        let n = Int(json_object_get_string_len(raw))
        return p.withMemoryRebound(to: UInt8.self, capacity: n) {
            body(UnsafeBufferPointer(start: $0, count: n))
        }
    }

    /// Byte length of the string value (0 for non-strings).
    var stringByteCount: Int {
        guard kind == .string else { return 0 }
        return Int(json_object_get_string_len(raw))
    }

    /// True when this is a string whose bytes equal `other`'s UTF-8, without allocating.
    ///
    /// The lengths are compared first (one json-c call), so a rule literal of another length
    /// costs no byte comparison; a native `other` is read in place, without a copy.
    func stringEquals(_ other: String) -> Bool {
        guard json_object_is_type(raw, json_type_string) != 0 else { return false }
        let n = Int(json_object_get_string_len(raw))
        guard n == other.utf8.count else { return false }
        guard n > 0, let p = json_object_get_string(raw) else { return true }
        if let equal = other.utf8.withContiguousStorageIfAvailable({ o in
            o.baseAddress.map { System.memcmp(p, $0, n) == 0 } ?? false
        }) {
            return equal
        }
        var copy = other
        return copy.withUTF8 { o in o.baseAddress.map { System.memcmp(p, $0, n) == 0 } ?? false }
    }

    /// Number of elements of an array or members of an object; 0 otherwise.
    var count: Int {
        switch kind {
        case .array: return Int(json_object_array_length(raw))
        case .object: return Int(json_object_object_length(raw))
        default: return 0
        }
    }

    /// The member named `key` of an object. Returns nil when absent or not an object;
    /// `.some(JSONRef)` with `isNull` when the member is present and null.
    subscript(key: String) -> JSONRef? {
        guard kind == .object else { return nil }
        var out: OpaquePointer? = nil
        let found = key.withCString { json_object_object_get_ex(raw, $0, &out) }
        return found != 0 ? JSONRef(out) : nil
    }

    /// The member named by a prepared key (no hashing of the name at lookup), or nil.
    subscript(key: HashedKey) -> JSONRef? {
        var out: OpaquePointer? = nil
        // The type test is in the C call: one call per lookup.
        let found = key.cString.withUnsafeBufferPointer { name in
            badgeflow_member_hashed(raw, name.baseAddress, key.hash, &out)
        }
        return found != 0 ? JSONRef(out) : nil
    }

    /// The element at `index` of an array, or nil.
    subscript(index: Int) -> JSONRef? {
        guard kind == .array, index >= 0, index < count else { return nil }
        return JSONRef(json_object_array_get_idx(raw, index))
    }

    /// Calls `body` for each member of an object, in document order.
    func forEachMember(_ body: (UnsafeBufferPointer<UInt8>, JSONRef) -> Void) {
        // The object's hash table keeps its entries in a list in insertion (document) order;
        // walking it with json-c's inline accessors, as its own foreach macro does, costs no
        // call per step. json_object_get_object gives NULL for anything but an object.
        guard let table = json_object_get_object(raw) else { return }
        var entry = lh_table_head(table)
        while let e = entry {
            if let key = lh_entry_k(e) {
                let n = System.strlen(key.assumingMemoryBound(to: CChar.self))
                body(
                    UnsafeBufferPointer(start: key.assumingMemoryBound(to: UInt8.self), count: n),
                    JSONRef(OpaquePointer(lh_entry_v(e))))
            }
            entry = lh_entry_next(e)
        }
    }

    /// One step of a pointer: the member named `key` (its NUL-terminated bytes and json-c
    /// hash, prepared once) when this is an object that has it, else the element `index` (when
    /// it is 0 or more) when this is an array that long, else nil.
    @inline(__always)
    func step(key: UnsafePointer<CChar>, hash: UInt, index: Int) -> JSONRef? {
        var out: OpaquePointer? = nil
        // The type test is in the C call: one call for the usual step, an object's member.
        if badgeflow_member_hashed(raw, key, hash, &out) != 0 { return JSONRef(out) }
        if index >= 0, kind == .array, let next = self[index] { return next }
        return nil
    }

    /// The value as the address of its json-c object (0 for JSON `null`), for a cache of
    /// values that holds no optionals; ``init(bits:)`` turns it back.
    var bits: UInt { UInt(bitPattern: raw) }

    /// The value whose ``bits`` are `bits`; valid while the document it came from is.
    init(bits: UInt) { raw = OpaquePointer(bitPattern: bits) }

    /// True when this is a string whose bytes are exactly `bytes`, without allocating: the
    /// length is compared first, so most literals cost no byte comparison.
    @inline(__always)
    func stringEquals(bytes: UnsafeRawBufferPointer) -> Bool {
        guard json_object_is_type(raw, json_type_string) != 0,
            Int(json_object_get_string_len(raw)) == bytes.count
        else { return false }
        guard let other = bytes.baseAddress, let p = json_object_get_string(raw) else { return true }
        return System.memcmp(p, other, bytes.count) == 0
    }

    /// True when this is a JSON integer that fits in 64 bits and equals `other` (the
    /// type-strict equality of a rules literal: 1 is not 1.0 nor true).
    @inline(__always)
    func intEquals(_ other: Int64) -> Bool {
        guard json_object_is_type(raw, json_type_int) != 0 else { return false }
        let v = json_object_get_int64(raw)
        return v == other && v != Int64.max && v != Int64.min
    }

    /// Resolves a compiled RFC 6901 pointer against this value.
    func resolve(_ pointer: JSONPointer) -> JSONRef? {
        // Through the buffer: tokens are borrowed, not copied (no key retains per step).
        pointer.tokens.withUnsafeBufferPointer { tokens -> JSONRef? in
            var current = self
            for i in tokens.indices {
                // An object's member (the usual step); else, for an array, the element.
                if let next = current[tokens[i].hashed] {
                    current = next
                } else if let index = tokens[i].index, current.kind == .array, let next = current[index] {
                    current = next
                } else {
                    return nil
                }
            }
            return current
        }
    }

    /// Byte length of this value written compactly by json-c.
    var serializedByteCount: Int {
        var n: Int = 0
        _ = json_object_to_json_string_length(raw, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n)
        return n
    }

    /// This value written by json-c with ``JSONValue/serialized(pretty:)``'s layout (a number
    /// parsed from text is written as that text).
    func serialized(pretty: Bool) -> String {
        var flags = JSON_C_TO_STRING_NOSLASHESCAPE
        flags |= pretty ? (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) : JSON_C_TO_STRING_PLAIN
        guard let text = json_object_to_json_string_ext(raw, flags) else { return "null" }
        return String(cString: text)
    }

    /// Converts this value, recursively, into an owned Swift `JSONValue`.
    ///
    /// Used for configuration and state files only; the per-line path reads fields in place.
    func toValue() -> JSONValue {
        switch kind {
        case .null: return .null
        case .bool: return .bool(bool ?? false)
        case .int: return .int(json_object_get_int64(raw))
        case .double: return .double(json_object_get_double(raw))
        case .string: return .string(string ?? "")
        case .array:
            var items: [JSONValue] = []
            items.reserveCapacity(count)
            for i in 0..<count { if let e = self[i] { items.append(e.toValue()) } }
            return .array(items)
        case .object:
            var members: [(String, JSONValue)] = []
            members.reserveCapacity(count)
            forEachMember { name, value in
                members.append((String(decoding: name, as: UTF8.self), value.toValue()))
            }
            return .object(members)
        }
    }
}

extension JSONWriter {
    /// Writes a time of a state: a whole number below 10^15 as an integer, any other as
    /// json-c writes a double (`%.17g`), as state files have always held them; the text
    /// reads back as the same `Double`.
    mutating func stateTime(_ t: Double) {
        if t == t.rounded() && abs(t) < 1e15 {
            int(Int64(t))
            return
        }
        guard let object = json_object_new_double(t) else {
            double(t)
            return
        }
        defer { json_object_put(object) }
        guard let text = json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN) else {
            double(t)
            return
        }
        raw(Array(String(cString: text).utf8))
    }
}

/// Owns one json-c object created from a Swift value, for serialization with json-c.
enum JSONCSerializer {
    /// Writes `value` as JSON text through json-c (pretty or compact), without slash escaping.
    static func serialize(_ value: JSONValue, pretty: Bool) -> String {
        let object = make(value)
        defer { json_object_put(object) }
        var flags = JSON_C_TO_STRING_NOSLASHESCAPE
        flags |= pretty ? (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) : JSON_C_TO_STRING_PLAIN
        guard let text = json_object_to_json_string_ext(object, flags) else { return "null" }
        return String(cString: text)
    }

    private static func make(_ value: JSONValue) -> OpaquePointer? {
        switch value {
        case .null: return nil
        case .bool(let b): return json_object_new_boolean(b ? 1 : 0)
        case .int(let i): return json_object_new_int64(i)
        case .double(let d): return json_object_new_double(d)
        case .string(let s):
            return s.withCString { json_object_new_string_len($0, Int32(s.utf8.count)) }
        case .array(let items):
            let array = json_object_new_array_ext(Int32(items.count))
            for item in items { json_object_array_add(array, make(item)) }
            return array
        case .object(let members):
            let object = json_object_new_object()
            for (key, member) in members { json_object_object_add(object, key, make(member)) }
            return object
        }
    }
}

/// A member name prepared once for many json-c lookups: its NUL-terminated bytes and the
/// hash json-c's tables give it, so a lookup skips measuring and hashing the name.
struct HashedKey: Sendable, Hashable {
    let cString: [CChar]
    let hash: UInt

    init(_ key: String) {
        cString = Array(key.utf8CString)
        hash = cString.withUnsafeBufferPointer { UInt(badgeflow_key_hash($0.baseAddress)) }
    }
}

extension JSONRef {
    /// Adds this value's members and string values to `tree`; stops at a non-finite number.
    func tally(into tree: inout JSONTextPrecheck.Tally) {
        let type = json_object_get_type(raw)
        if type == json_type_object {
            guard let table = json_object_get_object(raw) else { return }
            tree.members += Int(json_object_object_length(raw))
            var entry = lh_table_head(table)
            while let e = entry, !tree.nonFinite {
                JSONRef(borrowing: OpaquePointer(lh_entry_v(e))).tally(into: &tree)
                entry = lh_entry_next(e)
            }
        } else if type == json_type_array {
            let n = json_object_array_length(raw)
            var i = 0
            while i < n, !tree.nonFinite {
                JSONRef(borrowing: json_object_array_get_idx(raw, i)).tally(into: &tree)
                i += 1
            }
        } else if type == json_type_string {
            tree.strings += 1
        } else if type == json_type_double {
            tree.nonFinite = !json_object_get_double(raw).isFinite
        }
    }
}
