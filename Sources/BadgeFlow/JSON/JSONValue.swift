/// An owned JSON value, used for configuration and state files.
///
/// Objects keep their members in document order. The per-line path never builds these: it
/// reads fields in place from the parsed document.
public enum JSONValue: Sendable, Equatable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object's members in document order (a repeated key appears twice).
    case object([(String, JSONValue)])

    /// Type-strict equality: `1` is not `1.0`, and objects compare member by member, in order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member named `key` of an object (the last one when a key repeats).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.0 == key })?.1
    }

    /// The name of this value's JSON type, as used in messages (`string`, `integer`, ...).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Writes this value as JSON text with json-c.
    ///
    /// - Parameter pretty: two-space indented output when true, one line when false.
    public func serialized(pretty: Bool = false) -> String {
        JSONCSerializer.serialize(self, pretty: pretty)
    }
}
