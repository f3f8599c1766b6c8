/// One device's state: its badge tree, its icon number and its sync clocks.
public struct Device: Sendable {
    /// The badge tree.
    public var tree: BadgeTree
    /// Under the `payload` icon policy: the last `aps.badge` minus local decrements since.
    public var payloadIcon: Int = 0
    /// The time of the device's last event (its events without `at` take it; 0 at first).
    public var clock: Double = 0
    /// The unread-sync policy state.
    public var sync: SyncPolicy

    public init(rules: RuleSet) {
        tree = BadgeTree(configuration: rules.tree)
        sync = SyncPolicy(configuration: rules.sync)
    }

    /// The number the app icon should show under `policy`.
    public func icon(_ policy: RuleSet.IconPolicy) -> Int {
        policy == .tree ? tree.total : payloadIcon
    }
}
