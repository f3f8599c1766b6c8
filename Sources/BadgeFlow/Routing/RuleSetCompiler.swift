/// Turns a parsed rules file into a `RuleSet`, reporting the first fault with its pointer.
struct RuleSetCompiler {
    let file: String
    /// Every distinct pointer the rules select, so routing resolves each once per payload.
    private var pointers: [JSONPointer] = []
    private var slots: [JSONPointer: Int] = [:]

    init(file: String) { self.file = file }

    private mutating func slot(for pointer: JSONPointer) -> Int {
        if let s = slots[pointer] { return s }
        pointers.append(pointer)
        slots[pointer] = pointers.count - 1
        return pointers.count - 1
    }

    private func fail(_ at: String, _ message: String) -> RulesError {
        RulesError(file: file, at: at, message: message)
    }

    mutating func compile(_ root: JSONValue) throws(RulesError) -> RuleSet {
        guard case .object(let members) = root else {
            throw fail("", "a rules file must be a JSON object, got \(root.typeName)")
        }
        let known: Set<String> = ["version", "root", "icon", "maxDisplay", "display", "contribute", "rules", "sync"]
        for (key, _) in members where !known.contains(key) {
            throw fail(
                "/" + JSONPointer.escape(key),
                "unknown key \"\(key)\"; expected one of \(known.sorted().joined(separator: ", "))")
        }
        if let v = root["version"], v != .int(1) {
            throw fail("/version", "only version 1 exists, got \(v.serialized())")
        }
        var tree = BadgeTree.Configuration()
        if let v = root["root"] {
            guard case .string(let s) = v, (try? BadgePath.validate(s)) != nil, !s.contains(".") else {
                throw fail("/root", "root must be one path segment such as \"root\", got \(v.serialized())")
            }
            tree.root = s
        }
        var icon = RuleSet.IconPolicy.tree
        if let v = root["icon"] {
            guard case .string(let s) = v, let p = RuleSet.IconPolicy(rawValue: s) else {
                throw fail("/icon", "icon must be \"tree\" or \"payload\", got \(v.serialized())")
            }
            icon = p
        }
        if let v = root["maxDisplay"] {
            guard case .int(let n) = v, n >= 1, n <= 1_000_000 else {
                throw fail("/maxDisplay", "maxDisplay must be an integer from 1 to 1000000, got \(v.serialized())")
            }
            tree.maxDisplay = Int(n)
        }
        if let v = root["display"] {
            tree.display = try display(v, root: tree.root)
        }
        if let v = root["contribute"] {
            tree.contribute = try contribute(v, root: tree.root)
        }
        var rules: [RoutingRule] = []
        if let v = root["rules"] {
            guard case .array(let items) = v else { throw fail("/rules", "rules must be an array, got \(v.typeName)") }
            var names: Set<String> = []
            for (i, item) in items.enumerated() {
                let rule = try self.rule(item, at: "/rules/\(i)", root: tree.root)
                if !names.insert(rule.name).inserted {
                    throw fail("/rules/\(i)/name", "rule name \"\(rule.name)\" is used twice")
                }
                rules.append(rule)
            }
        }
        var sync = RuleSet.Sync()
        if let v = root["sync"] { sync = try self.sync(v) }
        var set = RuleSet(tree: tree, icon: icon, rules: rules, sync: sync)
        set.pointers = pointers
        return set
    }

    private func display(_ v: JSONValue, root: String) throws(RulesError) -> [String: DisplayMode] {
        guard case .object(let members) = v else { throw fail("/display", "display must be an object, got \(v.typeName)") }
        var out: [String: DisplayMode] = [:]
        for (path, mode) in members {
            let at = "/display/" + JSONPointer.escape(path)
            try checkPath(path, root: root, at: at)
            switch mode {
            case .string("number"): out[path] = .number
            case .string("dot"): out[path] = .dot
            case .object(let m) where m.count == 1 && m[0].0 == "custom":
                guard case .string(let name) = m[0].1, !name.isEmpty else {
                    throw fail(at + "/custom", "a custom badge needs a non-empty name, got \(m[0].1.serialized())")
                }
                out[path] = .custom(name)
            default:
                throw fail(at, "display mode must be \"number\", \"dot\" or {\"custom\": NAME}, got \(mode.serialized())")
            }
        }
        return out
    }

    private func contribute(_ v: JSONValue, root: String) throws(RulesError) -> [String: Contribution] {
        guard case .object(let members) = v else { throw fail("/contribute", "contribute must be an object, got \(v.typeName)") }
        var out: [String: Contribution] = [:]
        for (path, mode) in members {
            let at = "/contribute/" + JSONPointer.escape(path)
            try checkPath(path, root: root, at: at)
            guard case .string(let s) = mode, let c = Contribution(rawValue: s) else {
                throw fail(at, "contribution must be \"count\", \"dot\" or \"none\", got \(mode.serialized())")
            }
            out[path] = c
        }
        return out
    }

    private func checkPath(_ path: String, root: String, at: String) throws(RulesError) {
        do {
            try BadgePath.validate(path)
        } catch {
            throw fail(at, "\"\(path)\" is not a badge path: \(error.reason)")
        }
        if path != root && !path.hasPrefix(root + ".") {
            throw fail(at, "\"\(path)\" does not start with the root \"\(root)\"")
        }
    }

    private mutating func rule(_ v: JSONValue, at: String, root: String) throws(RulesError) -> RoutingRule {
        guard case .object(let members) = v else { throw fail(at, "a rule must be an object, got \(v.typeName)") }
        let known: Set<String> = ["name", "match", "path", "action", "ttl", "once"]
        for (key, _) in members where !known.contains(key) {
            throw fail(at + "/" + JSONPointer.escape(key), "unknown rule key \"\(key)\"; expected name, match, path, action, ttl, once")
        }
        guard case .string(let name)? = v["name"], !name.isEmpty else {
            throw fail(at + "/name", "a rule needs a non-empty string name")
        }
        var matchers: [RoutingRule.Matcher] = []
        if let m = v["match"] {
            guard case .object(let entries) = m else { throw fail(at + "/match", "match must be an object, got \(m.typeName)") }
            for (pointerText, test) in entries {
                let entryAt = at + "/match/" + JSONPointer.escape(pointerText)
                guard let pointer = JSONPointer(pointerText) else {
                    throw fail(entryAt, "\"\(pointerText)\" is not a JSON Pointer such as \"/aps/category\"")
                }
                let compiled = try self.test(test, at: entryAt)
                matchers.append(.init(slot: slot(for: pointer), test: compiled))
            }
        }
        guard case .string(let pathText)? = v["path"] else {
            throw fail(at + "/path", "a rule needs a path template such as \"root.chat.{/aps/thread-id}\"")
        }
        let template: PathTemplate
        switch PathTemplate.compile(pathText) {
        case .failure(let why): throw fail(at + "/path", why.reason)
        case .success(let t): template = t.withSlots { slot(for: $0) }
        }
        try checkPath(template.sample, root: root, at: at + "/path")
        guard let actionValue = v["action"] else {
            throw fail(
                at + "/action",
                "a rule needs an action: \"dot\", \"increment\", \"clear\", \"ignore\", {\"increment\": n}, {\"set\": n} or {\"clear\": {\"force\": true}}"
            )
        }
        var ttl: RoutingRule.Amount?
        if let t = v["ttl"] {
            ttl = try amount(t, at: at + "/ttl")
            if case .literal(let n)? = ttl, n < 0 { throw fail(at + "/ttl", "ttl takes 0 or more seconds, got \(n)") }
        }
        var once: PathTemplate?
        if let o = v["once"] {
            guard case .string(let text) = o, !text.isEmpty else {
                throw fail(at + "/once", "once takes a non-empty token or {pointer} template such as \"v{/version}\"")
            }
            switch PathTemplate.compile(text) {
            case .failure(let why): throw fail(at + "/once", why.reason)
            case .success(let t): once = t.withSlots { slot(for: $0) }
            }
        }
        return RoutingRule(
            name: name, matchers: matchers, template: template,
            action: try action(actionValue, at: at + "/action"), ttl: ttl, once: once)
    }

    private func test(_ v: JSONValue, at: String) throws(RulesError) -> RoutingRule.Test {
        guard case .object(let m) = v, m.count == 1,
            ["exists", "in", "prefix"].contains(m[0].0)
        else {
            if case .object = v {
                throw fail(at, "a match test object must be {\"exists\": bool}, {\"in\": [...]} or {\"prefix\": \"...\"}")
            }
            return .equals(v)
        }
        let (op, arg) = m[0]
        switch (op, arg) {
        case ("exists", .bool(let b)): return .exists(b)
        case ("in", .array(let items)): return .oneOf(items)
        case ("prefix", .string(let s)): return .prefix(s)
        default:
            throw fail(
                at + "/" + op, "\(op) takes \(op == "exists" ? "a boolean" : op == "in" ? "an array" : "a string"), got \(arg.typeName)")
        }
    }

    private func amount(_ v: JSONValue, at: String) throws(RulesError) -> RoutingRule.Amount {
        switch v {
        case .int(let n) where n >= Int64(Int32.min) && n <= Int64(Int32.max): return .literal(Int(n))
        case .string(let s):
            guard let p = JSONPointer(s), !s.isEmpty else {
                throw fail(at, "\"\(s)\" is not a JSON Pointer such as \"/unread\"")
            }
            return .pointer(p)
        default:
            throw fail(at, "expected an integer or a JSON Pointer string, got \(v.serialized())")
        }
    }

    private func action(_ v: JSONValue, at: String) throws(RulesError) -> RoutingRule.Action {
        switch v {
        case .string("dot"): return .dot
        case .string("increment"): return .increment(.literal(1))
        case .string("clear"): return .clear(force: false)
        case .string("ignore"): return .ignore
        case .object(let m) where m.count == 1:
            let (op, arg) = m[0]
            switch op {
            case "increment": return .increment(try amount(arg, at: at + "/increment"))
            case "set":
                let a = try amount(arg, at: at + "/set")
                if case .literal(let n) = a, n < 0 { throw fail(at + "/set", "set takes a count of 0 or more, got \(n)") }
                return .set(a)
            case "clear":
                guard case .object(let opts) = arg, opts.count <= 1,
                    opts.isEmpty || opts[0].0 == "force",
                    case .bool(let f) = (opts.isEmpty ? JSONValue.bool(false) : opts[0].1)
                else {
                    throw fail(at + "/clear", "clear takes {\"force\": true} or {\"force\": false}")
                }
                return .clear(force: f)
            default: break
            }
        default: break
        }
        throw fail(
            at,
            "unknown action \(v.serialized()); expected \"dot\", \"increment\", \"clear\", \"ignore\", {\"increment\": n}, {\"set\": n} or {\"clear\": {\"force\": true}}"
        )
    }

    private func sync(_ v: JSONValue) throws(RulesError) -> RuleSet.Sync {
        guard case .object(let members) = v else { throw fail("/sync", "sync must be an object, got \(v.typeName)") }
        var sync = RuleSet.Sync()
        for (key, value) in members {
            let at = "/sync/" + JSONPointer.escape(key)
            switch key {
            case "pages":
                guard case .array(let items) = value else { throw fail(at, "pages must be an array of page names") }
                var pages: Set<String> = []
                for (i, item) in items.enumerated() {
                    guard case .string(let s) = item else { throw fail(at + "/\(i)", "a page name must be a string") }
                    pages.insert(s)
                }
                sync.pages = pages
            case "interval", "away":
                let seconds: Double
                switch value {
                case .int(let n): seconds = Double(n)
                case .double(let d): seconds = d
                default: throw fail(at, "\(key) must be a number of seconds, got \(value.typeName)")
                }
                guard seconds > 0 else { throw fail(at, "\(key) must be more than 0 seconds") }
                if key == "interval" { sync.interval = seconds } else { sync.away = seconds }
            default:
                throw fail(at, "unknown sync key \"\(key)\"; expected pages, interval, away")
            }
        }
        return sync
    }
}
