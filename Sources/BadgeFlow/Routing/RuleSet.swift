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
    /// `rules` without ownership, for routing: a rule borrowed unretained is used
    /// without the retain and release that loading a class reference from an array costs
    /// (several atomic operations a line). `rules` keeps every one of them alive.
    let borrowedRules: [BorrowedRule]
    /// The unread-sync policy's settings.
    public let sync: Sync

    init(tree: BadgeTree.Configuration, icon: IconPolicy, rules: [RoutingRule], sync: Sync) {
        self.tree = tree
        self.icon = icon
        self.rules = rules
        self.sync = sync
        borrowedRules = Self.borrowed(rules)
    }
    /// The JSON text the rules were compiled from (empty when built in code).
    var source = ""
    /// The distinct pointers the rules select; matchers and templates refer to them by index.
    var pointers: [JSONPointer] = [] {
        didSet { plan = PointerPlan(pointers) }
    }
    /// How routing reads `pointers` (and their prefixes) from a payload.
    private(set) var plan = PointerPlan([])
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
}
