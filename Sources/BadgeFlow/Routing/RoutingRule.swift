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

    /// One test of a rule on the value at one pointer.
    ///
    /// A class, read through `Unmanaged` when routing: a struct read from an array is copied,
    /// which retains and releases the literal its test holds (twice a line, typically).
    ///
    /// Unchecked Sendable: a string literal's bytes (``fast``) are written in `init` and only
    /// read after it; `deinit` frees them.
    final class Matcher: @unchecked Sendable {
        /// Index of the pointer in the rule set's pointer table.
        let slot: Int
        let test: Test
        /// The test in a form read without retaining anything: a string literal's bytes are
        /// owned by the matcher (immutable, freed with it).
        let fast: FastTest
        private let literalBytes: UnsafeMutableRawBufferPointer?

        init(slot: Int, test: Test) {
            self.slot = slot
            self.test = test
            switch test {
            case .exists(let want):
                literalBytes = nil
                fast = .exists(want)
            case .equals(.int(let n)):
                literalBytes = nil
                fast = .int(n)
            case .equals(.string(let s)):
                let utf8 = Array(s.utf8)
                let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(utf8.count, 1), alignment: 1)
                bytes.copyBytes(from: utf8)
                literalBytes = bytes
                fast = .string(UnsafeRawBufferPointer(rebasing: bytes[0..<utf8.count]))
            default:
                literalBytes = nil
                fast = .general
            }
        }

        deinit { literalBytes?.deallocate() }
    }

    /// The common tests, with nothing to retain when read; `general` reads ``Matcher/test``.
    enum FastTest {
        case exists(Bool)
        case string(UnsafeRawBufferPointer)
        case int(Int64)
        case general
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
    private let borrowedMatchers: [Unmanaged<Matcher>]
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
        self.borrowedMatchers = matchers.map(Unmanaged.passUnretained)
        self.template = template
        self.action = action
        self.ttl = ttl
        self.once = once
    }

    /// Whether every matcher holds for `payload`.
    func matches(_ payload: Selected) -> Bool {
        // Each matcher borrowed, never retained: its test is read in place.
        borrowedMatchers.withUnsafeBufferPointer { matchers in
            for i in matchers.indices where !matchers[i]._withUnsafeGuaranteedRef({ Self.holds($0, payload) }) {
                return false
            }
            return true
        }
    }

    /// Whether one matcher holds for `payload`.
    private static func holds(_ m: Matcher, _ payload: Selected) -> Bool {
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
