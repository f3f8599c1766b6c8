/// One device's state: its badge tree, its icon number and its sync clocks.
public struct Device: Sendable {
    /// The badge tree.
    public var tree: BadgeTree
    /// Under the `payload` icon policy: the last `aps.badge` minus local decrements since.
    public var payloadIcon: Int = 0
    /// The unread-sync policy state.
    public var sync: SyncPolicy

    /// Creates a new device: an empty tree and a logged-out sync policy, both set up from `rules`.
    ///
    /// - Parameter rules: the rules whose tree settings and sync settings the device uses.
    public init(rules: RuleSet) {
        tree = BadgeTree(configuration: rules.tree)
        sync = SyncPolicy(configuration: rules.sync)
    }

    /// The number the app icon should show under `policy`.
    ///
    /// - Parameter policy: `.tree` for the tree's total, `.payload` for ``payloadIcon``.
    /// - Returns: the icon number.
    public func icon(_ policy: RuleSet.IconPolicy) -> Int {
        policy == .tree ? tree.total : payloadIcon
    }
}
