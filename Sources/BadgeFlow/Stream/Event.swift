/// One input line, read and routed: everything the stateful part needs, as plain values.
///
/// Making an `Event` depends only on the line and the rules, never on device state, so
/// lines can be analysed on any thread and applied in order on one.
public struct Event: Sendable {
    /// What a `contribute` line asks for `path` (its `mode`).
    public enum ContributionSetting: Sendable, Equatable {
        /// The account's own setting: `"count"`, `"dot"` or `"none"`.
        case mode(Contribution)
        /// `"rules"`: the account's setting is removed; the rules' `contribute` applies.
        case rules
    }

    /// The operation.
    public var op: Op
    /// The device it comes from or goes to (`""` by default).
    public var device: String = ""
    /// The account named by the line, if any. Without one the device is its own account:
    /// see ``accountID``.
    public var account: String?
    /// The event time, when the line gives one.
    public var at: Double?
    /// For pushes: the payload's kind.
    public var kind: PayloadKind?
    /// For pushes: `aps.badge`, when present. For `reconcile`: the number the device reports
    /// it shows, when given.
    public var badge: Int?
    /// For pushes: the matched rule's name (nil: no rule matched).
    public var rule: String?
    /// For pushes, sets and clears: the target path.
    public var path: String?
    /// What to do to `path`.
    public var action: RoutingRule.Action = .ignore
    /// The fields few lines carry, kept out of line so that an event stays small and
    /// copying or destroying one touches few references (nil: all of them absent).
    private var rare: Rare?

    /// Creates an event of `op` for the default device.
    public init(op: Op) { self.op = op }

    /// The event's id (1 to 128 bytes), when the line gives one: an event whose account
    /// already applied that id is a duplicate and changes nothing (``RecentIDs``).
    public var id: String? {
        get { rare?.id }
        set { if newValue != nil || rare != nil { uniqueRare().id = newValue } }
    }
    /// For `expire`: `at` as the line gives it (JSON text: a number or a quoted string),
    /// echoed in the result.
    public var atText: String? {
        get { rare?.atText }
        set { if newValue != nil || rare != nil { uniqueRare().atText = newValue } }
    }
    /// Seconds after the event time when the mark the action sets expires (a rule's or a
    /// `set`'s `ttl`), if it does.
    public var ttl: Double? {
        get { rare?.ttl }
        set { if newValue != nil || rare != nil { uniqueRare().ttl = newValue } }
    }
    /// The once token for the mark the action sets (a rule's or a `set`'s `once`), if any.
    public var once: String? {
        get { rare?.once }
        set { if newValue != nil || rare != nil { uniqueRare().once = newValue } }
    }
    /// For `appear` and `disappear`: the page.
    public var page: String? {
        get { rare?.page }
        set { if newValue != nil || rare != nil { uniqueRare().page = newValue } }
    }
    /// For `contribute`: the mode the line sets for `path`.
    public var setting: ContributionSetting? {
        get { rare?.setting }
        set { if newValue != nil || rare != nil { uniqueRare().setting = newValue } }
    }
    /// For `reconcile`: the line names no account and no device, so it acts on every
    /// account of the state (a fleet-wide reconcile, after a rules change).
    public var isFleetWide: Bool {
        get { rare?.fleetWide ?? false }
        set { if newValue || rare != nil { uniqueRare().fleetWide = newValue } }
    }
    /// Warnings found on the line (payload warnings, with pointers into the line).
    public var warnings: [Diagnostic] {
        get { rare?.warnings ?? [] }
        set { if !newValue.isEmpty || rare != nil { uniqueRare().warnings = newValue } }
    }
    /// For pushes read with stamping on (and of a kind that sets the icon): the payload, ready for its
    /// badge number.
    public var stamp: PayloadStamp? {
        get { rare?.stamp }
        set { if newValue != nil || rare != nil { uniqueRare().stamp = newValue } }
    }

    /// The rare fields' storage, copied first when another event shares it.
    private mutating func uniqueRare() -> Rare {
        if isKnownUniquelyReferenced(&rare), let rare { return rare }
        let fresh = rare.map(Rare.init(copying:)) ?? Rare()
        rare = fresh
        return fresh
    }

    /// Storage of the fields few lines carry. It is mutated only through `uniqueRare()`,
    /// which copies it first unless this event holds the only reference, so no two events
    /// (or threads) ever see one instance change: a value with copy-on-write, hence
    /// `@unchecked Sendable`.
    private final class Rare: @unchecked Sendable {
        var id: String?
        var atText: String?
        var ttl: Double?
        var once: String?
        var page: String?
        var setting: ContributionSetting?
        var fleetWide = false
        var warnings: [Diagnostic] = []
        var stamp: PayloadStamp?

        init() {}

        init(copying other: Rare) {
            id = other.id
            atText = other.atText
            ttl = other.ttl
            once = other.once
            page = other.page
            setting = other.setting
            fleetWide = other.fleetWide
            warnings = other.warnings
            stamp = other.stamp
        }
    }

    /// The account whose tree the event touches: ``account``, or the device id without one.
    public var accountID: String { account ?? device }

    /// Whether the event acts on its account alone: it names an `account` and no device (a
    /// read on the web, a server job), so it adds no device to the account.
    public var isAccountLevel: Bool { account != nil && device.isEmpty }
}

/// What reading one line gave.
public enum LineResult: Sendable {
    /// A blank line: no output.
    case blank
    /// A bad line: one error line.
    case rejected(Diagnostic)
    /// A good event.
    case event(Event)
}
