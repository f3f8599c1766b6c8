import Benchmark

/// The inputs every suite builds its work from: badge paths and NDJSON lines.
///
/// Generated, not read from `Fixtures/`: a benchmark executable does not know the directory
/// it runs in, and a seeded generator gives every run the same work.
public enum BenchmarkInputs {
    /// The settings every suite runs with: 1,000 operations per iteration (figures per
    /// operation), at most a second or 2,000 iterations per benchmark.
    ///
    /// Instructions need a hardware PMU: where there is none (a VM's dmesg says "PMU not
    /// available due to virtualization") the metric is left out of the table.
    public static var configuration: Benchmark.Configuration {
        .init(
            metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal, .peakMemoryResident],
            scalingFactor: .kilo,
            maxDuration: .seconds(1),
            maxIterations: 2_000
        )
    }

    /// Path `i` of a depth-4 tree: `root.g<i % groups>.h<i % threads>.item<i>`.
    ///
    /// With the defaults, 100,000 paths make 10 groups of 100 threads of 100 items each:
    /// 101,011 nodes.
    public static func treePath(_ i: Int, groups: Int = 10, threads: Int = 1000) -> String {
        "root.g\(i % groups).h\(i % threads).item\(i)"
    }

    /// `0..<count` in a fixed pseudo-random order: no index twice before all have come.
    public static func permutation(_ count: Int, seed: UInt64) -> [Int] {
        var rng = SplitMix(state: seed)
        var order = Array(0..<count)
        order.shuffle(using: &rng)
        return order
    }

    /// A chat push: alert, badge, sound, thread id, custom keys (the common line).
    public static func chatPush(thread t: Int, message m: Int) -> String {
        #"{"aps":{"alert":{"title":"Alice","body":"Lunch at 12:30? \"the usual\" 🍜"},"badge":\#(t % 99),"sound":"default","thread-id":"t\#(t)","mutable-content":1},"type":"chat","sender":"alice","msg-id":"m\#(m)"}"#
    }

    /// A promotion push with no badge, routed by its `promo.campaign` key.
    public static func promotion(campaign c: Int) -> String {
        #"{"aps":{"alert":{"title":"Sale","body":"50% off ✨"}},"promo":{"campaign":"c\#(c)"}}"#
    }

    /// A silent push that carries an unread count.
    public static func silentUnread(_ unread: Int) -> String {
        #"{"aps":{"content-available":1},"type":"unread","unread":\#(unread)}"#
    }

    /// An envelope that clears one chat thread.
    public static func clearThread(_ t: Int) -> String {
        #"{"op":"clear","path":"root.chat.t\#(t)"}"#
    }

    /// `count` lines in the mix `make bench` streams: 70% chat pushes, 10% each of
    /// promotions, silent unread counts and clears, over 5,000 threads.
    public static func mixedLines(_ count: Int, seed: UInt64 = 7) -> [[UInt8]] {
        var rng = SplitMix(state: seed)
        return (0..<count).map { i in
            let t = Int(rng.next() % 5000)
            let line = switch i % 10 {
            case 0: promotion(campaign: t % 20)
            case 1: silentUnread(t % 50)
            case 2: clearThread(t)
            default: chatPush(thread: t, message: i)
            }
            return Array(line.utf8)
        }
    }
}

/// A small deterministic generator (SplitMix64), so every run does the same work.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
