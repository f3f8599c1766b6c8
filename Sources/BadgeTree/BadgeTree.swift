/// A tree of badges whose parents sum and union their children.
///
/// Nodes live on paths such as `root.chat.alice`. A node may carry an own `Mark`. A node
/// with a marked descendant is a *summary* node: its count is the sum of its children's
/// counts, it shows when any child shows, and its own mark is shadowed. Aggregates are kept
/// up to date on every operation, so an operation costs O(depth), not O(size).
///
/// `BadgeTree` is a value type: copy it to snapshot it. For a tree shared between threads,
/// with observers, use `BadgeCenter`.
///
/// ```swift
/// var tree = BadgeTree()
/// try tree.increment("root.chat.alice")            // root.chat.alice 1, root.chat 1, root 1
/// let outcome = try tree.clear("root.chat.alice")
/// outcome.decrement                                // Decrement(by: 1, paths: ["root.chat.alice"])
/// ```
public struct BadgeTree: Sendable {
    /// Settings that come from the rules file.
    public struct Configuration: Sendable, Equatable {
        /// The first segment of every path.
        public var root: String
        /// Counts above this show as `"\(maxDisplay)+"`.
        public var maxDisplay: Int
        /// Display modes by path; paths not named use `.number`.
        public var display: [String: DisplayMode]

        /// Creates tree settings; the defaults are a `root` tree, `99+` above 99, numbers everywhere.
        ///
        /// - Parameters:
        ///   - root: the first segment of every path; one segment, without `.`.
        ///   - maxDisplay: the largest count shown as a number; above it the text is `"\(maxDisplay)+"`.
        ///   - display: display modes by exact path; paths not named use ``DisplayMode/number``.
        public init(root: String = "root", maxDisplay: Int = 99, display: [String: DisplayMode] = [:]) {
            self.root = root
            self.maxDisplay = maxDisplay
            self.display = display
        }
    }

    package struct Node: Sendable {
        var path: String
        var parent: Int32
        var firstChild: Int32 = -1
        var nextSibling: Int32 = -1
        /// -1 no mark, 0 dot, n > 0 count.
        var own: Int = -1
        /// Marked nodes strictly below this one.
        var markedBelow: Int32 = 0
        /// Sum of the children's counts.
        var childSum: Int = 0
        /// Cached aggregate count and show.
        var count: Int = 0
        var show: Bool = false
        var depth: UInt8
        var mode: DisplayMode
    }

    /// The configuration the tree was made with.
    public let configuration: Configuration
    private(set) var nodes: [Node] = []
    private var index: [String: Int32] = [:]

    /// Creates an empty tree whose only node is the root.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let root = configuration.root
        nodes.append(Node(path: root, parent: -1, depth: 1, mode: configuration.display[root] ?? .number))
        index[root] = 0
    }

    /// The largest own count a node keeps; larger counts are lowered to it.
    ///
    /// APNs badges stop at 2^31 − 1. The cap also keeps summary counts from overflowing:
    /// a sum would need more than 2^32 counted nodes to exceed `Int.max`.
    public static let maxCount = Int(Int32.max)

    /// The root's count: the total the app icon shows under the `tree` icon policy.
    public var total: Int { nodes[0].count }

    /// Number of nodes, marked or not.
    public var nodeCount: Int { nodes.count }

    // MARK: - Operations

    /// Sets a dot on `path`, keeping a count it already holds.
    ///
    /// - Throws: `BadgePathError` when the path is not valid or not under this tree's root.
    /// - Complexity: O(depth).
    @discardableResult
    public mutating func set(_ path: String) throws(BadgePathError) -> Outcome {
        let i = try node(path)
        if nodes[i].own >= 0 { return .unchanged }
        return setOwn(i, to: 0)
    }

    /// Sets `path`'s own mark to a count (at most `maxCount`); 0 clears it.
    ///
    /// - Complexity: O(depth).
    @discardableResult
    public mutating func set(_ path: String, count: Int) throws(BadgePathError) -> Outcome {
        if count <= 0 { return try clear(path) }
        let i = try node(path)
        return setOwn(i, to: min(count, Self.maxCount))
    }

    /// Adds `k` to `path`'s own count (a dot counts as 0), stopping at `maxCount`. A result
    /// of 0 or less clears it.
    ///
    /// - Complexity: O(depth).
    @discardableResult
    public mutating func increment(_ path: String, by k: Int = 1) throws(BadgePathError) -> Outcome {
        let i = try node(path)
        let current = max(nodes[i].own, 0)
        let (sum, overflow) = current.addingReportingOverflow(k)
        let next = overflow ? (k > 0 ? Self.maxCount : 0) : min(sum, Self.maxCount)
        if next <= 0 { return clearOwn(i) }
        return setOwn(i, to: next)
    }

    /// Removes `path`'s own mark, or with `force` every mark in its subtree.
    ///
    /// Marks below `path` stay unless forced. Ancestors left with no marked descendant lose
    /// their shadowed own marks too. Clearing a path that does not exist changes nothing.
    ///
    /// - Complexity: O(depth), or O(depth + subtree) with `force`.
    @discardableResult
    public mutating func clear(_ path: String, force: Bool = false) throws(BadgePathError) -> Outcome {
        guard let i = index[path] else {
            try validate(path)
            return .unchanged
        }
        return force ? forceClear(Int(i)) : clearOwn(Int(i))
    }

    // MARK: - Queries

    /// The state of `path`; a path with no node is hidden with count 0.
    public func state(of path: String) -> BadgeState {
        guard let i = index[path] else {
            return BadgeState(path: path, count: 0, show: false,
                              display: BadgeDisplay(count: 0, show: false, mode: mode(for: path),
                                                    maxDisplay: configuration.maxDisplay))
        }
        return state(Int(i))
    }

    /// The own mark of `path`, if any.
    public func mark(of path: String) -> Mark? {
        guard let i = index[path] else { return nil }
        let own = nodes[Int(i)].own
        return own < 0 ? nil : (own == 0 ? .dot : .count(own))
    }

    /// Every own mark in the tree, in byte order of the paths: the tree's persistent state.
    public var marks: [(path: String, mark: Mark)] {
        var out: [(path: String, mark: Mark)] = []
        for node in nodes where node.own >= 0 {
            out.append((node.path, node.own == 0 ? .dot : .count(node.own)))
        }
        out.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        return out
    }

    /// Rebuilds a tree from marks (as `marks` returns them).
    ///
    /// - Throws: `BadgePathError` for a path that is not valid in this configuration.
    public init(configuration: Configuration, marks: [(path: String, mark: Mark)]) throws(BadgePathError) {
        self.init(configuration: configuration)
        for (path, mark) in marks {
            switch mark {
            case .dot: try set(path)
            case .count(let n): try set(path, count: n)
            }
        }
    }

    /// Every shown node, parents before children, siblings in byte order of their names.
    public func snapshot() -> [BadgeState] {
        var out: [BadgeState] = []
        var stack: [Int] = [0]
        while let i = stack.popLast() {
            let node = nodes[i]
            guard node.show else { continue }
            out.append(state(i))
            var children: [Int] = []
            var c = node.firstChild
            while c >= 0 {
                children.append(Int(c))
                c = nodes[Int(c)].nextSibling
            }
            // Reverse byte order so the stack pops them in byte order.
            children.sort { nodes[$1].path.utf8.lexicographicallyPrecedes(nodes[$0].path.utf8) }
            stack.append(contentsOf: children)
        }
        return out
    }

    /// Children of `path` that exist in the tree, in byte order (for drawing).
    public func children(of path: String) -> [String] {
        guard let i = index[path] else { return [] }
        var out: [String] = []
        var c = nodes[Int(i)].firstChild
        while c >= 0 {
            out.append(nodes[Int(c)].path)
            c = nodes[Int(c)].nextSibling
        }
        return out.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    // MARK: - Internals

    package func state(_ i: Int) -> BadgeState {
        let count = nodes[i].count, show = nodes[i].show
        return BadgeState(path: nodes[i].path, count: count, show: show,
                          display: BadgeDisplay(count: count, show: show, mode: nodes[i].mode,
                                                maxDisplay: configuration.maxDisplay))
    }

    private func mode(for path: String) -> DisplayMode { configuration.display[path] ?? .number }

    private func validate(_ path: String) throws(BadgePathError) {
        try BadgePath.validate(path)
        let root = configuration.root
        // The first segment is the root: the path is the root, or the root and a dot. (No
        // split into an array: this runs for every new path and every clear of a missing one.)
        let utf8 = path.utf8, rootCount = root.utf8.count
        let firstIsRoot = utf8.starts(with: root.utf8)
            && (utf8.count == rootCount || utf8[utf8.index(utf8.startIndex, offsetBy: rootCount)] == UInt8(ascii: "."))
        if !firstIsRoot {
            throw BadgePathError(path: path, reason: "a path must start with the root \"\(root)\"")
        }
    }

    /// The node for `path`, created with its missing ancestors.
    ///
    /// - Complexity: O(1) for an existing node, O(depth) to create one.
    package mutating func node(_ path: String) throws(BadgePathError) -> Int {
        if let i = index[path] { return Int(i) }
        try validate(path)
        return create(path)
    }

    private mutating func create(_ path: String) -> Int {
        if let i = index[path] { return Int(i) }
        guard let dot = path.utf8.lastIndex(of: UInt8(ascii: ".")) else { return 0 }
        let parent = create(String(path[..<dot]))
        let i = nodes.count
        nodes.append(Node(path: path, parent: Int32(parent), nextSibling: nodes[parent].firstChild,
                          depth: nodes[parent].depth &+ 1, mode: mode(for: path)))
        nodes[parent].firstChild = Int32(i)
        index[path] = Int32(i)
        return i
    }

    /// Gives node `i` the own value `own` (0 dot, n count) and updates the chain.
    private mutating func setOwn(_ i: Int, to own: Int) -> Outcome {
        let before = nodes[0].count
        let old = nodes[i].own
        if old == own { return .unchanged }
        nodes[i].own = own
        if old < 0 {
            var none: [String] = []
            adjustMarkedBelow(from: i, by: 1, removed: &none)
        }
        var outcome = Outcome()
        refresh(from: i, into: &outcome.changes)
        let after = nodes[0].count
        if after < before { outcome.decrement = Decrement(by: before - after, paths: [nodes[i].path]) }
        return outcome
    }

    /// Removes node `i`'s own mark and auto-clears ancestors left with no marked descendant.
    private mutating func clearOwn(_ i: Int) -> Outcome {
        guard nodes[i].own >= 0 else { return .unchanged }
        let before = nodes[0].count
        nodes[i].own = -1
        // Ancestors that lose a shadowed mark, if any (usually none: no array is made).
        var ancestors: [String] = []
        adjustMarkedBelow(from: i, by: -1, removed: &ancestors)
        var outcome = Outcome()
        refresh(from: i, into: &outcome.changes)
        let after = nodes[0].count
        if after < before {
            var removed = ancestors
            removed.append(nodes[i].path)
            removed.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            outcome.decrement = Decrement(by: before - after, paths: removed)
        }
        return outcome
    }

    /// Removes every mark in `i`'s subtree, `i`'s own included.
    private mutating func forceClear(_ i: Int) -> Outcome {
        let before = nodes[0].count
        var removed: [String] = []
        var changes: [BadgeState] = []
        var stack = [i]
        while let n = stack.popLast() {
            if nodes[n].own >= 0 {
                removed.append(nodes[n].path)
                nodes[n].own = -1
            }
            // `i` keeps its cached (count, show) so that `refresh` propagates the drop upwards.
            if n != i && (nodes[n].count != 0 || nodes[n].show) {
                nodes[n].count = 0
                nodes[n].show = false
                changes.append(state(n))
            }
            nodes[n].markedBelow = 0
            nodes[n].childSum = 0
            var c = nodes[n].firstChild
            while c >= 0 {
                stack.append(Int(c))
                c = nodes[Int(c)].nextSibling
            }
        }
        guard !removed.isEmpty else { return .unchanged }
        // Deepest first; byte order within a depth keeps output independent of insertion order.
        changes.sort { a, b in
            let da = nodes[index[a.path].map(Int.init) ?? 0].depth
            let db = nodes[index[b.path].map(Int.init) ?? 0].depth
            return da != db ? da > db : a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
        }
        adjustMarkedBelow(from: i, by: -Int32(removed.count), removed: &removed)
        refresh(from: i, into: &changes)
        let after = nodes[0].count
        var outcome = Outcome(changes: changes)
        if after < before {
            removed.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            outcome.decrement = Decrement(by: before - after, paths: removed)
        }
        return outcome
    }

    /// Adds `delta` to `markedBelow` of every ancestor of `i`; when marks are removed,
    /// ancestors left with none below lose their own (shadowed) mark too, and are added to
    /// `removed`.
    private mutating func adjustMarkedBelow(from i: Int, by delta: Int32, removed: inout [String]) {
        var delta = delta
        var a = nodes[i].parent
        while a >= 0 {
            let ai = Int(a)
            nodes[ai].markedBelow += delta
            if delta < 0, nodes[ai].markedBelow == 0, nodes[ai].own >= 0 {
                nodes[ai].own = -1
                removed.append(nodes[ai].path)
                delta -= 1
            }
            a = nodes[ai].parent
        }
    }

    /// Recomputes (count, show) from `i` up to the root, recording each change.
    private mutating func refresh(from i: Int, into changes: inout [BadgeState]) {
        // Field-wise access: copying a whole Node would retain its path and mode.
        // At most the node and its ancestors change: room for all of them at once, instead of
        // regrowing the array on the second and third append. (Only for a first refresh:
        // reserving on every call of a force-clear would regrow it exactly, again and again.)
        if changes.isEmpty { changes.reserveCapacity(Int(nodes[i].depth)) }
        var x = i
        while x >= 0 {
            let markedBelow = nodes[x].markedBelow, own = nodes[x].own, parent = Int(nodes[x].parent)
            let count = markedBelow > 0 ? nodes[x].childSum : max(own, 0)
            let show = own >= 0 || markedBelow > 0
            let oldCount = nodes[x].count
            if count != oldCount || show != nodes[x].show {
                nodes[x].count = count
                nodes[x].show = show
                changes.append(state(x))
                if parent >= 0 { nodes[parent].childSum += count - oldCount }
            }
            x = parent
        }
    }
}
