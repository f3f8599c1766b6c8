extension RuleSet {
    /// Rules written in Swift: the same settings and rules a rules file holds.
    ///
    /// A definition compiles through the same checks as a rules file, so a fault is the same
    /// ``RulesError`` with the same JSON Pointer (`/rules/0/path`, `/display/root.news`, …) that
    /// the equivalent file would give. ``RuleSet/init(_:name:)`` compiles it; ``json`` is the rules
    /// file it stands for.
    ///
    /// ```swift
    /// let rules = try RuleSet(RuleSet.Definition(
    ///     display: [("root.news", .dot)],
    ///     rules: [
    ///         .init(name: "chat", match: [("/type", .equals(.string("chat")))],
    ///               path: "root.chat.{/aps/thread-id}", action: .increment),
    ///         .init(name: "read", match: [("/type", .equals(.string("read")))],
    ///               path: "root.chat.{/thread}", action: .clear),
    ///     ]))
    /// ```
    public struct Definition: Sendable {
        /// The first segment of every path.
        public var root: String
        /// Where the app-icon number comes from.
        public var icon: IconPolicy
        /// Counts above this show as `"N+"`.
        public var maxDisplay: Int
        /// Display modes by path, in the order a rules file would list them.
        public var display: [(path: String, mode: DisplayMode)]
        /// Contribution modes by path (the rules file's `contribute`), in file order.
        public var contribute: [(path: String, mode: Contribution)] = []
        /// The rules, tried in order.
        public var rules: [Rule]
        /// The unread-sync policy's settings.
        public var sync: SyncPolicy.Configuration

        /// Creates a definition; the defaults are those of an empty rules file.
        public init(
            root: String = "root", icon: IconPolicy = .tree, maxDisplay: Int = 99,
            display: [(path: String, mode: DisplayMode)] = [], rules: [Rule] = [],
            sync: SyncPolicy.Configuration = .init()
        ) {
            self.root = root
            self.icon = icon
            self.maxDisplay = maxDisplay
            self.display = display
            self.rules = rules
            self.sync = sync
        }

        /// One routing rule: when every `match` entry holds, the payload goes to `path`.
        public struct Rule: Sendable {
            /// The rule's name, reported as `rule` in results; unique within a rule set.
            public var name: String
            /// Tests of values selected by JSON Pointers; all must hold.
            public var match: [(pointer: String, test: Test)]
            /// The path template, with `{pointer}` holes (e.g. `root.chat.{/aps/thread-id}`).
            public var path: String
            /// What to do to the path.
            public var action: Action
            /// Seconds until the mark the action sets expires (the rule's `ttl`), if it does.
            public var ttl: Amount?
            /// The once token (text or a `{pointer}` template) of the mark the action sets.
            public var once: String?

            /// Creates a rule.
            public init(
                name: String, match: [(pointer: String, test: Test)] = [], path: String, action: Action,
                ttl: Amount? = nil, once: String? = nil
            ) {
                self.name = name
                self.match = match
                self.path = path
                self.action = action
                self.ttl = ttl
                self.once = once
            }
        }

        /// A test of one selected value.
        public enum Test: Sendable {
            /// Type-strict equality with a literal (1 is not 1.0, nor `true`, nor `"1"`).
            case equals(JSONValue)
            /// The value is present (`true`) or absent (`false`).
            case exists(Bool)
            /// Equal to one of the literals.
            case oneOf([JSONValue])
            /// A string that starts with the prefix.
            case prefix(String)
        }

        /// A number given literally or read from the payload at a JSON Pointer.
        public enum Amount: Sendable {
            /// A fixed number.
            case literal(Int)
            /// The integer at this pointer in the payload (e.g. `"/unread"`).
            case pointer(String)
        }

        /// What a matched rule does to its path.
        public enum Action: Sendable {
            /// Set a dot.
            case dot
            /// Add 1 to the count.
            case increment
            /// Add an amount to the count.
            case incrementBy(Amount)
            /// Set the count (0 clears).
            case set(Amount)
            /// Remove the path's mark; with `force`, every mark in its subtree.
            case clear(force: Bool = false)
            /// Match and change nothing.
            case ignore
        }

        /// The rules file this definition stands for.
        public var json: JSONValue {
            var members: [(String, JSONValue)] = [
                ("version", .int(1)),
                ("root", .string(root)),
                ("icon", .string(icon.rawValue)),
                ("maxDisplay", .int(Int64(maxDisplay))),
            ]
            if !display.isEmpty {
                members.append(("display", .object(display.map { ($0.path, Self.json($0.mode)) })))
            }
            if !contribute.isEmpty {
                members.append(("contribute", .object(contribute.map { ($0.path, .string($0.mode.rawValue)) })))
            }
            members.append(("rules", .array(rules.map(Self.json))))
            members.append(
                (
                    "sync",
                    .object([
                        ("pages", .array(sync.pages.sorted().map(JSONValue.string))),
                        ("interval", Self.json(seconds: sync.interval)),
                        ("away", Self.json(seconds: sync.away)),
                    ])
                ))
            return .object(members)
        }

        private static func json(_ mode: DisplayMode) -> JSONValue {
            switch mode {
            case .number: return .string("number")
            case .dot: return .string("dot")
            case .custom(let name): return .object([("custom", .string(name))])
            }
        }

        private static func json(seconds: Double) -> JSONValue {
            if seconds.rounded() == seconds, abs(seconds) < 1e15 { return .int(Int64(seconds)) }
            return .double(seconds)
        }

        private static func json(_ amount: Amount) -> JSONValue {
            switch amount {
            case .literal(let n): return .int(Int64(n))
            case .pointer(let p): return .string(p)
            }
        }

        private static func json(_ rule: Rule) -> JSONValue {
            var members: [(String, JSONValue)] = [("name", .string(rule.name))]
            if !rule.match.isEmpty {
                members.append(
                    (
                        "match",
                        .object(
                            rule.match.map { entry in
                                switch entry.test {
                                case .equals(let v): return (entry.pointer, v)
                                case .exists(let b): return (entry.pointer, .object([("exists", .bool(b))]))
                                case .oneOf(let vs): return (entry.pointer, .object([("in", .array(vs))]))
                                case .prefix(let p): return (entry.pointer, .object([("prefix", .string(p))]))
                                }
                            })
                    ))
            }
            members.append(("path", .string(rule.path)))
            let action: JSONValue
            switch rule.action {
            case .dot: action = .string("dot")
            case .increment: action = .string("increment")
            case .incrementBy(let a): action = .object([("increment", json(a))])
            case .set(let a): action = .object([("set", json(a))])
            case .clear(let force): action = force ? .object([("clear", .object([("force", .bool(true))]))]) : .string("clear")
            case .ignore: action = .string("ignore")
            }
            members.append(("action", action))
            if let ttl = rule.ttl { members.append(("ttl", json(ttl))) }
            if let once = rule.once { members.append(("once", .string(once))) }
            return .object(members)
        }
    }

    /// Compiles rules written in Swift, with the checks and errors of a rules file.
    ///
    /// - Parameters:
    ///   - definition: The settings and rules.
    ///   - name: Names the definition in errors, as a file name would.
    /// - Throws: ``RulesError`` with the JSON Pointer of the first fault, as for the same rules
    ///   written as a file.
    public init(_ definition: Definition, name: String = "<definition>") throws(RulesError) {
        // Compiling the JSON the definition stands for gives one set of checks for both
        // ways of writing rules, and a source text every filter worker compiles its own copy from.
        self = try RuleSet.parse(definition.json.serialized(), file: name)
    }
}
