/// One account as it stands in a state file: what an API server shows for a user while a
/// filter keeps the state up to date (`badgeflow state get FILE ACCOUNT`).
///
/// ``read(state:account:)`` opens a state with checkpoints read-only and reads the account
/// alone (it neither waits for nor blocks the filter that writes it, and sees its last
/// committed checkpoint); a JSON state is read whole, as its last save left it.
public struct StoredAccount: Sendable, Equatable {
    /// One device of the account.
    public struct DeviceState: Sendable, Equatable {
        /// The device id.
        public var id: String
        /// The badge number last delivered to the device (what the server knows it shows).
        public var delivered: Int
        /// Whether the device is owed a number: under icon policy `tree`, its delivered
        /// number is not the account's total (e.g. after a rules change).
        public var stale: Bool
    }

    /// The account id.
    public var id: String
    /// The account's total: the root's count, the number its devices' icons should show.
    public var total: Int
    /// Every shown node, parents before children, siblings in byte order of their names.
    public var nodes: [BadgeState]
    /// Every device, in byte order of device id.
    public var devices: [DeviceState]
    /// The account's own contribution settings (`{"op":"contribute"}`), in byte order of
    /// path: each path with the mode the account chose over the rules'.
    public var contributions: [(path: String, mode: Contribution)]

    public static func == (a: StoredAccount, b: StoredAccount) -> Bool {
        a.id == b.id && a.total == b.total && a.nodes == b.nodes && a.devices == b.devices
            && a.contributions.map(\.path) == b.contributions.map(\.path)
            && a.contributions.map(\.mode) == b.contributions.map(\.mode)
    }

    /// Reads `account` from the state at `path` (of any format, `StateFormat/of(_:)`), with the rules the
    /// state recorded (the built-in ones when it recorded none).
    ///
    /// - Returns: the account, or nil when the state does not hold it (a missing JSON file
    ///   holds nothing).
    /// - Throws: `StateFile.Failure` when the state is missing (but for JSON), unreadable, corrupt
    ///   or foreign.
    public static func read(state path: String, account: String) throws(StateFile.Failure) -> StoredAccount? {
        let store = try StateFormat.open(path: path, readOnly: true)
        defer { store.close() }
        let rules = try store.recordedRules() ?? RuleSet.builtIn
        let found = try store.account(account, rules: rules)
        return found.map { StoredAccount(id: account, account: $0, icon: rules.icon) }
    }

    /// The view of `account` under icon policy `icon`.
    init(id: String, account: Account, icon: RuleSet.IconPolicy) {
        self.id = id
        total = account.tree.total
        nodes = account.tree.snapshot()
        devices = account.devices.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { id, device in
            DeviceState(id: id, delivered: device.delivered, stale: icon == .tree && device.delivered != account.tree.total)
        }
        contributions = account.contributions.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
            (path: $0.key, mode: $0.value)
        }
    }
}
