/// One compiled routing rule: when its `match` holds, the payload goes to `path` with `action`.
///
/// A class, so routing borrows rules by reference instead of copying their fields.
public final class RoutingRule: Sendable {
    /// A test of one value selected by a JSON Pointer.
    enum Test: Sendable {
        /// Type-strict equality with a literal.
        case equals(JSONValue)
        /// The value is present (true) or absent (false).
        case exists(Bool)
        /// Equal to one of the literals.
        case oneOf([JSONValue])
        /// A string starting with the prefix.
        case prefix(String)
    }

    /// A number given literally or selected from the payload.
    public enum Amount: Sendable, Equatable {
        /// A number written in the rules file, such as `{"increment": 2}`.
        case literal(Int)
        /// A pointer into the payload, such as `{"set": "/unread"}`, read on every push.
        case pointer(JSONPointer)
    }

    /// What a matched rule does to its path (the rule's `action`, see <doc:RulesFile>).
    public enum Action: Sendable, Equatable {
        /// Set a dot.
        case dot
        /// Add to the count.
        case increment(Amount)
        /// Set the count (0 clears).
        case set(Amount)
        /// Remove the mark, or with `force` the whole subtree's marks.
        case clear(force: Bool)
        /// Match, and change nothing.
        case ignore
    }

    /// The rule's name, reported as `rule` in results.
    public let name: String
    let matchers: [Matcher]
    /// `matchers` without ownership (`matchers` keeps them alive), for ``matches(_:)``.
    let borrowedMatchers: [BorrowedMatcher]
    /// The compiled path template.
    public let template: PathTemplate
    /// The action.
    public let action: Action
    /// Seconds until the mark the action sets expires (the rule's `ttl`), if it has one.
    public let ttl: Amount?
    /// The once token given to the mark the action sets (the rule's `once`), if any.
    public let once: PathTemplate?

    init(
        name: String, matchers: [Matcher], template: PathTemplate, action: Action,
        ttl: Amount? = nil, once: PathTemplate? = nil
    ) {
        self.name = name
        self.matchers = matchers
        self.borrowedMatchers = Self.borrowed(matchers)
        self.template = template
        self.action = action
        self.ttl = ttl
        self.once = once
    }

    /// Whether one matcher holds for `payload`.
    static func holds(_ m: Matcher, _ payload: Selected) -> Bool {
        let value = payload.value(m.slot)
        switch m.fast {
        case .exists(let want): return (value != nil) == want
        case .string(let bytes): return value?.stringEquals(bytes: bytes) ?? false
        case .int(let n): return value?.intEquals(n) ?? false
        case .general: break
        }
        switch m.test {
        case .exists(let want):
            return (value != nil) == want
        case .equals(let literal):
            guard let value else { return false }
            return equal(value, literal)
        case .oneOf(let literals):
            guard let value else { return false }
            return literals.contains(where: { equal(value, $0) })
        case .prefix(let p):
            guard let value, value.kind == .string else { return false }
            return value.withStringBytes { bytes in bytes.starts(with: p.utf8) }
        }
    }

    /// Type-strict equality of a payload value and a rules literal (1 is not 1.0 nor true).
    static func equal(_ value: JSONRef, _ literal: JSONValue) -> Bool {
        switch literal {
        case .null: return value.isNull
        case .bool(let b): return value.bool == b
        case .int(let i): return value.kind == .int && value.int == i && !value.intOverflowed
        case .double(let d): return value.kind == .double && value.number == d
        case .string(let s): return value.stringEquals(s)
        case .array, .object: return value.kind != .null && value.toValue() == literal
        }
    }
}
