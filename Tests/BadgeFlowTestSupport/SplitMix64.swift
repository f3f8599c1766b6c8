/// SplitMix64: a tiny deterministic generator, so every random case replays from its seed.
/// The one generator of the test targets (the same sequence for a seed as each of the copies
/// it replaced).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose first output follows `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<n`, near enough to uniform for a test.
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// A number in `range`, near enough to uniform for a test.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// One of `items` (not empty).
    public mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// True with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool { int(in: 0...99) < percent }
}
