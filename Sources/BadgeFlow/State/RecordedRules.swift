extension RuleSet {
    /// What sets these rules apart from `recorded` (a state's), in the settings that change
    /// the drawing first: what an error about rules that differ says.
    package func difference(from recorded: RuleSet) -> String {
        if tree.root != recorded.tree.root { return "root \"\(tree.root)\", recorded \"\(recorded.tree.root)\"" }
        if tree.maxDisplay != recorded.tree.maxDisplay { return "maxDisplay \(tree.maxDisplay), recorded \(recorded.tree.maxDisplay)" }
        if tree.display != recorded.tree.display { return "display settings" }
        if tree.contribute != recorded.tree.contribute { return "contribute settings" }
        if icon != recorded.icon { return "icon \"\(icon.rawValue)\", recorded \"\(recorded.icon.rawValue)\"" }
        return "routing rules or sync settings"
    }
}

extension RuleSet {
    /// The rules' definitions by name, each as compact JSON, in file order (empty for rules
    /// built in code).
    private var definitions: [(name: String, json: String)] {
        guard case .object(let members)? = sourceValue, let list = members.first(where: { $0.0 == "rules" })?.1,
            case .array(let items) = list
        else { return [] }
        return items.map { item in
            var name = ""
            if case .object(let fields) = item, case .string(let n)? = fields.first(where: { $0.0 == "name" })?.1 { name = n }
            return (name, item.serialized())
        }
    }

    /// The notice a run gives when these rules replace `recorded`, a state's (rules change
    /// over time): which rules were added, removed or changed, which contribution, display
    /// and icon settings changed, and, when the totals of stored accounts can change with
    /// them, the fleet-wide `{"op":"reconcile"}` line that re-sends the right numbers.
    ///
    /// - Returns: the notice, and whether totals can change (contribution or icon policy).
    package func changeNotice(from recorded: RuleSet) -> (text: String, totalsCanChange: Bool) {
        func quoted(_ names: [String]) -> String { names.map { "\"\($0)\"" }.joined(separator: ", ") }
        func byteOrder(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
        var parts: [String] = []
        let old = recorded.definitions, new = definitions
        let oldNames = Set(old.map(\.name)), newNames = Set(new.map(\.name))
        let added = new.map(\.name).filter { !oldNames.contains($0) }
        let removed = old.map(\.name).filter { !newNames.contains($0) }
        let changed = new.filter { rule in old.contains { $0.name == rule.name && $0.json != rule.json } }.map(\.name)
        if !added.isEmpty { parts.append("rules added: \(quoted(added))") }
        if !removed.isEmpty { parts.append("rules removed: \(quoted(removed))") }
        if !changed.isEmpty { parts.append("rules changed: \(quoted(changed))") }
        let contributePaths = Set(tree.contribute.keys).union(recorded.tree.contribute.keys).sorted(by: byteOrder)
        let contribute = contributePaths.compactMap { path -> String? in
            let was = recorded.tree.contribute[path] ?? .count, now = tree.contribute[path] ?? .count
            return was == now ? nil : "\(path) \(was.rawValue) -> \(now.rawValue)"
        }
        if !contribute.isEmpty { parts.append("contribute: " + contribute.joined(separator: ", ")) }
        let displayPaths = Set(tree.display.keys).union(recorded.tree.display.keys).sorted(by: byteOrder)
        let display = displayPaths.compactMap { path -> String? in
            let was = recorded.tree.display[path] ?? .number, now = tree.display[path] ?? .number
            func text(_ m: DisplayMode) -> String {
                switch m {
                case .number: return "number"
                case .dot: return "dot"
                case .custom(let name): return "custom:" + name
                }
            }
            return was == now ? nil : "\(path) \(text(was)) -> \(text(now))"
        }
        if !display.isEmpty { parts.append("display: " + display.joined(separator: ", ")) }
        if tree.maxDisplay != recorded.tree.maxDisplay { parts.append("maxDisplay \(recorded.tree.maxDisplay) -> \(tree.maxDisplay)") }
        if icon != recorded.icon { parts.append("icon \"\(recorded.icon.rawValue)\" -> \"\(icon.rawValue)\"") }
        if sync != recorded.sync { parts.append("sync settings changed") }
        if parts.isEmpty { parts.append("the text differs, the rules do not") }
        let totalsCanChange = !contribute.isEmpty || icon != recorded.icon
        var text = "the rules differ from the state's recorded ones: " + parts.joined(separator: "; ")
        if totalsCanChange {
            text +=
                "; totals of stored accounts can change: feed one {\"op\":\"reconcile\"} line to re-send the right number to every device that shows an old one"
        }
        return (text, totalsCanChange)
    }
}
