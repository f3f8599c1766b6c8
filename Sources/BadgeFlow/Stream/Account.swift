/// One account's state: the badge tree and clock its devices share, and each device's own
/// state, by device id.
///
/// An event without `account` names the account whose id is its device id, so every device
/// on its own is an account with one device.
public struct Account: Sendable {
    /// The badge tree (the server's count of what is unread).
    public var tree: BadgeTree
    /// The time of the account's last event (its events without `at` take it; 0 at first).
    public var clock: Double = 0
    /// The devices of the account. A device joins with its first event here and leaves with
    /// `logout`, except in its own account (the one an event without `account` names).
    public var devices: [String: Device] = [:]
    /// When a tracking stream last used the account (its use counter); for eviction.
    var lastUse: UInt64 = 0
    /// Changed since the stream's last ``BadgeStream/takeChanged()``.
    var dirty = false
    /// Taken by a commit that has not finished (``BadgeStream/beginCommit()``): the account
    /// stays in memory until it has, or a reload could read the row before it.
    var inFlight = false
    /// Devices and marks as last stored in an SQLite state (its totals), when loaded from one.
    var storedCounts: (Int, Int)?

    /// An account with an empty tree and no devices.
    public init(rules: RuleSet) {
        tree = BadgeTree(configuration: rules.tree)
    }

    /// An account with `tree` and no devices.
    init(tree: BadgeTree) { self.tree = tree }

    /// The number `device`'s icon should show under `policy`: the tree's total, or under the
    /// `payload` policy the device's own number.
    public func icon(_ policy: RuleSet.IconPolicy, device: Device) -> Int {
        policy == .tree ? tree.total : device.payloadIcon
    }
}

/// A badge-only push the server owes a device after another device changed the account's
/// total: `{"device": d, "badge": n}` in a result's `badgeUpdates`.
public struct BadgeUpdate: Sendable, Equatable {
    /// The device id.
    public var device: String
    /// The number its icon should show.
    public var badge: Int

    /// Creates an update.
    public init(device: String, badge: Int) {
        self.device = device
        self.badge = badge
    }
}
