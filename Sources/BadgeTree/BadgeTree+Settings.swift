// Settings that change on a live tree (mute a chat, change a tab's display), and the
// difference between two trees (what a reload from a file changed).

extension BadgeTree {
    /// Changes how `path`'s aggregate reaches its parent: `.none` mutes it (its own badge
    /// stays, its parent and the icon stop counting it), `.dot` passes a dot, `.count` the
    /// count.
    ///
    /// - Returns: every node whose (count, show) changed, deepest first, and when the total
    ///   dropped a decrement whose `paths` is `[path]`.
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    /// - Complexity: O(nodes).
    @discardableResult
    public mutating func setContribution(_ contribution: Contribution, of path: String) throws(BadgePathError) -> Outcome {
        let i = try node(path)
        configuration.contribute[path] = contribution
        guard nodes[i].contribution != contribution else { return .unchanged }
        let before = nodes.map { (count: $0.count, show: $0.show) }
        let totalBefore = nodes[0].count
        nodes[i].contribution = contribution
        recomputeAggregates()
        var changed: [Int] = []
        for x in nodes.indices where nodes[x].count != before[x].count || nodes[x].show != before[x].show {
            changed.append(x)
        }
        changed.sort { a, b in
            nodes[a].depth != nodes[b].depth
                ? nodes[a].depth > nodes[b].depth
                : nodes[a].path.utf8.lexicographicallyPrecedes(nodes[b].path.utf8)
        }
        var outcome = Outcome(changes: changed.map { state($0) })
        if nodes[0].count < totalBefore { outcome.decrement = Decrement(by: totalBefore - nodes[0].count, paths: [path]) }
        return outcome
    }

    /// Changes how `path` shows its badge.
    ///
    /// - Returns: `path`'s new state when what it shows changed; the total never changes.
    /// - Throws: `BadgePathError` when the path is not valid in this tree or the mode is a
    ///   custom badge with an empty name.
    @discardableResult
    public mutating func setDisplay(_ mode: DisplayMode, of path: String) throws(BadgePathError) -> Outcome {
        if case .custom(let name) = mode, name.isEmpty {
            throw BadgePathError(path: path, reason: "a custom badge needs a non-empty name")
        }
        let i = try node(path)
        configuration.display[path] = mode
        let before = state(i).display
        nodes[i].mode = mode
        let after = state(i)
        return after.display == before ? .unchanged : Outcome(changes: [after])
    }

    /// What changes when this tree is replaced by `other`: every path whose (count, show) or
    /// display differs (as `other` has it; hidden when `other` has no such node), deepest
    /// first, and a decrement when the total drops, naming the marks removed or lowered.
    ///
    /// - Complexity: O(nodes of both trees).
    public func difference(to other: BadgeTree) -> Outcome {
        var changed: [(depth: Int, state: BadgeState)] = []
        var seen = Set<String>()
        for x in other.nodes.indices {
            let new = other.state(x)
            seen.insert(new.path)
            let old = state(of: new.path)
            if old.count != new.count || old.show != new.show || old.display != new.display {
                changed.append((Int(other.nodes[x].depth), new))
            }
        }
        for x in nodes.indices where !seen.contains(nodes[x].path) && nodes[x].show {
            changed.append((Int(nodes[x].depth), other.state(of: nodes[x].path)))
        }
        changed.sort { a, b in
            a.depth != b.depth ? a.depth > b.depth : a.state.path.utf8.lexicographicallyPrecedes(b.state.path.utf8)
        }
        var outcome = Outcome(changes: changed.map(\.state))
        if other.total < total {
            var lowered: [String] = []
            for (path, mark) in marks {
                switch (mark, other.mark(of: path)) {
                case (_, nil): lowered.append(path)
                case (.count(let a), .count(let b)) where b < a: lowered.append(path)
                case (.count, .dot): lowered.append(path)
                default: break
                }
            }
            outcome.decrement = Decrement(by: total - other.total, paths: lowered)
        }
        return outcome
    }
}

extension BadgeTree {
    /// The same tree without the nodes that hold nothing: no mark, no marked descendant and
    /// no dismissed once token. What every path shows is unchanged; a node is made again
    /// when a path under it is marked.
    ///
    /// A tree keeps the nodes its marks made after they are cleared (so marking the same
    /// chat again is cheap); an app whose paths come and go (a node per conversation) frees
    /// them with this now and then.
    ///
    /// - Complexity: O(marks · depth).
    public func compacted() -> BadgeTree {
        var tree = BadgeTree(configuration: configuration)
        // Every record and token path was valid in this same configuration: nothing throws.
        try? tree.restore(contentsOf: records)
        for (path, list) in dismissedTokens { try? tree.restoreDismissed(path, tokens: list) }
        return tree
    }
}
