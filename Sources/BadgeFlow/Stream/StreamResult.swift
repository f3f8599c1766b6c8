/// What one input line did, as a value: the filter's result line before it is rendered.
///
/// ``BadgeStream/apply(_:seq:)`` hands one back for every non-blank line, so a server that
/// embeds the engine reads decrements, icon numbers and sync reasons as Swift values and
/// never parses the JSON it would otherwise write. ``render(into:)`` writes the NDJSON result
/// line, byte for byte what `badgeflow filter` prints.
///
/// ```swift
/// var stream = BadgeStream(rules: .builtIn)
/// let analyzer = LineAnalyzer(rules: .builtIn)
/// if let result = stream.apply(analyzer.analyze(#"{"aps":{"alert":"hi","thread-id":"bob"}}"#), seq: 1),
///    case .applied(let applied) = result.body {
///     print(applied.icon, applied.outcome.decrement?.by ?? 0)   // 1 0
/// }
/// ```
public struct StreamResult: Sendable {
    /// The input line's number (its `seq`).
    public var seq: Int
    /// What happened: an error line or an applied event.
    public var body: Body

    /// An error line or an applied event.
    public enum Body: Sendable {
        /// The line was rejected: the result is `{"seq":N,"error":{…}}`.
        case rejected(Diagnostic)
        /// The line was applied to a device.
        case applied(Applied)
    }

    /// An event applied to a device, with everything its result line carries.
    public struct Applied: Sendable {
        /// The event as read and routed: op, device, account, kind, rule, path, page,
        /// warnings and, with stamping on, the payload to stamp.
        public var event: Event
        /// Everything else: what applying the event did.
        var effects: Effects

        /// The tree changes (deepest first) and the decrement request, if any.
        public var outcome: Outcome {
            get { effects.outcome }
            set { effects.outcome = newValue }
        }
        /// The number the app icon should show after the event.
        public var icon: Int {
            get { effects.icon }
            set { effects.icon = newValue }
        }
        /// Why the app should re-sync its unread count now, if it should.
        public var sync: SyncPolicy.Reason? {
            get { effects.sync }
            set { effects.sync = newValue }
        }
        /// For `snapshot`: every shown node, parents before children.
        public var tree: [BadgeState]? {
            get { effects.tree }
            set { effects.tree = newValue }
        }
        /// The display cap the tree's `display` texts were made with.
        public var maxDisplay: Int {
            get { effects.maxDisplay }
            set { effects.maxDisplay = newValue }
        }
        /// Under the `tree` icon policy: the devices of the account that were owed a number
        /// (their delivered number was not the account's total; a device that logged out
        /// and showed something is owed 0), in byte order of their ids.
        public var badgeUpdates: [BadgeUpdate] {
            get { effects.badgeUpdates }
            set { effects.badgeUpdates = newValue }
        }
        /// The marks that expired before the event was applied, in byte order (their changes
        /// come first in ``outcome``).
        public var expired: [String] {
            get { effects.expired }
            set { effects.expired = newValue }
        }
        /// For `explain`: the marks that make the path show, deepest first.
        public var explain: [MarkRecord]? {
            get { effects.explain }
            set { effects.explain = newValue }
        }
        /// Whether the event was a duplicate: its account had already applied its `id`, so
        /// it changed nothing (`"duplicate":true`).
        public var duplicate: Bool {
            get { effects.duplicate }
            set { effects.duplicate = newValue }
        }
        /// For a fleet-wide `expire`: each account that had a due mark, in byte order of
        /// account id.
        public var fleet: [ExpiredAccount]? {
            get { effects.fleet }
            set { effects.fleet = newValue }
        }

        /// Creates an applied result.
        public init(
            event: Event, outcome: Outcome, icon: Int, sync: SyncPolicy.Reason?,
            tree: [BadgeState]?, maxDisplay: Int, badgeUpdates: [BadgeUpdate] = [],
            expired: [String] = [], explain: [MarkRecord]? = nil
        ) {
            self.event = event
            self.effects = Effects(
                outcome: outcome, icon: icon, sync: sync, tree: tree, maxDisplay: maxDisplay, badgeUpdates: badgeUpdates,
                expiredPaths: expired.isEmpty ? nil : expired, explain: explain)
        }

        /// The event and what applying it did. A duplicate's event keeps no payload to stamp.
        init(event: consuming Event, effects: Effects) {
            if effects.duplicate { event.stamp = nil }
            self.event = event
            self.effects = effects
        }

        /// With stamping on, for a push whose kind sets the icon: the pushed payload with
        /// `aps.badge` set to ``icon``, the payload to send to APNs.
        public var stampedPayload: String? {
            event.stamp?.stamped(icon)
        }
    }

    /// What applying an event did: everything an applied result holds but the event itself.
    ///
    /// The filter writes a result line from the event and these, so the event (a few hundred
    /// bytes) is never moved into an applied result nor copied.
    struct Effects: Sendable {
        var outcome: Outcome
        var icon: Int
        var sync: SyncPolicy.Reason?
        var tree: [BadgeState]?
        var maxDisplay: Int
        var badgeUpdates: [BadgeUpdate]
        /// `expired`, nil when empty: an optional array is copied without reference counting
        /// when nil.
        var expiredPaths: [String]?
        var explain: [MarkRecord]?
        /// The event was a duplicate: nothing changed, and its payload is not stamped.
        var duplicate = false
        var fleet: [ExpiredAccount]?
        /// The event's own tree changes when they were not made into ``outcome``'s states:
        /// written from the account's tree (``BadgeStream/apply(_:seq:into:)``), or made into
        /// states before a result leaves the stream.
        var change = BadgeTree.Change()

        /// The marks that expired before the event was applied, in byte order.
        var expired: [String] {
            get { expiredPaths ?? [] }
            set { expiredPaths = newValue.isEmpty ? nil : newValue }
        }
        /// Whether `expired` is not empty (without making the empty array).
        var hasExpired: Bool { expiredPaths != nil }
    }

    /// An event rejected, or what applying it did.
    enum Applying {
        case rejected(Diagnostic)
        case applied(Effects)
    }

    /// Creates a result.
    public init(seq: Int, body: Body) {
        self.seq = seq
        self.body = body
    }

    /// The error, when the line was rejected.
    public var error: Diagnostic? {
        if case .rejected(let d) = body { return d }
        return nil
    }

    /// The applied event, when the line was not rejected.
    public var applied: Applied? {
        if case .applied(let a) = body { return a }
        return nil
    }

    /// Appends the NDJSON result line (with its newline) to `out`.
    public func render(into out: inout JSONWriter) {
        switch body {
        case .rejected(let d): ResultLine.error(d, seq: seq, into: &out)
        case .applied(let a): ResultLine.event(a, seq: seq, into: &out)
        }
    }
}

/// One account's part of a fleet-wide `expire` result.
public struct ExpiredAccount: Sendable {
    /// The account id.
    public var account: String
    /// The marks that expired, in byte order.
    public var expired: [String]
    /// Their changes (deepest first) and the decrement.
    public var outcome: Outcome
    /// The account's total after.
    public var icon: Int
    /// The devices owed a number (every device whose delivered number is not the total).
    public var badgeUpdates: [BadgeUpdate]
}
