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
