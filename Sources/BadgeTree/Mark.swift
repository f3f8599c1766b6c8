/// A node's own mark: a dot, or a count of one or more.
public enum Mark: Sendable, Equatable, CustomStringConvertible {
    /// A red dot with no number.
    case dot
    /// A number; always at least 1 (a count of 0 is no mark).
    case count(Int)

    /// `"dot"`, or the count in decimal (`"3"`): how state files and `badgeflow tree` write a mark.
    public var description: String {
        switch self {
        case .dot: return "dot"
        case .count(let n): return "\(n)"
        }
    }
}

/// How a path shows its badge, as the rules' `display` section sets it.
public enum DisplayMode: Sendable, Equatable {
    /// The number when the count is above zero, else a dot (the default).
    case number
    /// Never a number: a dot whenever the node shows.
    case dot
    /// The number when above zero, else the named custom badge image instead of the dot.
    case custom(String)
}

/// What a node shows, after the display mode and the `maxDisplay` cap.
///
/// Its text is what result lines carry: `"3"`, `"99+"`, `"dot"`, `"custom:new"` or `"hidden"`.
public enum BadgeDisplay: Sendable, Equatable, CustomStringConvertible {
    /// A number; `capped` when above `maxDisplay`, shown as `"\(max)+"`.
    case number(Int, max: Int)
    /// A named custom badge.
    case custom(String)
    /// A plain red dot.
    case dot
    /// Nothing.
    case hidden

    /// Picks the display for a node: number > custom > dot > hidden.
    @inlinable
    public init(count: Int, show: Bool, mode: DisplayMode, maxDisplay: Int) {
        switch mode {
        case .dot:
            self = show ? .dot : .hidden
        case .number:
            self = count > 0 ? .number(count, max: maxDisplay) : (show ? .dot : .hidden)
        case .custom(let name):
            self = count > 0 ? .number(count, max: maxDisplay) : (show ? .custom(name) : .hidden)
        }
    }

    /// The text result lines carry: `"3"`, `"99+"`, `"custom:NAME"`, `"dot"` or `"hidden"`.
    public var description: String {
        switch self {
        case .number(let n, let max): return n > max ? "\(max)+" : "\(n)"
        case .custom(let name): return "custom:\(name)"
        case .dot: return "dot"
        case .hidden: return "hidden"
        }
    }
}

/// The shown state of one node: what observers hear and result lines carry.
public struct BadgeState: Sendable, Equatable, CustomStringConvertible {
    /// The node's path.
    public let path: String
    /// The aggregate count: own count, or the sum of the children's when it is a summary node.
    public let count: Int
    /// Whether the node shows a badge at all.
    public let show: Bool
    /// What it shows.
    public let display: BadgeDisplay

    /// Creates a state; the tree makes these, so user code needs this mostly in tests.
    ///
    /// - Parameters:
    ///   - path: the node's path.
    ///   - count: the aggregate count.
    ///   - show: whether the node shows a badge.
    ///   - display: what it shows.
    public init(path: String, count: Int, show: Bool, display: BadgeDisplay) {
        self.path = path
        self.count = count
        self.show = show
        self.display = display
    }

    /// `root.chat count=3 show=true display=3`, for logs.
    public var description: String { "\(path) count=\(count) show=\(show) display=\(display)" }
}

/// What an operation asks the server to subtract from the icon number.
public struct Decrement: Sendable, Equatable, Codable {
    /// How much the tree's total dropped.
    public var by: Int
    /// The marks that were removed or lowered, in byte order.
    public var paths: [String]

    /// Creates a decrement request.
    ///
    /// - Parameters:
    ///   - by: how much the total dropped.
    ///   - paths: the marks removed or lowered, in byte order.
    public init(by: Int, paths: [String]) {
        self.by = by
        self.paths = paths
    }
}

/// Everything one tree operation changed.
public struct Outcome: Sendable, Equatable, Codable {
    /// Every node whose (count, show) changed, deepest first.
    public var changes: [BadgeState]
    /// Present when the operation lowered the tree's total.
    public var decrement: Decrement?

    /// Creates an outcome.
    ///
    /// - Parameters:
    ///   - changes: every node whose (count, show) changed, deepest first.
    ///   - decrement: the decrement request, when the total dropped.
    public init(changes: [BadgeState] = [], decrement: Decrement? = nil) {
        self.changes = changes
        self.decrement = decrement
    }

    /// An outcome with nothing changed.
    public static let unchanged = Outcome()
}
