/// One input line, read and routed: everything the stateful part needs, as plain values.
///
/// Making an `Event` depends only on the line and the rules, never on device state, so
/// lines can be analysed on any thread and applied in order on one.
public struct Event: Sendable {
    /// The envelope operations an event line may name in `op` (see <doc:EventLines>).
    public enum Op: String, Sendable, CaseIterable {
        /// A payload arrived (a bare payload line, or `{"op":"push","payload":…}`).
        case push
        /// Set a dot, or with `count` a number, on `path`.
        case set
        /// Clear `path`, or with `force` its whole subtree.
        case clear
        /// The user logged in.
        case login
        /// The user logged out.
        case logout
        /// The app came to the foreground.
        case foreground
        /// The app went to the background.
        case background
        /// A page became visible.
        case appear
        /// A page stopped being visible.
        case disappear
        /// Time passed: only the sync interval is checked.
        case tick
        /// Report every shown node of the device in `tree`.
        case snapshot
        /// Report the marks that make `path` show, in `explain`.
        case explain
        /// Re-send every device of the account its number, or (with `badge`) take a device's
        /// report of what it shows.
        case reconcile
        /// Drop a device APNs no longer delivers to (it answered 410), sending it nothing.
        case unregister
        /// Time passed for the whole fleet: every account's marks due at `at` expire.
        case expire
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
    /// The event's id (1 to 128 bytes), when the line gives one: an event whose account
    /// already applied that id is a duplicate and changes nothing (``RecentIDs``).
    public var id: String?
    /// For `expire`: `at` as the line gives it (JSON text: a number or a quoted string),
    /// echoed in the result.
    public var atText: String?
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
    /// Seconds after the event time when the mark the action sets expires (a rule's or a
    /// `set`'s `ttl`), if it does.
    public var ttl: Double?
    /// The once token for the mark the action sets (a rule's or a `set`'s `once`), if any.
    public var once: String?
    /// For `appear` and `disappear`: the page.
    public var page: String?
    /// Warnings found on the line (payload warnings, with pointers into the line).
    public var warnings: [Diagnostic] = []
    /// For pushes read with stamping on (and of a kind that sets the icon): the payload, ready for its
    /// badge number.
    public var stamp: PayloadStamp?

    /// Creates an event of `op` for the default device.
    public init(op: Op) { self.op = op }

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
