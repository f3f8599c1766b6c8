// The badge tree's operations on a 100,000-path tree, and the same through BadgeCenter with
// an observer. Each iteration does 1,000 operations (scalingFactor .kilo); the table shows
// figures per operation, marked *.
import BadgeFlow
import Benchmark
import BenchmarkInputs
import Synchronization

/// Paths in the measured tree: 10 groups × 100 threads × 100 items, depth 4.
let pathCount = 100_000

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = BenchmarkInputs.configuration

    Benchmark("Tree increment existing path (100k paths)") { benchmark, s in
        for _ in benchmark.scaledIterations {
            blackHole(try s.tree.increment(s.paths[s.next()]))
        }
    } setup: {
        try MarkedTree()
    }

    // The same with the newer features on, as the filter uses them: before each increment
    // what is due expires (the heap's top is checked; an entry 1,000 operations old is
    // popped and its mark cleared), and the increment records its source and sets an expiry.
    Benchmark("Tree increment with source and expiry (100k paths)") { benchmark, s in
        for _ in benchmark.scaledIterations {
            s.clock += 1
            blackHole(s.tree.expire(through: s.clock))
            let source = MarkSource(seq: Int(s.clock), origin: "chat", at: s.clock)
            blackHole(try s.tree.increment(s.paths[s.next()], expires: s.clock + 1_000, source: source))
        }
    } setup: {
        try MarkedTree()
    }

    // A fresh tree each iteration so every increment creates its leaf (and a tenth of them
    // its thread node); the measurement stops before the tree is freed, so
    // memoryLeakedBytes is what the tree keeps per path.
    Benchmark(
        "Tree first increment of a new path (creates nodes)",
        configuration: .init(metrics: Benchmark.defaultConfiguration.metrics + [.memoryLeakedBytes])
    ) { benchmark, paths in
        var tree = BadgeTree()
        benchmark.startMeasurement()
        for path in paths {
            blackHole(try tree.increment(path))
        }
        benchmark.stopMeasurement()
        blackHole(tree.nodeCount)
    } setup: {
        (0..<1_000).map { BenchmarkInputs.treePath($0, threads: 100) }
    }

    // Clears 1,000 marked leaves, then marks them again outside the measurement.
    Benchmark("Tree clear marked path (100k paths)") { benchmark, s in
        let window = s.window(benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for i in window {
            blackHole(try s.tree.clear(s.paths[i]))
        }
        benchmark.stopMeasurement()
        for i in window {
            try s.tree.increment(s.paths[i])
        }
    } setup: {
        try MarkedTree()
    }

    // One thread node with 100 marked items; marked again outside the measurement.
    Benchmark(
        "Tree force-clear of a 100-mark subtree (100k paths)",
        configuration: .init(scalingFactor: .one)
    ) { benchmark, s in
        let thread = s.next() % 1_000
        let subtree = "root.g\(thread % 10).h\(thread)"
        benchmark.startMeasurement()
        blackHole(try s.tree.clear(subtree, force: true))
        benchmark.stopMeasurement()
        for item in stride(from: thread, to: pathCount, by: 1_000) {
            try s.tree.increment(s.paths[item])
        }
    } setup: {
        try MarkedTree()
    }

    // One path in ten is under root.g1, so one increment in ten notifies the observer.
    Benchmark("BadgeCenter increment with one observer (100k paths)") { benchmark, s in
        for _ in benchmark.scaledIterations {
            blackHole(try s.center.increment(s.paths[s.next()]))
        }
    } setup: {
        try ObservedCenter()
    }
}

/// A 100,000-path tree with a count on every leaf, and a fixed order to visit the paths in.
///
/// A class so the closure mutates the one tree in place: a `var` copy of a struct would
/// share the tree's storage and copy all of it on the first write.
final class MarkedTree {
    var tree = BadgeTree()
    let paths = (0..<pathCount).map { BenchmarkInputs.treePath($0) }
    let order = BenchmarkInputs.permutation(pathCount, seed: 42)
    private var cursor = 0
    /// Event time for the expiry benchmark.
    var clock = 0.0

    init() throws {
        for path in paths {
            try tree.increment(path)
        }
    }

    /// The next path index in the fixed order.
    func next() -> Int {
        defer { cursor = cursor + 1 == order.count ? 0 : cursor + 1 }
        return order[cursor]
    }

    /// The next `count` path indices, all different while `count` ≤ `pathCount`.
    func window(_ count: Int) -> [Int] {
        (0..<count).map { _ in next() }
    }
}

/// A `BadgeCenter` over a marked 100,000-path tree, observed at `root.g1`.
final class ObservedCenter {
    let center: BadgeCenter
    /// Held so the observation lives as long as the benchmark.
    let observation: BadgeObservation
    let heard = Heard()
    let paths = (0..<pathCount).map { BenchmarkInputs.treePath($0) }
    let order = BenchmarkInputs.permutation(pathCount, seed: 42)
    private var cursor = 0

    init() throws {
        let marked = try MarkedTree()
        center = BadgeCenter(tree: marked.tree)
        observation = try center.observe("root.g1") { [heard] state in
            heard.count.add(1, ordering: .relaxed)
            blackHole(state)
        }
    }

    func next() -> Int {
        defer { cursor = cursor + 1 == order.count ? 0 : cursor + 1 }
        return order[cursor]
    }
}

/// Counts notifications; the handler must be `Sendable`, so the count is atomic.
final class Heard: Sendable {
    let count = Atomic<Int>(0)
}
