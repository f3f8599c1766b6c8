// Prints throughput and memory figures for the library's inner loops. Not a test: run it
// with `make bench-lib` on a quiet machine and compare runs, not single numbers.
import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Resident set size in bytes, from /proc/self/statm.
func rss() -> Int {
    guard let f = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(f) }
    var size = 0, resident = 0
    _ = withUnsafeMutablePointer(to: &size) { s in
        withUnsafeMutablePointer(to: &resident) { r in
            withVaList([s, r]) { vfscanf(f, "%ld %ld", $0) }
        }
    }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A deterministic generator (SplitMix64), so every run does the same work.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func report(_ name: String, ops: Int, seconds: Double) {
    let rate = Double(ops) / seconds
    print("\(name): \(ops) ops in \(String(format3(seconds))) s = \(Int(rate)) ops/s")
}

func format3(_ x: Double) -> String {
    let scaled = Int((x * 1000).rounded())
    return "\(scaled / 1000).\(String(repeating: "0", count: 3 - String(scaled % 1000).count))\(scaled % 1000)"
}

// MARK: tree: 100,000 paths of depth 4

let pathCount = 100_000
let paths: [String] = (0..<pathCount).map { i in "root.g\(i % 10).h\(i % 1000).item\(i)" }
let before = rss()
var tree = BadgeTree()
var t0 = now()
for p in paths { try tree.increment(p) }
let buildTime = now() - t0
let after = rss()
print("tree: \(pathCount) paths of depth 4, \(tree.nodeCount) nodes; first increment of each path (creates nodes): \(Int(Double(pathCount) / buildTime)) ops/s")
print("tree: memory ≈ \((after - before) / pathCount) bytes per path (RSS growth)")

var rng = SplitMix(state: 42)
let order = (0..<2_000_000).map { _ in Int(rng.next() % UInt64(pathCount)) }
t0 = now()
for i in order { try tree.increment(paths[i]) }
report("tree: increment existing path", ops: order.count, seconds: now() - t0)

t0 = now()
for p in paths { try tree.clear(p) }
report("tree: clear (each path once, decrement requests included)", ops: pathCount, seconds: now() - t0)
precondition(tree.total == 0, "every mark was cleared")

for p in paths { try tree.set(p, count: 3) }
t0 = now()
var cleared = 0
for g in 0..<10 { try tree.clear("root.g\(g)", force: true); cleared += 1 }
report("tree: force-clear of 10 subtrees of 10,000 marks", ops: cleared, seconds: now() - t0)

// MARK: observers

let center = BadgeCenter()
let heard = Counter()
let token = try center.observe("root.g1") { _ in heard.add() }
t0 = now()
for i in 0..<200_000 { try center.increment(paths[(i * 7) % pathCount]) }
report("center: increment with one observer on root.g1", ops: 200_000, seconds: now() - t0)
token.cancel()
print("center: observer heard \(heard.value) changes")

// MARK: line analysis and apply, in-process

var lines: [String] = []
var lrng = SplitMix(state: 7)
for i in 0..<200_000 {
    let t = Int(lrng.next() % 5000)
    switch i % 10 {
    case 0: lines.append(#"{"aps":{"alert":{"title":"Sale","body":"50% off ✨"}},"promo":{"campaign":"c\#(t % 20)"}}"#)
    case 1: lines.append(#"{"aps":{"content-available":1},"type":"unread","unread":\#(t % 50)}"#)
    case 2: lines.append(#"{"op":"clear","path":"root.chat.t\#(t)"}"#)
    default:
        lines.append(#"{"aps":{"alert":{"title":"Alice","body":"Lunch at 12:30? \"the usual\" 🍜"},"badge":\#(t % 99),"sound":"default","thread-id":"t\#(t)","mutable-content":1},"type":"chat","sender":"alice","msg-id":"m\#(i)"}"#)
    }
}
let bytes = lines.reduce(0) { $0 + $1.utf8.count }
let analyzer = LineAnalyzer(rules: .builtIn)
var results: [LineResult] = []
results.reserveCapacity(lines.count)
t0 = now()
for var line in lines { results.append(line.withUTF8 { analyzer.analyze(UnsafeRawBufferPointer($0)) }) }
let analyzeTime = now() - t0
report("analyze (parse + validate + route), \(bytes / lines.count) B/line", ops: lines.count, seconds: analyzeTime)

var stream = BadgeStream(rules: .builtIn)
var out = JSONWriter(capacity: 1 << 20)
t0 = now()
for (i, r) in results.enumerated() {
    stream.apply(r, seq: i + 1, into: &out)
    if out.count > 1 << 20 { out.removeAll() }
}
report("apply + write result lines", ops: results.count, seconds: now() - t0)

final class Counter: @unchecked Sendable {
    private(set) var value = 0
    func add() { value += 1 }
}
