import BadgeFlowTestSupport
import Testing
@testable import BadgeTree

/// One tree operation as the test generates it.
private enum Operation: CustomStringConvertible {
    case set(String)
    case setCount(String, Int)
    case increment(String, Int)
    case clear(String)
    case forceClear(String)
    /// `set` with an expiry `ttl` seconds from now: a dot when the count is 0.
    case setExpiring(String, count: Int, ttl: Int)
    /// Time passes by `seconds`, then due marks expire.
    case tick(Int)

    var path: String {
        switch self {
        case .set(let p), .setCount(let p, _), .increment(let p, _), .clear(let p), .forceClear(let p),
            .setExpiring(let p, _, _):
            return p
        case .tick: return "root"
        }
    }

    var description: String {
        switch self {
        case .set(let p): return "set(\(p))"
        case .setCount(let p, let n): return "set(\(p), count: \(n))"
        case .increment(let p, let k): return "increment(\(p), by: \(k))"
        case .clear(let p): return "clear(\(p))"
        case .forceClear(let p): return "clear(\(p), force: true)"
        case .setExpiring(let p, let n, let ttl): return "set(\(p), count: \(n), ttl: \(ttl))"
        case .tick(let dt): return "tick(\(dt))"
        }
    }

    /// Applies the operation at time `now` (after the tick, for a tick).
    func apply(to tree: inout BadgeTree, now: Double) throws -> Outcome {
        switch self {
        case .setExpiring(let p, let n, let ttl):
            let expires = now + Double(ttl)
            return n == 0 ? try tree.set(p, expires: expires) : try tree.set(p, count: n, expires: expires)
        case .tick: return tree.expire(through: now).outcome
        default: return try apply(to: &tree)
        }
    }

    func apply(to tree: inout BadgeTree) throws -> Outcome {
        switch self {
        case .set(let p): return try tree.set(p)
        case .setCount(let p, let n): return try tree.set(p, count: n)
        case .increment(let p, let k): return try tree.increment(p, by: k)
        case .clear(let p): return try tree.clear(p)
        case .forceClear(let p): return try tree.clear(p, force: true)
        case .setExpiring, .tick: return .unchanged
        }
    }
}

/// A deliberately naive badge tree: own marks in a table, every aggregate recomputed from
/// scratch by the documented tree rules (BadgeTree.docc/TreeSemantics.md) after each operation.
private struct ReferenceModel {
    struct Aggregate: Equatable {
        var count = 0
        var show = false
        /// Some node strictly below is marked.
        var markedBelow = false
    }

    let maxDisplay: Int
    let modes: [String: DisplayMode]
    /// Contribution modes by path (count when not named).
    var contribute: [String: Contribution] = [:]
    /// The current time, and each marked node's expiry when it has one.
    private(set) var now = 0.0
    private(set) var expires: [Int: Double] = [:]
    /// Every path the test has named, with its ancestors; a node's number is its index.
    private(set) var paths: [String] = ["root"]
    private var ids: [String: Int] = ["root": 0]
    private var parent: [Int] = [-1]
    private var children: [[Int]] = [[]]
    private(set) var depth: [Int] = [1]
    /// Own marks: nil none, 0 a dot, n > 0 a count.
    private(set) var marks: [Int?] = [nil]
    /// Node numbers, deepest first, for bottom-up passes.
    private var deepestFirst: [Int] = [0]

    init(maxDisplay: Int, modes: [String: DisplayMode]) {
        self.maxDisplay = maxDisplay
        self.modes = modes
    }

    func id(_ path: String) -> Int? { ids[path] }

    /// The node for `path`, added with its missing ancestors.
    mutating func touch(_ path: String) -> Int {
        if let i = ids[path] { return i }
        guard let dot = path.lastIndex(of: ".") else { return 0 }
        let p = touch(String(path[..<dot]))
        let i = paths.count
        paths.append(path)
        ids[path] = i
        parent.append(p)
        children.append([])
        children[p].append(i)
        depth.append(depth[p] + 1)
        marks.append(nil)
        deepestFirst = paths.indices.sorted { depth[$0] > depth[$1] }
        return i
    }

    /// Every node's aggregate, from the own marks alone.
    func aggregates() -> [Aggregate] {
        var result = [Aggregate](repeating: Aggregate(), count: paths.count)
        for p in deepestFirst {
            // What each child passes up: count mode everything, dot mode its show and marks, none nothing.
            let kids = children[p]
            let passing = kids.filter { (contribute[paths[$0]] ?? .count) != .none }
            let counted = kids.filter { (contribute[paths[$0]] ?? .count) == .count }
            let markedBelow = passing.contains { marks[$0] != nil || result[$0].markedBelow }
            if markedBelow {
                // A summary node: sum of the counted children, shown when any passing child shows.
                let sum = counted.reduce(0) { $0 + result[$1].count }
                let anyShows = passing.contains { result[$0].show }
                result[p] = Aggregate(count: sum, show: anyShows, markedBelow: true)
            } else {
                result[p] = Aggregate(count: marks[p] ?? 0, show: marks[p] != nil, markedBelow: false)
            }
        }
        return result
    }

    /// The display text the tree documentation gives (TreeSemantics.md), written out independently of `BadgeDisplay`.
    func display(_ i: Int, _ a: Aggregate) -> String {
        let mode = modes[paths[i]] ?? .number
        if a.count > 0, mode != .dot { return a.count > maxDisplay ? "\(maxDisplay)+" : "\(a.count)" }
        guard a.show else { return "hidden" }
        if case .custom(let name) = mode { return "custom:\(name)" }
        return "dot"
    }

    private func isInSubtree(_ i: Int, of top: Int) -> Bool {
        var x = i
        while x >= 0 {
            if x == top { return true }
            x = parent[x]
        }
        return false
    }

    private mutating func removeMark(_ i: Int, into removed: inout [String]) {
        expires[i] = nil
        if marks[i] != nil {
            marks[i] = nil
            removed.append(paths[i])
        }
    }

    /// Applies `op`; returns the paths of the marks it removed (auto-cleared ones included).
    mutating func apply(_ op: Operation) -> [String] {
        let before = aggregates()
        var removed: [String] = []
        switch op {
        case .set(let p):
            let i = touch(p)
            if marks[i] == nil { marks[i] = 0 }
        case .setCount(let p, let n):
            if n <= 0 {
                if let i = id(p) { removeMark(i, into: &removed) }
            } else {
                marks[touch(p)] = min(n, BadgeTree.maxCount)
            }
        case .increment(let p, let k):
            let i = touch(p)
            // k is either small or huge; a huge one reaches the cap from any count.
            let next = k >= BadgeTree.maxCount ? BadgeTree.maxCount : (marks[i] ?? 0) + k
            if next <= 0 {
                removeMark(i, into: &removed)
            } else {
                marks[i] = min(next, BadgeTree.maxCount)
            }
        case .clear(let p):
            if let i = id(p) { removeMark(i, into: &removed) }
        case .forceClear(let p):
            if let top = id(p) {
                for i in paths.indices where isInSubtree(i, of: top) { removeMark(i, into: &removed) }
            }
        case .setExpiring(let p, let n, _):
            let i = touch(p)
            if n == 0 {
                if marks[i] == nil { marks[i] = 0 }
            } else {
                marks[i] = min(n, BadgeTree.maxCount)
            }
        case .tick(let dt):
            now += Double(dt)
            // Every due mark is cleared (a scan: the model has no heap).
            for (i, t) in expires where t <= now { removeMark(i, into: &removed) }
        }
        // A set or increment that leaves a mark sets its expiry, or removes it without a ttl.
        if case .setExpiring(let p, _, let ttl) = op, let i = id(p) {
            expires[i] = now + Double(ttl)
        } else if case .tick = op {
        } else if let i = id(op.path), marks[i] != nil {
            switch op {
            case .set, .setCount, .increment: expires[i] = nil
            default: break
            }
        }
        guard !removed.isEmpty else { return removed }
        // Ancestors left with no marked descendant lose their shadowed own mark too; each
        // such loss can leave the next ancestor up with none, so repeat until nothing moves.
        var changed = true
        while changed {
            changed = false
            let now = aggregates()
            for i in paths.indices where marks[i] != nil && before[i].markedBelow && !now[i].markedBelow {
                removeMark(i, into: &removed)
                changed = true
            }
        }
        return removed
    }

    /// The paths that are due at `time`, in byte order.
    func due(at time: Double) -> [String] {
        expires.filter { $0.value <= time }.map { paths[$0.key] }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The marks that light node `i` (what `explain` reports), deepest first, byte order within a depth.
    func lighting(_ i: Int, _ aggregates: [Aggregate]) -> [String] {
        guard aggregates[i].show else { return [] }
        var out: [Int] = []
        func visit(_ x: Int) {
            if aggregates[x].markedBelow {
                for c in children[x] where aggregates[c].show && (contribute[paths[c]] ?? .count) != .none { visit(c) }
            } else if marks[x] != nil {
                out.append(x)
            }
        }
        visit(i)
        return out.sorted { depth[$0] != depth[$1] ? depth[$0] > depth[$1] : paths[$0].utf8.lexicographicallyPrecedes(paths[$1].utf8) }
            .map { paths[$0] }
    }

    /// The own marks as `path=dot` or `path=n`, in byte order of the paths.
    var markList: [String] {
        paths.indices
            .compactMap { i in marks[i].map { (paths[i], $0) } }
            .sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
            .map { $0.1 == 0 ? "\($0.0)=dot" : "\($0.0)=\($0.1)" }
    }

    /// The shown nodes, parents first, siblings in byte order of their names.
    func snapshot(_ aggregates: [Aggregate]) -> [String] {
        var out: [String] = []
        func visit(_ i: Int) {
            guard aggregates[i].show else { return }
            out.append(paths[i])
            for c in children[i].sorted(by: { paths[$0].utf8.lexicographicallyPrecedes(paths[$1].utf8) }) { visit(c) }
        }
        visit(0)
        return out
    }
}

@Suite struct TreePropertyTests {
    static let configuration = try! BadgeTree.Configuration(
        maxDisplay: 9,
        display: ["root.a": .dot, "root.b": .custom("new"), "root.a.c": .custom("x"), "root.c.c.c": .dot],
        contribute: ["root.a.b": .dot, "root.b": .none, "root.c.a": .dot, "root.c.c": .none, "root.a.a.a": .none]
    )

    private static func randomPath(_ rng: inout SplitMix64) -> String {
        if rng.chance(2) { return "root" }
        let depth = rng.pick([1, 2, 2, 3, 3, 3, 4, 4])
        var path = "root"
        for _ in 0..<depth { path += "." + rng.pick(["a", "b", "c"]) }
        return path
    }

    private static func randomOperation(_ rng: inout SplitMix64) -> Operation {
        let path = randomPath(&rng)
        if rng.chance(12) { return .tick(rng.int(in: 0...5)) }
        if rng.chance(10) { return .setExpiring(path, count: rng.pick([0, 0, 1, 3]), ttl: rng.int(in: 0...8)) }
        switch rng.int(in: 0...99) {
        case 0..<20: return .set(path)
        case 20..<34:
            let n = rng.chance(3) ? Int.max : rng.int(in: 0...12)
            return .setCount(path, n)
        case 34..<64:
            let k = rng.chance(2) ? Int.max : rng.int(in: -4...6)
            return .increment(path, k)
        case 64..<90: return .clear(path)
        default: return .forceClear(path)
        }
    }

    /// Runs one random sequence and compares the tree with the model after every operation.
    ///
    /// - Returns: a description of the first disagreement, or nil.
    /// The tree read back from its compact form (what a stream keeps of an idle account).
    private static func compactCopy(_ tree: BadgeTree) -> BadgeTree? {
        var bytes: [UInt8] = []
        tree.writeCompact(into: &bytes)
        return bytes.withUnsafeBytes { b in
            var r = CompactReader(b)
            let copy = try? BadgeTree.decodeCompact(configuration: tree.configuration, from: &r)
            return r.isDone ? copy : nil
        }
    }

    private static func check(seed: UInt64, roundTrips: Bool = false) -> String? {
        var rng = SplitMix64(seed: seed)
        var tree = BadgeTree(configuration: configuration)
        var model = ReferenceModel(maxDisplay: configuration.maxDisplay, modes: configuration.display)
        model.contribute = configuration.contribute
        var before = model.aggregates()
        var history: [Operation] = []
        for _ in 0..<rng.int(in: 1...40) {
            let op = randomOperation(&rng)
            history.append(op)
            func fail(_ why: String) -> String {
                "seed \(seed), after \(history.map(\.description).joined(separator: "; ")): \(why)"
            }
            if roundTrips && rng.chance(50) {
                guard let copy = compactCopy(tree) else { return fail("the compact form did not read back") }
                tree = copy
            }

            let outcome: Outcome
            let due: [String]
            if case .tick(let dt) = op { due = model.due(at: model.now + Double(dt)) } else { due = [] }
            var expired: [String] = []
            do {
                if case .tick(let dt) = op {
                    let expiry = tree.expire(through: model.now + Double(dt))
                    outcome = expiry.outcome
                    expired = expiry.paths
                } else {
                    outcome = try op.apply(to: &tree, now: model.now)
                }
            } catch {
                return fail("threw \(error)")
            }
            let removed = model.apply(op)
            if expired != due { return fail("expired \(expired), model says \(due)") }
            let after = model.aggregates()
            let zero = ReferenceModel.Aggregate()

            // Every node's state and own mark.
            var changed: Set<String> = []
            for (i, path) in model.paths.enumerated() {
                let a = after[i]
                let s = tree.state(of: path)
                if s.count != a.count || s.show != a.show || s.display.description != model.display(i, a) {
                    return fail("\(path) is \(s.count) \(s.show) \(s.display), model says \(a.count) \(a.show) \(model.display(i, a))")
                }
                let mark: Mark? = model.marks[i].map { $0 == 0 ? .dot : .count($0) }
                if tree.mark(of: path) != mark {
                    return fail("\(path) has mark \(String(describing: tree.mark(of: path))), model says \(String(describing: mark))")
                }
                let b = i < before.count ? before[i] : zero
                if b.count != a.count || b.show != a.show { changed.insert(path) }
            }

            // Changes: exactly the nodes whose (count, show) changed, deepest first, each once.
            let changedPaths = outcome.changes.map(\.path)
            if Set(changedPaths) != changed || changedPaths.count != changed.count {
                return fail("changes \(changedPaths), model says \(changed.sorted())")
            }
            let depths = changedPaths.map { path in model.id(path).map { model.depth[$0] } ?? 0 }
            if depths != depths.sorted(by: >) { return fail("changes not deepest first: \(changedPaths)") }
            for s in outcome.changes where s != tree.state(of: s.path) {
                return fail("change \(s) is not the node's new state \(tree.state(of: s.path))")
            }

            // Decrement: exactly when the total drops, by the drop.
            let drop = before[0].count - after[0].count
            if drop > 0 {
                let paths = removed.isEmpty ? [op.path] : removed.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                let expected = Decrement(by: drop, paths: paths)
                if outcome.decrement != expected {
                    return fail("decrement \(String(describing: outcome.decrement)), model says \(expected)")
                }
            } else if let d = outcome.decrement {
                return fail("decrement \(d) but the total went from \(before[0].count) to \(after[0].count)")
            }
            if tree.total != after[0].count { return fail("total \(tree.total), model says \(after[0].count)") }
            // Expiries and explain agree too.
            let recorded = tree.records.compactMap { r in r.expires.map { "\(r.path)@\($0)" } }
            let modelled = model.paths.indices.sorted { model.paths[$0].utf8.lexicographicallyPrecedes(model.paths[$1].utf8) }
                .compactMap { i in model.expires[i].map { "\(model.paths[i])@\($0)" } }
            if recorded != modelled { return fail("expiries \(recorded), model says \(modelled)") }
            let explained = tree.explain(op.path).map(\.path)
            if let i = model.id(op.path), explained != model.lighting(i, after) {
                return fail("explain(\(op.path)) \(explained), model says \(model.lighting(i, after))")
            }
            before = after
        }

        // At the end: the mark list, the snapshot, and a rebuild from the marks.
        let marks = tree.marks.map { m -> String in
            switch m.mark {
            case .dot: return "\(m.path)=dot"
            case .count(let n): return "\(m.path)=\(n)"
            }
        }
        if marks != model.markList { return "seed \(seed): marks \(marks), model says \(model.markList)" }
        if tree.markCount != model.markList.count { return "seed \(seed): markCount \(tree.markCount), model has \(model.markList.count)" }
        let snapshot = tree.snapshot()
        if snapshot.map(\.path) != model.snapshot(before) {
            return "seed \(seed): snapshot \(snapshot.map(\.path)), model says \(model.snapshot(before))"
        }
        do {
            let rebuilt = try BadgeTree(configuration: configuration, marks: tree.marks)
            if rebuilt.snapshot() != snapshot { return "seed \(seed): rebuilding from marks gives \(rebuilt.snapshot())" }
            var restored = BadgeTree(configuration: configuration)
            for r in tree.records { try restored.restore(r) }
            if restored.snapshot() != snapshot || restored.records != tree.records {
                return "seed \(seed): restoring the records gives \(restored.records)"
            }
            // All at once (aggregates computed once at the end): the same tree.
            var bulk = BadgeTree(configuration: configuration)
            try bulk.restore(contentsOf: tree.records)
            if bulk.snapshot() != snapshot || bulk.records != tree.records {
                return "seed \(seed): restoring the records at once gives \(bulk.snapshot())"
            }
            // After a restore, expiry goes on as before, and every clear agrees.
            var original = tree
            let later = model.now + 100
            let expired = original.expire(through: later)
            if restored.expire(through: later) != expired || bulk.expire(through: later) != expired {
                return "seed \(seed): a restored tree expires differently"
            }
            for path in original.records.map(\.path) {
                if try bulk.clear(path) != original.clear(path) || bulk.snapshot() != original.snapshot() {
                    return "seed \(seed): clearing \(path) after restoring at once differs"
                }
            }
        } catch {
            return "seed \(seed): rebuilding from marks threw \(error)"
        }
        return nil
    }

    @Test func theTreeAgreesWithANaiveModelAfterEveryOperation() {
        var failures: [String] = []
        for seed in UInt64(1)...4_000 {
            if let failure = Self.check(seed: seed) {
                failures.append(failure)
                if failures.count == 3 { break }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// The same, with the tree replaced by its compact form's copy before half the
    /// operations: the copy has every mark, aggregate, expiry and display mode.
    @Test func aTreeReadBackFromItsCompactFormAgreesWithTheModel() {
        var failures: [String] = []
        for seed in UInt64(1)...1_000 {
            if let failure = Self.check(seed: seed, roundTrips: true) {
                failures.append(failure)
                if failures.count == 3 { break }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// Bytes the writer could not have made are refused, not trapped on: an own count past
    /// `maxCount` (two such siblings would overflow their parent's sum), another root, a
    /// segment with a dot or empty, a parent that comes later.
    @Test func aDamagedCompactFormIsRefused() {
        func form(root: String = "root", parent: UInt64 = 0, name: String = "a", own: Int = 1, twice: Bool = false) -> [UInt8] {
            var b: [UInt8] = []
            CompactCoding.varint(twice ? 3 : 2, &b)  // nodes
            CompactCoding.varint(0, &b)  // origins
            CompactCoding.string(root, &b)
            CompactCoding.signed(-1, &b)
            b.append(0)
            for _ in 0..<(twice ? 2 : 1) {
                CompactCoding.varint(parent, &b)
                CompactCoding.string(name, &b)
                CompactCoding.signed(own, &b)
                b.append(0)
            }
            CompactCoding.varint(0, &b)  // tokens
            return b
        }
        func read(_ b: [UInt8]) -> BadgeTree? {
            b.withUnsafeBytes { raw in
                var r = CompactReader(raw)
                let tree = try? BadgeTree.decodeCompact(configuration: BadgeTree.Configuration(), from: &r)
                return r.isDone ? tree : nil
            }
        }
        let good = read(form())
        #expect(good?.mark(of: "root.a") == .count(1))
        #expect(good?.total == 1)
        #expect(read(form(own: BadgeTree.maxCount))?.total == BadgeTree.maxCount)
        #expect(read(form(own: Int.max, twice: true)) == nil)
        #expect(read(form(own: -2)) == nil)
        #expect(read(form(root: "top")) == nil)
        #expect(read(form(name: "a.b")) == nil)
        #expect(read(form(name: "")) == nil)
        #expect(read(form(parent: 1)) == nil)
    }

    @Test func theModelItselfFollowsThePromotionWalkthrough() {
        var model = ReferenceModel(maxDisplay: 99, modes: [:])
        for op in [Operation.set("root.promotion"), .set("root.promotion.item1"), .set("root.promotion.item2")] {
            _ = model.apply(op)
        }
        #expect(model.apply(.clear("root.promotion.item1")) == ["root.promotion.item1"])
        #expect(model.apply(.clear("root.promotion.item2")) == ["root.promotion.item2", "root.promotion"])
        #expect(model.markList.isEmpty)
    }
}
