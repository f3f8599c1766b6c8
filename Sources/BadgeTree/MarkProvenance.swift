/// How a node's aggregate reaches its parent (the rules' `contribute` section).
///
/// Contribution changes what the node passes up, never the node's own display: a muted
/// chat still shows its own number.
public enum Contribution: String, Sendable, Equatable, Codable, CaseIterable {
    /// The node's count adds to its parent's sum and its show to the parent's union (the default).
    case count
    /// Only the node's show goes up: the parent shows a dot for it but does not count it.
    case dot
    /// Nothing goes up: the node's marks neither show nor count in its ancestors.
    case none
}

/// What set a mark: the event's `seq`, the rule or op that did it, and the event time.
public struct MarkSource: Sendable, Equatable {
    /// The input line's number (its `seq`).
    public var seq: Int
    /// The rule's name, or the op (`"set"`) for an envelope.
    public var origin: String
    /// The event time, in seconds.
    public var at: Double

    /// Creates a source.
    ///
    /// - Parameters:
    ///   - seq: the input line's number.
    ///   - origin: the rule's name or the op.
    ///   - at: the event time.
    public init(seq: Int, origin: String, at: Double) {
        self.seq = seq
        self.origin = origin
        self.at = at
    }
}

/// One own mark with everything the tree keeps about it: the tree's persistent state, and
/// what ``BadgeTree/explain(_:)`` reports.
public struct MarkRecord: Sendable, Equatable {
    /// The mark's path.
    public var path: String
    /// The mark.
    public var mark: Mark
    /// What last set it, when the operation said.
    public var source: MarkSource?
    /// When it expires, in event time; nil for never.
    public var expires: Double?
    /// The once token it holds, if any.
    public var once: String?

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - path: the mark's path.
    ///   - mark: the mark.
    ///   - source: what last set it.
    ///   - expires: when it expires.
    ///   - once: the once token it holds.
    public init(path: String, mark: Mark, source: MarkSource? = nil, expires: Double? = nil, once: String? = nil) {
        self.path = path
        self.mark = mark
        self.source = source
        self.expires = expires
        self.once = once
    }
}

/// What ``BadgeTree/expire(through:)`` cleared.
public struct Expiry: Sendable, Equatable {
    /// The expired marks' paths, in byte order.
    public var paths: [String]
    /// The changes (deepest first, each node once, its state after all the clears) and the
    /// decrement request of clearing them.
    public var outcome: Outcome

    /// Creates an expiry result.
    ///
    /// - Parameters:
    ///   - paths: the expired marks' paths.
    ///   - outcome: what clearing them changed.
    public init(paths: [String] = [], outcome: Outcome = .unchanged) {
        self.paths = paths
        self.outcome = outcome
    }

    /// Nothing expired.
    public static let none = Expiry()
}

/// The once tokens of one path: the one its mark holds and those dismissed there.
struct OnceTokens: Sendable {
    var held: String?
    /// Oldest first; at most ``BadgeTree/onceTokensKept``.
    var dismissed: [String] = []
}
