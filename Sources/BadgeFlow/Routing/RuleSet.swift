/// A compiled rules file (see <doc:RulesFile>): tree settings, display modes, routing rules, sync policy.
///
/// Load it once; routing a payload then costs pointer look-ups only, no parsing of rules.
///
/// ```swift
/// let rules = try RuleSet.load(file: "rules.json")   // or RuleSet.builtIn
/// ```
public struct RuleSet: Sendable {
    /// Where the app-icon number comes from.
    public enum IconPolicy: String, Sendable {
        /// The tree's total (the root's count).
        case tree
        /// The last payload's `aps.badge`, minus local decrements since.
        case payload
    }

    /// When the app should re-sync its unread count: the sync policy's settings.
    public typealias Sync = SyncPolicy.Configuration

    // Compiled rules never change: every filter worker compiles its own copy from `source`,
    // so a rule set edited after compiling would route differently with `--jobs 2`. Build a
    // new one instead, from text or from a `RuleSet.Definition`.

    /// The rules file version; only 1 exists.
    public var version: Int { 1 }
    /// The tree's settings (root name, `maxDisplay`, display modes).
    public let tree: BadgeTree.Configuration
    /// The icon policy.
    public let icon: IconPolicy
    /// The rules, tried in order.
    public let rules: [RoutingRule]
    /// `rules` without ownership, for routing: a rule borrowed through `Unmanaged` is used
    /// without the retain and release that loading a class reference from an array costs
    /// (several atomic operations a line). `rules` keeps every one of them alive.
    private let borrowedRules: [Unmanaged<RoutingRule>]
    /// The unread-sync policy's settings.
    public let sync: Sync

    init(tree: BadgeTree.Configuration, icon: IconPolicy, rules: [RoutingRule], sync: Sync) {
        self.tree = tree
        self.icon = icon
        self.rules = rules
        self.sync = sync
        borrowedRules = rules.map(Unmanaged.passUnretained)
    }
    /// The JSON text the rules were compiled from (empty when built in code).
    var source = ""
    /// The distinct pointers the rules select; matchers and templates refer to them by index.
    var pointers: [JSONPointer] = [] {
        didSet { plan = PointerPlan(pointers) }
    }
    /// How routing reads `pointers` (and their prefixes) from a payload.
    private var plan = PointerPlan([])
    /// The name the text came from, for errors.
    var sourceName = "<string>"
    /// The seed of the SQLite row cache's check for these rules (``RowCache/seed(_:)``); nil
    /// for rules built in code.
    private(set) var rowCacheSeed: UInt64?
    /// The seeds of the stored values' checks for these rules, by format name (each
    /// format's `StateFormat/rulesSeed`, computed once here); empty for rules built in code.
    private(set) var storeSeeds: [String: UInt64] = [:]

    /// Loads and compiles a rules file.
    ///
    /// A file that defines no rule is refused: it would route nothing (every push a
    /// `"rule": null`), which is never what a file given on purpose means. Rules compiled
    /// from text (``parse(_:file:)``), a state's recorded ones included, may define none.
    ///
    /// - Throws: `RulesError` naming the file, the JSON Pointer of the fault and why.
    public static func load(file: String) throws(RulesError) -> RuleSet {
        let text: String
        do {
            text = try FileIO.readString(file)
        } catch {
            throw RulesError(file: file, at: "", message: "cannot read the file: \(error.message)")
        }
        let rules = try parse(text, file: file)
        guard !rules.rules.isEmpty else {
            throw RulesError(
                file: file, at: "/rules", message: "the file defines no rule: every payload would match nothing and route nowhere")
        }
        return rules
    }

    /// Compiles rules from JSON text; `file` names it in errors.
    public static func parse(_ text: String, file: String = "<string>") throws(RulesError) -> RuleSet {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw RulesError(file: file, at: "", message: "not valid JSON: \(error.located(in: text))")
        }
        var compiler = RuleSetCompiler(file: file)
        var rules = try compiler.compile(value)
        rules.source = text
        rules.sourceName = file
        rules.rowCacheSeed = RowCache.seed(rules)
        rules.storeSeeds = StateFormat.seeds(rules)
        return rules
    }

    /// The rules' JSON text in compact form (keys in file order, no spaces): two rule sets
    /// with the same fingerprint behave the same. Empty for rules built in code.
    public var fingerprint: String {
        guard !source.isEmpty, let value = try? JSONValue.parse(source) else { return "" }
        return value.serialized()
    }

    /// The JSON value the rules were compiled from; nil for rules built in code.
    var sourceValue: JSONValue? {
        source.isEmpty ? nil : try? JSONValue.parse(source)
    }

    /// A copy that shares no storage with this one (compiled again from the same text).
    ///
    /// Each filter worker routes with its own copy: threads that retain and release the same
    /// arrays and strings fight over their reference counts, and that cost more than the
    /// routing itself.
    func independentCopy() -> RuleSet {
        guard !source.isEmpty else { return self }
        // json-c hands back new strings, so the compiled copy shares nothing with `self`.
        return (try? RuleSet.parse(source, file: sourceName)) ?? self
    }

    /// The built-in rules for a typical messaging app; see the BuiltInRules article and `Fixtures/rules/default.json`.
    public static let builtIn: RuleSet = {
        // The built-in text is a constant checked by the tests; a fault there is a bug.
        (try? parse(builtInText, file: "<built-in>")) ?? RuleSet(tree: .init(), icon: .tree, rules: [], sync: .init())
    }()

    /// The routing decision for one payload.
    enum Routing {
        /// No rule matched.
        case none
        /// Rule `rule` matched, to `path`; `once` is its rendered once token.
        case matched(rule: Int, path: String, action: RoutingRule.Action, once: String?)
        /// A rule matched but its path or amount could not be made.
        case failed(Diagnostic)
    }

    /// Tries the rules in order on `payload`; the first that matches and renders wins.
    ///
    /// - Parameters:
    ///   - aps: the payload's `aps` member as the caller looked it up (nil when it has none):
    ///     pointers under `/aps` start from it instead of looking it up again.
    ///   - base: the payload's pointer in the line (`""` or `/payload`), for errors.
    func route(_ payload: JSONRef, aps: JSONRef?, base: String) -> Routing {
        // The plan is borrowed, not retained: `self` keeps it alive for the whole call.
        Unmanaged.passUnretained(plan)._withUnsafeGuaranteedRef { plan in
            let steps = plan.steps
            return withUnsafeTemporaryAllocation(of: UInt.self, capacity: max(steps.count, 1)) { cache in
                cache.initialize(repeating: Selected.unresolved)
                if plan.apsSlot >= 0 { cache[plan.apsSlot] = Selected.entry(aps) }
                let selected = Selected(root: payload, steps: steps, cache: cache)
                return borrowedRules.withUnsafeBufferPointer { rules in
                    for i in rules.indices {
                        let routing = rules[i]._withUnsafeGuaranteedRef { rule -> Routing? in
                            guard rule.matches(selected) else { return nil }
                            switch rule.template.render(selected, base: base) {
                            case .missing: return nil
                            case .invalid(let d): return .failed(d)
                            case .path(let path):
                                guard let template = rule.once else {
                                    return .matched(rule: i, path: path, action: rule.action, once: nil)
                                }
                                switch template.renderToken(selected, base: base) {
                                case .missing: return nil
                                case .invalid(let d): return .failed(d)
                                case .path(let token): return .matched(rule: i, path: path, action: rule.action, once: token)
                                }
                            }
                        }
                        if let routing { return routing }
                    }
                    return .none
                }
            }
        }
    }
}

/// The values a payload holds at the rules' pointers, each resolved on first use.
///
/// Several rules test the same pointer (`/type`, `/aps/thread-id`), and a template reads the
/// value its rule just tested: resolving each pointer once per payload saves the repeats,
/// and a pointer's value is one step from its parent pointer's, itself resolved once.
struct Selected {
    let root: JSONRef
    let steps: UnsafeBufferPointer<PointerPlan.Step>
    /// Per slot: `unresolved`, `absent`, `null` (present, JSON null), or the json-c object's
    /// address (``JSONRef/bits``).
    let cache: UnsafeMutableBufferPointer<UInt>

    static let unresolved: UInt = 0
    static let absent: UInt = 1
    static let null: UInt = 2

    /// The cache entry for a looked-up value.
    @inline(__always)
    static func entry(_ value: JSONRef?) -> UInt {
        guard let value else { return absent }
        return value.isNull ? null : value.bits
    }

    /// The value at pointer `slot`, or nil when the payload has none there.
    func value(_ slot: Int) -> JSONRef? {
        switch cache[slot] {
        case Self.absent: return nil
        case Self.null: return JSONRef(bits: 0)
        case Self.unresolved:
            let step = steps[slot]
            let from: JSONRef?
            if step.parent < 0 { from = root } else { from = value(step.parent) }
            var found: JSONRef? = nil
            if let from {
                if let key = step.key {
                    found = from.step(key: key, hash: step.hash, index: step.index)
                } else {
                    found = from  // the whole-document pointer
                }
            }
            cache[slot] = Self.entry(found)
            return found
        case let bits: return JSONRef(bits: bits)
        }
    }
}
