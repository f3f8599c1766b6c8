/// What an account keeps per device: its sync clocks and the badge numbers it was given.
///
/// Small on purpose (the tree and the clock belong to the ``Account``): an account may have
/// many devices and a server many accounts.
public struct Device: Sendable {
    /// Under the `payload` icon policy: the last `aps.badge` minus local decrements since.
    public var payloadIcon: Int = 0
    /// Under the `tree` icon policy: the badge number last delivered to the device (0 until
    /// something was).
    public var delivered: Int = 0
    /// The unread-sync policy state.
    public var sync: SyncPolicy

    /// A device that has seen no event yet.
    public init(rules: RuleSet) {
        sync = SyncPolicy(configuration: rules.sync)
    }

    /// A device with these numbers and sync state (a stored one read back).
    init(payloadIcon: Int, delivered: Int, sync: SyncPolicy) {
        self.payloadIcon = payloadIcon
        self.delivered = delivered
        self.sync = sync
    }
}
