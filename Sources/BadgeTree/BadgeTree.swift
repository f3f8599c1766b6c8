/// A tree of badges whose parents sum and union their children.
///
/// Nodes live on paths such as `root.chat.alice`. A node may carry an own `Mark`. A node
/// with a marked descendant is a *summary* node: its count is the sum of its children's
/// counts, it shows when any child shows, and its own mark is shadowed. Aggregates are kept
/// up to date on every operation, so an operation costs O(depth), not O(size).
///
/// A node's ``Contribution`` says what of its aggregate reaches its parent; marks may expire
/// (``expire(through:)``), hold once tokens, and remember what set them (``explain(_:)``).
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
        /// How each named node's aggregate reaches its parent; paths not named use
        /// ``Contribution/count``.
        public var contribute: [String: Contribution]

        /// The default settings: a `root` tree, `99+` above 99, numbers everywhere.
        public init() {
            root = "root"
            maxDisplay = 99
            display = [:]
            contribute = [:]
        }

        /// Creates tree settings, checked now: settings that could be saved but not loaded
        /// back (an empty custom badge, a cap of 0, a path outside the root) are an error here,
        /// not at the app's next launch.
        ///
        /// - Parameters:
        ///   - root: the first segment of every path; one segment, without `.`.
        ///   - maxDisplay: the largest count shown as a number (1 or more); above it the text
        ///     is `"\(maxDisplay)+"`.
        ///   - display: display modes by exact path under `root`; paths not named use
        ///     ``DisplayMode/number``.
        ///   - contribute: contribution modes by exact path under `root`; paths not named use
        ///     ``Contribution/count``.
        /// - Throws: ``ConfigurationError`` naming the setting and what is wrong with it.
        public init(
            root: String = "root", maxDisplay: Int = 99, display: [String: DisplayMode] = [:],
            contribute: [String: Contribution] = [:]
        ) throws(ConfigurationError) {
            self.root = root
            self.maxDisplay = maxDisplay
            self.display = display
            self.contribute = contribute
            try validate()
        }
    }

    @usableFromInline package struct Node: Sendable {
        @usableFromInline var path: String
        @usableFromInline var parent: Int32
        var firstChild: Int32 = -1
        var nextSibling: Int32 = -1
        /// -1 no mark, 0 dot, n > 0 count.
        @usableFromInline var own: Int = -1
        /// Marked nodes strictly below this one.
        var markedBelow: Int32 = 0
        /// Sum of the children's counts.
        var childSum: Int = 0
        /// Cached aggregate count and show.
        @usableFromInline var count: Int = 0
        @usableFromInline var show: Bool = false
        var depth: UInt8
        /// How this node's aggregate reaches its parent.
        var contribution: Contribution = .count
        /// Provenance of the own mark: index into `origins` of the rule or op that last set it
        /// (0: unknown), its `seq` and its event time.
        var origin: UInt16 = 0
        var seq: Int = 0
        var at: Double = 0
        /// When the own mark expires; `.infinity` for never.
        var expires: Double = .infinity
        @usableFromInline var mode: DisplayMode
    }

    /// A pending expiry: node `node`'s mark expires at `time`, if it still does (entries
    /// are deleted lazily: an entry whose node no longer expires then is skipped).
    @usableFromInline struct PendingExpiry: Sendable {
        var time: Double
        var node: Int32
    }

    /// The configuration the tree was made with, as run-time settings (``setContribution(_:of:)``,
    /// ``setDisplay(_:of:)``) changed it.
    public internal(set) var configuration: Configuration
    @usableFromInline var nodes: [Node] = []
    /// Nodes by path, built once the tree has more than ``smallTree`` nodes: a small tree
    /// (most accounts' are) is searched by scanning `nodes`, and allocates no table.
    var index = PathIndex()
    /// The most nodes a tree searches without `index`.
    static let smallTree = 8
    /// Names of the rules and ops that set marks, interned; a node's `origin` is an index
    /// here plus one (0: unknown). Empty, so a tree allocates nothing for it until used.
    var origins: [String] = []
    /// `origins` by name, built once there are more than 8 (fewer are scanned).
    var originIndex: [String: UInt16] = [:]
    /// The origin interned last: a stream sets most marks with a few rules.
    private var lastOrigin: (name: String, id: UInt16) = ("", 0)
    /// A min-heap of pending expiries keyed by time (lazy deletion).
    @usableFromInline var expiries: [PendingExpiry] = []
    /// Once tokens by node: the token the mark holds and the tokens dismissed on that path.
    var tokens: [Int32: OnceTokens] = [:]

    /// Creates an empty tree whose only node is the root.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let root = configuration.root
        nodes.append(
            Node(
                path: root, parent: -1, depth: 1,
                contribution: configuration.contribute.isEmpty ? .count : configuration.contribute[root] ?? .count,
                mode: configuration.display[root] ?? .number))
    }

    /// The largest own count a node keeps; larger counts are lowered to it.
    ///
    /// APNs badges stop at 2^31 − 1. The cap also keeps summary counts from overflowing:
    /// a sum would need more than 2^32 counted nodes to exceed `Int.max`.
    public static let maxCount = Int(Int32.max)

    /// The root's count: the total the app icon shows under the `tree` icon policy.
    @inlinable public var total: Int { nodes[0].count }

    /// Number of nodes, marked or not.
    public var nodeCount: Int { nodes.count }

    /// Number of marks (``marks``'s count, without building the list).
    ///
    /// - Complexity: O(nodes).
    @inlinable public var markCount: Int {
        var n = 0
        for i in nodes.indices where nodes[i].own >= 0 { n += 1 }
        return n
    }

    // MARK: - Operations

    /// Sets a dot on `path`, keeping a count it already holds.
    ///
    /// The mark then expires at `expires` (none: it never does, and an earlier expiry is
    /// removed), holds the once token `once`, and remembers `source` for ``explain(_:)``;
    /// these are updated even when the mark itself stays as it was. A set carrying a token
    /// that was dismissed on `path` (the path was cleared while holding it) does nothing.
    ///
    /// - Parameters:
    ///   - path: the node to mark.
    ///   - expires: when the mark expires, in event time (see ``expire(through:)``).
    ///   - once: a once token for the mark.
    ///   - source: what set the mark (`seq`, rule or op, time), for ``explain(_:)``.
    /// - Throws: `BadgePathError` when the path is not valid or not under this tree's root.
    /// - Complexity: O(depth).
    @discardableResult
    public mutating func set(
        _ path: String, expires: Double? = nil, once: String? = nil,
        source: MarkSource? = nil
    ) throws(BadgePathError) -> Outcome {
        // Changed first, then read: `outcome(of: try …)` would read the tree before the change.
        let change = try setChange(path, expires: expires, once: once, source: source)
        return outcome(of: change)
    }

    /// ``set(_:expires:once:source:)`` with its changes as a ``Change``.
    package mutating func setChange(
        _ path: String, expires: Double?, once: String?, source: MarkSource?
    ) throws(BadgePathError) -> Change {
        let i = try node(path)
        if once != nil, isDismissed(i, once) { return Change() }
        let change = nodes[i].own >= 0 ? Change() : setOwn(i, to: 0)
        stamp(i, expires: expires, once: once, source: source)
        return change
    }

    /// Sets `path`'s own mark to a count (at most `maxCount`); 0 clears it.
    ///
    /// `expires`, `once` and `source` work as for ``set(_:expires:once:source:)``.
    ///
    /// - Parameters:
    ///   - path: the node to mark.
    ///   - count: the count; 0 or less clears the mark.
    ///   - expires: when the mark expires, in event time.
    ///   - once: a once token for the mark.
    ///   - source: what set the mark, for ``explain(_:)``.
    /// - Complexity: O(depth).
    @discardableResult
    public mutating func set(
        _ path: String, count: Int, expires: Double? = nil, once: String? = nil,
        source: MarkSource? = nil
    ) throws(BadgePathError) -> Outcome {
        // Changed first, then read: `outcome(of: try …)` would read the tree before the change.
        let change = try setChange(path, count: count, expires: expires, once: once, source: source)
        return outcome(of: change)
    }

    /// ``set(_:count:expires:once:source:)`` with its changes as a ``Change``.
    package mutating func setChange(
        _ path: String, count: Int, expires: Double?, once: String?, source: MarkSource?
    ) throws(BadgePathError) -> Change {
        if count <= 0 {
            if once != nil, let i = find(path), isDismissed(Int(i), once) { return Change() }
            return try clearChange(path)
        }
        let i = try node(path)
        if once != nil, isDismissed(i, once) { return Change() }
        let change = setOwn(i, to: min(count, Self.maxCount))
        stamp(i, expires: expires, once: once, source: source)
        return change
    }

    /// Adds `k` to `path`'s own count (a dot counts as 0), stopping at `maxCount`. A result
    /// of 0 or less clears it.
    ///
    /// `expires`, `once` and `source` work as for ``set(_:expires:once:source:)``.
    ///
    /// - Parameters:
    ///   - path: the node whose count grows.
    ///   - k: how much to add (negative lowers it).
    ///   - expires: when the mark expires, in event time.
    ///   - once: a once token for the mark.
    ///   - source: what set the mark, for ``explain(_:)``.
    /// - Complexity: O(depth).
    @discardableResult
    public mutating func increment(
        _ path: String, by k: Int = 1, expires: Double? = nil, once: String? = nil,
        source: MarkSource? = nil
    ) throws(BadgePathError) -> Outcome {
        // Changed first, then read: `outcome(of: try …)` would read the tree before the change.
        let change = try incrementChange(path, by: k, expires: expires, once: once, source: source)
        return outcome(of: change)
    }

    /// ``increment(_:by:expires:once:source:)`` with its changes as a ``Change``.
    @inlinable
    package mutating func incrementChange(
        _ path: String, by k: Int, expires: Double?, once: String?, source: MarkSource?
    ) throws(BadgePathError) -> Change {
        let i = try node(path)
        if once != nil, isDismissed(i, once) { return Change() }
        let current = max(nodes[i].own, 0)
        let (sum, overflow) = current.addingReportingOverflow(k)
        let next = overflow ? (k > 0 ? Self.maxCount : 0) : min(sum, Self.maxCount)
        if next <= 0 { return clearOwn(i) }
        let change = setOwn(i, to: next)
        stamp(i, expires: expires, once: once, source: source)
        return change
    }

    /// Removes `path`'s own mark, or with `force` every mark in its subtree.
    ///
    /// Marks below `path` stay unless forced. Ancestors left with no marked descendant lose
    /// their shadowed own marks too. Clearing a path that does not exist changes nothing.
    ///
    /// - Complexity: O(depth), or O(depth + subtree) with `force`.
    @discardableResult
    public mutating func clear(_ path: String, force: Bool = false) throws(BadgePathError) -> Outcome {
        guard let i = find(path) else {
            try validate(path)
            return .unchanged
        }
        if force { return forceClear(Int(i)) }
        let change = clearOwn(Int(i))
        return outcome(of: change)
    }

    /// ``clear(_:force:)`` without `force`, with its changes as a ``Change``.
    package mutating func clearChange(_ path: String) throws(BadgePathError) -> Change {
        guard let i = find(path) else {
            try validate(path)
            return Change()
        }
        return clearOwn(Int(i))
    }

    /// What an operation on one node changed, without the states: the node and those of its
    /// ancestors whose (count, show) changed, and the decrement. A result line is written
    /// from the tree's nodes (``forEachState(of:_:)``), so no ``BadgeState`` array is made.
    @usableFromInline package struct Change: Sendable {
        /// The node the operation changed (-1: none).
        @usableFromInline package var node: Int32 = -1
        /// Bit k: the node k steps up from `node` changed (a path has at most 16 segments).
        @usableFromInline package var steps: UInt32 = 0
        /// Present when the operation lowered the tree's total.
        @usableFromInline package var decrement: Decrement?

        /// Whether no node changed.
        @inlinable package var isEmpty: Bool { steps == 0 }

        /// Creates a change; with no arguments, one that changed nothing.
        @inlinable package init(node: Int32 = -1, steps: UInt32 = 0, decrement: Decrement? = nil) {
            self.node = node
            self.steps = steps
            self.decrement = decrement
        }
    }

    /// The states of `change`'s nodes as they are now, deepest first: call before the tree
    /// changes again. Inlinable, so that the closure a result line writes each state with is
    /// inlined where it is called rather than called through a context, once per state.
    @inlinable
    package func forEachState(
        of change: Change, _ body: (_ path: borrowing String, _ count: Int, _ show: Bool, _ display: BadgeDisplay) -> Void
    ) {
        var x = Int(change.node), steps = change.steps
        while steps != 0 && x >= 0 {
            if steps & 1 != 0 {
                let count = nodes[x].count, show = nodes[x].show
                body(
                    nodes[x].path, count, show,
                    BadgeDisplay(count: count, show: show, mode: nodes[x].mode, maxDisplay: configuration.maxDisplay))
            }
            steps >>= 1
            x = Int(nodes[x].parent)
        }
    }

    /// `change` as an outcome: its nodes' states, deepest first, and its decrement.
    package func outcome(of change: Change) -> Outcome {
        var outcome = Outcome(decrement: change.decrement)
        appendStates(of: change, to: &outcome.changes)
        return outcome
    }

    private func appendStates(of change: Change, to changes: inout [BadgeState]) {
        guard !change.isEmpty else { return }
        if changes.isEmpty { changes.reserveCapacity(change.steps.nonzeroBitCount) }
        var x = Int(change.node), steps = change.steps
        while steps != 0 && x >= 0 {
            if steps & 1 != 0 { changes.append(state(x)) }
            steps >>= 1
            x = Int(nodes[x].parent)
        }
    }

    // MARK: - Queries

    /// The state of `path`; a path with no node is hidden with count 0.
    public func state(of path: String) -> BadgeState {
        guard let i = find(path) else {
            return BadgeState(
                path: path, count: 0, show: false,
                display: BadgeDisplay(
                    count: 0, show: false, mode: mode(for: path),
                    maxDisplay: configuration.maxDisplay))
        }
        return state(Int(i))
    }

    /// The own mark of `path`, if any.
    public func mark(of path: String) -> Mark? {
        guard let i = find(path) else { return nil }
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
        guard let i = find(path) else { return [] }
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
        return BadgeState(
            path: nodes[i].path, count: count, show: show,
            display: BadgeDisplay(
                count: count, show: show, mode: nodes[i].mode,
                maxDisplay: configuration.maxDisplay))
    }

    private func mode(for path: String) -> DisplayMode { configuration.display[path] ?? .number }

    /// The node at `path`, if the tree has one.
    @inline(__always)
    private func find(_ path: String) -> Int32? {
        guard nodes.count > Self.smallTree else {
            for i in nodes.indices where nodes[i].path == path { return Int32(i) }
            return nil
        }
        return index.find(path) { nodes[Int($0)].path == path }
    }

    package func validate(_ path: String) throws(BadgePathError) {
        try BadgePath.validate(path)
        let root = configuration.root
        // The first segment is the root: the path is the root, or the root and a dot. (No
        // split into an array: this runs for every new path and every clear of a missing one.)
        let contiguous = path.utf8.withContiguousStorageIfAvailable { p in
            root.utf8.withContiguousStorageIfAvailable { r in Self.startsWithSegment(p, r) }
        }
        let firstIsRoot = (contiguous ?? nil) ?? Self.startsWithSegment(Array(path.utf8), Array(root.utf8))
        if !firstIsRoot {
            throw BadgePathError(path: path, reason: "a path must start with the root \"\(root)\"")
        }
    }

    /// The node for `path`, created with its missing ancestors.
    ///
    /// - Complexity: O(1) for an existing node, O(depth) to create one.
    @usableFromInline package mutating func node(_ path: String) throws(BadgePathError) -> Int {
        if let i = find(path) { return Int(i) }
        try validate(path)
        return create(path)
    }

    private mutating func create(_ path: String) -> Int {
        if let i = find(path) { return Int(i) }
        // The last dot's offset, found on the contiguous bytes (the generic `lastIndex(of:)` on
        // the UTF-8 view costs several times as much).
        let found =
            path.utf8.withContiguousStorageIfAvailable { b in b.lastIndex(of: UInt8(ascii: ".")) }
            ?? path.utf8.lastIndex(of: UInt8(ascii: ".")).map { path.utf8.distance(from: path.utf8.startIndex, to: $0) }
        guard let offset = found else { return 0 }
        let parent = create(String(path[..<path.utf8.index(path.utf8.startIndex, offsetBy: offset)]))
        let i = nodes.count
        nodes.append(
            Node(
                path: path, parent: Int32(parent), nextSibling: nodes[parent].firstChild,
                depth: nodes[parent].depth &+ 1,
                contribution: configuration.contribute.isEmpty ? .count : configuration.contribute[path] ?? .count,
                mode: mode(for: path)))
        nodes[parent].firstChild = Int32(i)
        if nodes.count > Self.smallTree {
            if index.isEmpty {
                for n in nodes.indices { index.insert(nodes[n].path, Int32(n)) }
            } else {
                index.insert(path, Int32(i))
            }
        }
        return i
    }

    /// Gives node `i` the own value `own` (0 dot, n count) and updates the chain.
    @usableFromInline mutating func setOwn(_ i: Int, to own: Int) -> Change {
        let before = nodes[0].count
        let old = nodes[i].own
        if old == own { return Change() }
        nodes[i].own = own
        if old < 0 {
            var none: [String] = []
            adjustMarkedBelow(from: i, by: 1, removed: &none)
        }
        var change = Change(node: Int32(i), steps: refresh(from: i))
        let after = nodes[0].count
        if after < before { change.decrement = Decrement(by: before - after, paths: [nodes[i].path]) }
        return change
    }

    /// Removes node `i`'s own mark and auto-clears ancestors left with no marked descendant.
    @usableFromInline mutating func clearOwn(_ i: Int) -> Change {
        guard nodes[i].own >= 0 else { return Change() }
        let before = nodes[0].count
        nodes[i].own = -1
        dropped(i)
        // Ancestors that lose a shadowed mark, if any (usually none: no array is made).
        var ancestors: [String] = []
        adjustMarkedBelow(from: i, by: -1, removed: &ancestors)
        var change = Change(node: Int32(i), steps: refresh(from: i))
        let after = nodes[0].count
        if after < before {
            var removed = ancestors
            removed.append(nodes[i].path)
            removed.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            change.decrement = Decrement(by: before - after, paths: removed)
        }
        return change
    }

    /// Removes every mark in `i`'s subtree, `i`'s own included.
    private mutating func forceClear(_ i: Int) -> Outcome {
        let before = nodes[0].count
        // The marks of the subtree that reach `i`'s parent (none past a `none` node).
        let reaching = (nodes[i].own >= 0 ? 1 : 0) + nodes[i].markedBelow
        var removed: [String] = []
        var changes: [BadgeState] = []
        var stack = [i]
        while let n = stack.popLast() {
            if nodes[n].own >= 0 {
                removed.append(nodes[n].path)
                nodes[n].own = -1
                dropped(n)
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
            let da = nodes[find(a.path).map(Int.init) ?? 0].depth
            let db = nodes[find(b.path).map(Int.init) ?? 0].depth
            return da != db ? da > db : a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
        }
        adjustMarkedBelow(from: i, by: -reaching, removed: &removed)
        let steps = refresh(from: i)
        appendStates(of: Change(node: Int32(i), steps: steps), to: &changes)
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
    ///
    /// A node that contributes ``Contribution/none`` passes nothing up: its marks do not
    /// make its ancestors summary nodes.
    private mutating func adjustMarkedBelow(from i: Int, by delta: Int32, removed: inout [String]) {
        var delta = delta
        var x = i
        while delta != 0, nodes[x].contribution != .none {
            let ai = Int(nodes[x].parent)
            if ai < 0 { break }
            nodes[ai].markedBelow += delta
            if delta < 0, nodes[ai].markedBelow == 0, nodes[ai].own >= 0 {
                nodes[ai].own = -1
                dropped(ai)
                removed.append(nodes[ai].path)
                delta -= 1
            }
            x = ai
        }
    }

    /// Recomputes (count, show) from `i` up to the root; returns which changed (bit k: the
    /// node k steps up from `i`).
    private mutating func refresh(from i: Int) -> UInt32 {
        // Field-wise access: copying a whole Node would retain its path and mode.
        var steps: UInt32 = 0
        var bit: UInt32 = 1
        var x = i
        while x >= 0 {
            let markedBelow = nodes[x].markedBelow, own = nodes[x].own, parent = Int(nodes[x].parent)
            let count = markedBelow > 0 ? nodes[x].childSum : max(own, 0)
            let show = own >= 0 || markedBelow > 0
            let oldCount = nodes[x].count
            if count != oldCount || show != nodes[x].show {
                nodes[x].count = count
                nodes[x].show = show
                steps |= bit
                if parent >= 0 && nodes[x].contribution == .count { nodes[parent].childSum += count - oldCount }
            }
            bit &<<= 1
            x = parent
        }
        return steps
    }
}

// MARK: - Provenance, expiry and once tokens

extension BadgeTree {
    /// How many dismissed once tokens a path keeps; the oldest is dropped beyond it.
    public static let onceTokensKept = 8

    /// Whether some mark may still expire (``expire(through:)`` has work to do).
    @inlinable public var hasPendingExpiries: Bool { !expiries.isEmpty }

    /// No mark expires before this time (nil: none may expire). A bound, not always a due
    /// time: a mark cleared or set again since may still hold its old place.
    public var earliestPendingExpiry: Double? { expiries.first?.time }

    /// Clears every mark whose expiry is at or before `time`, as ``clear(_:force:)`` would.
    ///
    /// The due marks are found through a min-heap keyed by expiry time, without scanning the
    /// tree: O(k·(log h + depth)) for k due marks in a heap of h entries.
    ///
    /// - Returns: the expired paths in byte order, each changed node once (its state after
    ///   every clear, deepest first) and one decrement for them all.
    public mutating func expire(through time: Double) -> Expiry {
        guard let first = expiries.first, first.time <= time else { return .none }
        var due: [Int] = []
        while let top = expiries.first, top.time <= time {
            popExpiry()
            let n = Int(top.node)
            if nodes[n].own >= 0, nodes[n].expires == top.time { due.append(n) }
        }
        guard !due.isEmpty else { return .none }
        due.sort { nodes[$0].path.utf8.lexicographicallyPrecedes(nodes[$1].path.utf8) }
        var unique: [Int] = []
        for n in due where unique.last != n { unique.append(n) }
        if unique.count == 1 {
            // One due mark (the usual case): a plain clear's outcome is already the answer.
            let change = clearOwn(unique[0])
            return Expiry(paths: [nodes[unique[0]].path], outcome: outcome(of: change))
        }
        // The nodes whose state may change: the due marks and their ancestors, with their
        // state before.
        var before: [Int: (count: Int, show: Bool, marked: Bool)] = [:]
        for n in unique {
            var x = n
            while x >= 0, before[x] == nil {
                before[x] = (nodes[x].count, nodes[x].show, nodes[x].own >= 0)
                x = Int(nodes[x].parent)
            }
        }
        let totalBefore = nodes[0].count
        for n in unique where nodes[n].own >= 0 { _ = clearOwn(n) }
        // Removed: the due marks and the ancestors' shadowed marks cleared with them (all
        // of them, as a forced clear lists them, whether or not each counted).
        var removed: [String] = []
        var changed: [Int] = []
        for (x, old) in before {
            if nodes[x].count != old.count || nodes[x].show != old.show { changed.append(x) }
            if old.marked && nodes[x].own < 0 { removed.append(nodes[x].path) }
        }
        changed.sort { a, b in
            nodes[a].depth != nodes[b].depth
                ? nodes[a].depth > nodes[b].depth
                : nodes[a].path.utf8.lexicographicallyPrecedes(nodes[b].path.utf8)
        }
        var outcome = Outcome(changes: changed.map { state($0) })
        let totalAfter = nodes[0].count
        if totalAfter < totalBefore {
            removed.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            outcome.decrement = Decrement(by: totalBefore - totalAfter, paths: removed)
        }
        return Expiry(paths: unique.map { nodes[$0].path }, outcome: outcome)
    }

    /// The marks that make `path` show, deepest first (byte order within a depth): its own
    /// mark when it is not a summary node, else the marks of its shown descendants that
    /// reach it (through children contributing ``Contribution/count`` or ``Contribution/dot``).
    ///
    /// - Complexity: O(size of the subtree).
    public func explain(_ path: String) -> [MarkRecord] {
        guard let start = find(path), nodes[Int(start)].show else { return [] }
        var found: [Int] = []
        var stack = [Int(start)]
        while let x = stack.popLast() {
            if nodes[x].markedBelow > 0 {
                var c = nodes[x].firstChild
                while c >= 0 {
                    let ci = Int(c)
                    if nodes[ci].show && nodes[ci].contribution != .none { stack.append(ci) }
                    c = nodes[ci].nextSibling
                }
            } else if nodes[x].own >= 0 {
                found.append(x)
            }
        }
        found.sort { a, b in
            nodes[a].depth != nodes[b].depth
                ? nodes[a].depth > nodes[b].depth
                : nodes[a].path.utf8.lexicographicallyPrecedes(nodes[b].path.utf8)
        }
        return found.map(record)
    }

    /// Every own mark with its source, expiry and held once token, in byte order of the paths.
    public var records: [MarkRecord] {
        var out: [MarkRecord] = []
        for i in nodes.indices where nodes[i].own >= 0 { out.append(record(i)) }
        out.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        return out
    }

    /// The once tokens dismissed on each path (oldest first), in byte order of the paths.
    public var dismissedTokens: [(path: String, tokens: [String])] {
        var out: [(path: String, tokens: [String])] = []
        for (i, t) in tokens where !t.dismissed.isEmpty { out.append((nodes[Int(i)].path, t.dismissed)) }
        out.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        return out
    }

    /// Puts back a mark as ``records`` gave it (with its source, expiry and token).
    ///
    /// - Throws: `BadgePathError` for a path that is not valid in this configuration.
    public mutating func restore(_ record: MarkRecord) throws(BadgePathError) {
        switch record.mark {
        case .dot: try set(record.path, expires: record.expires, once: record.once, source: record.source)
        case .count(let n): try set(record.path, count: n, expires: record.expires, once: record.once, source: record.source)
        }
    }

    /// Puts back many marks at once, as restoring each in turn would, but computing the
    /// aggregates once at the end instead of after every mark (and recording no changes):
    /// what loading a stored tree needs.
    ///
    /// - Throws: `BadgePathError` for a path that is not valid in this configuration; the
    ///   marks before it are then restored.
    /// - Complexity: O(n · depth) for n marks, plus O(nodes · depth) for the aggregates.
    public mutating func restore(contentsOf records: some Sequence<MarkRecord>) throws(BadgePathError) {
        defer { recomputeAggregates() }
        // A node per mark and a few shared ancestors (`root.chat.a`, `root.chat.b`, `root.mail`
        // make five nodes with the root): for such trees, one allocation of the size they end
        // up with instead of growing the array to twice that; deeper ones still grow.
        nodes.reserveCapacity(nodes.count + records.underestimatedCount + 2)
        for r in records {
            if case .count(let n) = r.mark, n <= 0 {
                // A clear (auto-clears included, no node made) needs the aggregates as they are.
                recomputeAggregates()
                try set(r.path, count: n, expires: r.expires, once: r.once, source: r.source)
                continue
            }
            let i = try node(r.path)
            if r.once != nil, isDismissed(i, r.once) { continue }
            switch r.mark {
            case .dot: if nodes[i].own < 0 { nodes[i].own = 0 }
            case .count(let n): nodes[i].own = min(n, Self.maxCount)
            }
            stamp(i, expires: r.expires, once: r.once, source: r.source)
        }
    }

    /// Recomputes every node's marked descendants, child sum, count and show from the own
    /// marks (parents come before their children in `nodes`).
    mutating func recomputeAggregates() {
        for i in nodes.indices {
            nodes[i].markedBelow = 0
            nodes[i].childSum = 0
        }
        // Children first: a node's sums are complete when it is reached, and it adds its
        // count and its marked nodes (itself included) to its parent's as its contribution
        // lets them through.
        for x in nodes.indices.reversed() {
            let markedBelow = nodes[x].markedBelow, own = nodes[x].own, parent = Int(nodes[x].parent)
            let count = markedBelow > 0 ? nodes[x].childSum : max(own, 0)
            nodes[x].count = count
            nodes[x].show = own >= 0 || markedBelow > 0
            guard parent >= 0 else { continue }
            switch nodes[x].contribution {
            case .count:
                nodes[parent].childSum += count
                nodes[parent].markedBelow += markedBelow + (own >= 0 ? 1 : 0)
            case .dot: nodes[parent].markedBelow += markedBelow + (own >= 0 ? 1 : 0)
            case .none: break
            }
        }
    }

    /// Puts back the once tokens dismissed on `path` (oldest first; the last
    /// ``onceTokensKept`` are kept).
    ///
    /// - Throws: `BadgePathError` for a path that is not valid in this configuration.
    public mutating func restoreDismissed(_ path: String, tokens list: [String]) throws(BadgePathError) {
        guard !list.isEmpty else { return }
        let i = Int32(try node(path))
        tokens[i, default: OnceTokens()].dismissed = Array(list.suffix(Self.onceTokensKept))
    }

    // MARK: Internals

    private func record(_ i: Int) -> MarkRecord {
        let node = nodes[i]
        let source = node.origin == 0 ? nil : MarkSource(seq: node.seq, origin: origins[Int(node.origin) - 1], at: node.at)
        return MarkRecord(
            path: node.path, mark: node.own == 0 ? .dot : .count(node.own), source: source,
            expires: node.expires.isFinite ? node.expires : nil,
            once: tokens.isEmpty ? nil : tokens[Int32(i)]?.held)
    }

    /// Whether `once` was dismissed on node `i`.
    @usableFromInline func isDismissed(_ i: Int, _ once: String?) -> Bool {
        guard let once, let t = tokens[Int32(i)] else { return false }
        return t.dismissed.contains(once)
    }

    /// Records what set node `i`'s mark, its expiry (none removes one) and its once token.
    @usableFromInline mutating func stamp(_ i: Int, expires: Double?, once: String?, source: MarkSource?) {
        guard nodes[i].own >= 0 else { return }
        if let source {
            nodes[i].origin = intern(source.origin)
            nodes[i].seq = source.seq
            nodes[i].at = source.at
        } else {
            nodes[i].origin = 0
        }
        let e = expires ?? .infinity
        if e != nodes[i].expires {
            nodes[i].expires = e
            if e.isFinite { pushExpiry(PendingExpiry(time: e, node: Int32(i))) }
        }
        if let once {
            tokens[Int32(i), default: OnceTokens()].held = once
        } else if !tokens.isEmpty, tokens[Int32(i)]?.held != nil {
            tokens[Int32(i)]?.held = nil
        }
    }

    /// Node `i`'s own mark was removed: it no longer expires, and a token it held is dismissed.
    mutating func dropped(_ i: Int) {
        nodes[i].expires = .infinity
        guard !tokens.isEmpty, let held = tokens[Int32(i)]?.held else { return }
        var t = tokens[Int32(i)] ?? OnceTokens()
        t.held = nil
        t.dismissed.removeAll { $0 == held }
        t.dismissed.append(held)
        if t.dismissed.count > Self.onceTokensKept { t.dismissed.removeFirst(t.dismissed.count - Self.onceTokensKept) }
        tokens[Int32(i)] = t
    }

    /// The index of `name` in the origin table, added on first use (the last one is cached:
    /// a stream sets most marks with a few rules).
    private mutating func intern(_ name: String) -> UInt16 {
        if name == lastOrigin.name { return lastOrigin.id }
        // A few rules set most marks: a scan of a short table beats hashing the name.
        if origins.count <= 8 {
            for (i, o) in origins.enumerated() where o == name {
                lastOrigin = (name, UInt16(i + 1))
                return UInt16(i + 1)
            }
        }
        if let i = originIndex[name] {
            lastOrigin = (name, i)
            return i
        }
        guard origins.count < Int(UInt16.max) else { return 0 }
        origins.append(name)
        let i = UInt16(origins.count)
        // The table is built only once the list is too long to scan (most trees never need it).
        if origins.count > 8 {
            if originIndex.isEmpty {
                for (k, o) in origins.enumerated() { originIndex[o] = UInt16(k + 1) }
            } else {
                originIndex[name] = i
            }
        }
        lastOrigin = (name, i)
        return i
    }

    private mutating func pushExpiry(_ e: PendingExpiry) {
        // Lazy deletion leaves stale entries: rebuild from the nodes when they dominate.
        if expiries.count > 64 && expiries.count > 2 * nodes.count {
            expiries.removeAll(keepingCapacity: true)
            for n in nodes.indices where nodes[n].own >= 0 && nodes[n].expires.isFinite {
                siftUp(appending: PendingExpiry(time: nodes[n].expires, node: Int32(n)))
            }
            if nodes[Int(e.node)].expires == e.time { return }
        }
        siftUp(appending: e)
    }

    mutating func siftUp(appending e: PendingExpiry) {
        expiries.append(e)
        var c = expiries.count - 1
        while c > 0 {
            let p = (c - 1) / 2
            if expiries[p].time <= expiries[c].time { break }
            expiries.swapAt(p, c)
            c = p
        }
    }

    private mutating func popExpiry() {
        guard let last = expiries.popLast(), !expiries.isEmpty else { return }
        expiries[0] = last
        var p = 0
        let n = expiries.count
        while true {
            let l = 2 * p + 1, r = l + 1
            var m = p
            if l < n && expiries[l].time < expiries[m].time { m = l }
            if r < n && expiries[r].time < expiries[m].time { m = r }
            if m == p { break }
            expiries.swapAt(p, m)
            p = m
        }
    }
}
