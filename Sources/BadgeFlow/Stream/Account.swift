/// One account's state: the badge tree and clock its devices share, and each device's own
/// state, by device id.
///
/// An event without `account` names the account whose id is its device id, so every device
/// on its own is an account with one device.
public struct Account: Sendable {
    /// The badge tree (the server's count of what is unread).
    public var tree: BadgeTree
    /// The time of the account's last event (its events without `at` take it; 0 at first).
    public var clock: Double
    /// The devices of the account. A device joins with its first event here that names it
    /// and leaves with `logout` (except in its own account, the one an event without
    /// `account` names) or `unregister`.
    public var devices: [String: Device]
    /// The ids of the last events the account applied (an event's `id`), for telling a
    /// duplicate: see ``RecentIDs``.
    public var ids: RecentIDs
    /// The account's own contribution settings by path (a user's mutes, set by
    /// `{"op":"contribute"}`), over the rules' `contribute`: each is in force in ``tree``.
    /// A path the account has no setting for follows the rules. Change them with
    /// ``setContribution(_:of:rules:)``, which keeps the tree in step.
    public private(set) var contributions: [String: Contribution]
    // What a stream keeps about an account in memory (last use, changes, commits, what a
    // store last stored, its due index entry) is the stream's AccountTable's, not the
    // account's: an account is only what it describes.

    /// An account with an empty tree and no devices.
    public init(rules: RuleSet) {
        tree = BadgeTree(configuration: rules.tree)
        clock = 0
        devices = [:]
        ids = RecentIDs()
        contributions = [:]
    }

    /// An account with `tree` and no devices.
    init(tree: BadgeTree) {
        self.tree = tree
        clock = 0
        devices = [:]
        ids = RecentIDs()
        contributions = [:]
    }

    /// An account with all its parts (a stored one read back). The properties have no
    /// default values: with them, this init set each default first and then replaced it, and
    /// the account it made was copied into its result (a retain and release of each part).
    init(tree: BadgeTree, clock: Double, devices: [String: Device], ids: RecentIDs) {
        self.tree = tree
        self.clock = clock
        self.devices = devices
        self.ids = ids
        contributions = [:]
    }

    /// Sets the account's own contribution for `path` (`{"op":"contribute"}` with `mode`),
    /// kept as its explicit choice even when it equals the rules'; the tree follows at once.
    ///
    /// - Returns: every node whose (count, show) changed, deepest first. A setting is not a
    ///   read: the outcome never carries a decrement, whatever the total did.
    /// - Throws: `BadgePathError` when `path` is not valid in the account's tree; nothing
    ///   changes then.
    @discardableResult
    public mutating func setContribution(_ mode: Contribution, of path: String, rules: RuleSet) throws(BadgePathError) -> Outcome {
        try changeContribution(mode, of: path, rules: rules)
    }

    /// Removes the account's own contribution setting for `path` (`"mode":"rules"`): the
    /// rules' `contribute` applies again, and nothing of the setting is kept.
    ///
    /// - Returns: every node whose (count, show) changed, deepest first; never a decrement.
    /// - Throws: `BadgePathError` when `path` is not valid in the account's tree.
    @discardableResult
    public mutating func removeContribution(of path: String, rules: RuleSet) throws(BadgePathError) -> Outcome {
        try changeContribution(nil, of: path, rules: rules)
    }

    /// ``setContribution(_:of:rules:)`` with `mode`, or ``removeContribution(of:rules:)`` with nil.
    mutating func changeContribution(_ mode: Contribution?, of path: String, rules: RuleSet) throws(BadgePathError) -> Outcome {
        var outcome = try tree.setContribution(mode ?? rules.tree.contribute[path] ?? .count, of: path)
        outcome.decrement = nil
        if let mode {
            contributions[path] = mode
        } else {
            contributions.removeValue(forKey: path)
        }
        return outcome
    }

    /// Puts the stored settings `list` in force (an account read back from a state).
    ///
    /// - Throws: `BadgePathError` for the first path not valid in the account's tree (a
    ///   setting the rules reject, refused like a mark).
    mutating func restoreContributions(_ list: [(String, Contribution)]) throws(BadgePathError) {
        for (path, mode) in list {
            try tree.setContribution(mode, of: path)
            contributions[path] = mode
        }
    }

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

/// The last ``limit`` event ids an account applied, oldest first: an event whose `id` is
/// among them is a duplicate and changes nothing. A duplicate does not refresh its id's
/// place, so the oldest id is forgotten first.
///
/// Empty (and allocation-free) for an account whose events carry no ids.
public struct RecentIDs: Sendable, Equatable {
    /// How many ids an account keeps.
    public static let limit = 256
    /// The ids, oldest first.
    public private(set) var list: [String] = []
    private var members: Set<String> = []

    /// No ids.
    public init() {}

    /// The last ``limit`` of `ids` (oldest first), each once.
    public init(_ ids: some Sequence<String>) {
        for id in ids { insert(id) }
    }

    /// Whether `id` is among the ids kept.
    public func contains(_ id: String) -> Bool { !members.isEmpty && members.contains(id) }

    /// Whether no id is kept.
    public var isEmpty: Bool { list.isEmpty }

    /// Adds `id` as the newest (nothing when it is kept already), forgetting the oldest
    /// beyond ``limit``.
    public mutating func insert(_ id: String) {
        guard members.insert(id).inserted else { return }
        list.append(id)
        if list.count > Self.limit { members.remove(list.removeFirst()) }
    }
}
