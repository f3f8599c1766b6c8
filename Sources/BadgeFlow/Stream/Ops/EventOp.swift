/// What one event op is, kept in its own file under `Stream/Ops/`: the parsing of its own
/// fields, its application (the device, the sync policy), its delivery decision and its
/// result fields.
///
/// Each op's type is a caseless enum; nothing calls it through the protocol (no existential,
/// no witness call per line). The protocol is the checklist a new op's type is held to, and
/// the exhaustive switches below (no `default:`) are its registration: a case added to
/// ``Event/Op`` does not compile until each of them names it.
protocol EventOpDefinition {
    /// Whether the `unknown-op` error message lists the op. The message keeps its bytes:
    /// the ops `explain`, `reconcile`, `unregister` and `expire` are not in it.
    static var namedWhenUnknown: Bool { get }
    /// The fixed result text from the op's name to the device id: `,"op":"name","device":`.
    static var resultFragment: StaticString { get }
    /// Reads the op's own fields from the envelope `root` into `event`, whose common fields
    /// (device, account, id, at) are read already.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult
    /// Whether the event adds its device to the account when the device is not in it.
    static var addsDevice: Bool { get }
    /// What the event is to its device's sync policy (nil: the policy is not told).
    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening?
    /// What the result reports of the account's tree besides its changes (`tree`, `explain`).
    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout
    /// Icon policy `tree`: updates the delivered numbers after the applied event and returns
    /// the badge updates the server owes (see ``BadgeStream/badgeUpdates(_:total:except:adding:)``).
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate]
    /// Icon policy `payload`: the icon of the event's device (at `index`) after the event,
    /// which may set it or take the device out of the account.
    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int
}

/// What a result reports of the account's tree besides its changes, for the ops that read it.
struct OpReadout {
    /// For `snapshot`: every shown node, parents before children.
    var tree: [BadgeState]? = nil
    /// For `explain`: the marks that make the path show, deepest first.
    var explain: [MarkRecord]? = nil
}

extension EventOpDefinition {
    /// The delivery decision of most ops: the device's own app reported, so it set its icon
    /// to the total; every other device whose delivered number is not the total is owed it.
    static func deliverReported(
        index: Dictionary<String, Device>.Index?, total: Int, to devices: inout [String: Device]
    ) -> [BadgeUpdate] {
        if let index { devices.values[index].delivered = total }
        return BadgeStream.badgeUpdates(&devices, total: total, except: index)
    }

    /// The payload-policy decision of most ops: the device's icon stays what it was.
    static func keepPayloadIcon(index: Dictionary<String, Device>.Index, in devices: inout [String: Device]) -> Int {
        devices.values[index].payloadIcon
    }
}

// MARK: - The registry: the ops, and one arm per op in each switch

// Each op's behaviour is in its own file under `Stream/Ops/`; a new case is registered by
// one arm in each switch below (declaration order is the unknown-op message's order).
extension Event {
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
        /// The account's own contribution setting for `path` (a user's mute), over the rules'.
        case contribute
    }
}

extension Event.Op {
    /// The ops the `unknown-op` error message lists, in declaration order.
    static var namedWhenUnknown: [Event.Op] { allCases.filter(\.namedWhenUnknown) }

    /// Whether the `unknown-op` error message lists the op.
    var namedWhenUnknown: Bool {
        switch self {
        case .push: PushOp.namedWhenUnknown
        case .set: SetOp.namedWhenUnknown
        case .clear: ClearOp.namedWhenUnknown
        case .login: LoginOp.namedWhenUnknown
        case .logout: LogoutOp.namedWhenUnknown
        case .foreground: ForegroundOp.namedWhenUnknown
        case .background: BackgroundOp.namedWhenUnknown
        case .appear: AppearOp.namedWhenUnknown
        case .disappear: DisappearOp.namedWhenUnknown
        case .tick: TickOp.namedWhenUnknown
        case .snapshot: SnapshotOp.namedWhenUnknown
        case .explain: ExplainOp.namedWhenUnknown
        case .reconcile: ReconcileOp.namedWhenUnknown
        case .unregister: UnregisterOp.namedWhenUnknown
        case .expire: ExpireOp.namedWhenUnknown
        case .contribute: ContributeOp.namedWhenUnknown
        }
    }

    /// `,"op":"push","device":` and the like: the fixed result text between seq and the device id.
    var resultFragment: StaticString {
        switch self {
        case .push: PushOp.resultFragment
        case .set: SetOp.resultFragment
        case .clear: ClearOp.resultFragment
        case .login: LoginOp.resultFragment
        case .logout: LogoutOp.resultFragment
        case .foreground: ForegroundOp.resultFragment
        case .background: BackgroundOp.resultFragment
        case .appear: AppearOp.resultFragment
        case .disappear: DisappearOp.resultFragment
        case .tick: TickOp.resultFragment
        case .snapshot: SnapshotOp.resultFragment
        case .explain: ExplainOp.resultFragment
        case .reconcile: ReconcileOp.resultFragment
        case .unregister: UnregisterOp.resultFragment
        case .expire: ExpireOp.resultFragment
        case .contribute: ContributeOp.resultFragment
        }
    }

    /// Reads the op's own fields (``EventOpDefinition/read(_:line:by:_:)``).
    func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        switch self {
        case .push: PushOp.read(root, line: line, by: analyzer, event)
        case .set: SetOp.read(root, line: line, by: analyzer, event)
        case .clear: ClearOp.read(root, line: line, by: analyzer, event)
        case .login: LoginOp.read(root, line: line, by: analyzer, event)
        case .logout: LogoutOp.read(root, line: line, by: analyzer, event)
        case .foreground: ForegroundOp.read(root, line: line, by: analyzer, event)
        case .background: BackgroundOp.read(root, line: line, by: analyzer, event)
        case .appear: AppearOp.read(root, line: line, by: analyzer, event)
        case .disappear: DisappearOp.read(root, line: line, by: analyzer, event)
        case .tick: TickOp.read(root, line: line, by: analyzer, event)
        case .snapshot: SnapshotOp.read(root, line: line, by: analyzer, event)
        case .explain: ExplainOp.read(root, line: line, by: analyzer, event)
        case .reconcile: ReconcileOp.read(root, line: line, by: analyzer, event)
        case .unregister: UnregisterOp.read(root, line: line, by: analyzer, event)
        case .expire: ExpireOp.read(root, line: line, by: analyzer, event)
        case .contribute: ContributeOp.read(root, line: line, by: analyzer, event)
        }
    }

    /// Whether the event adds its device to the account (``EventOpDefinition/addsDevice``).
    var addsDevice: Bool {
        switch self {
        case .push: PushOp.addsDevice
        case .set: SetOp.addsDevice
        case .clear: ClearOp.addsDevice
        case .login: LoginOp.addsDevice
        case .logout: LogoutOp.addsDevice
        case .foreground: ForegroundOp.addsDevice
        case .background: BackgroundOp.addsDevice
        case .appear: AppearOp.addsDevice
        case .disappear: DisappearOp.addsDevice
        case .tick: TickOp.addsDevice
        case .snapshot: SnapshotOp.addsDevice
        case .explain: ExplainOp.addsDevice
        case .reconcile: ReconcileOp.addsDevice
        case .unregister: UnregisterOp.addsDevice
        case .expire: ExpireOp.addsDevice
        case .contribute: ContributeOp.addsDevice
        }
    }
}

extension Event {
    /// What the event is to its device's sync policy (``EventOpDefinition/happening(_:)``).
    var happening: SyncPolicy.Happening? {
        switch op {
        case .push: PushOp.happening(self)
        case .set: SetOp.happening(self)
        case .clear: ClearOp.happening(self)
        case .login: LoginOp.happening(self)
        case .logout: LogoutOp.happening(self)
        case .foreground: ForegroundOp.happening(self)
        case .background: BackgroundOp.happening(self)
        case .appear: AppearOp.happening(self)
        case .disappear: DisappearOp.happening(self)
        case .tick: TickOp.happening(self)
        case .snapshot: SnapshotOp.happening(self)
        case .explain: ExplainOp.happening(self)
        case .reconcile: ReconcileOp.happening(self)
        case .unregister: UnregisterOp.happening(self)
        case .expire: ExpireOp.happening(self)
        case .contribute: ContributeOp.happening(self)
        }
    }

    /// What the result reports of `tree` besides its changes (``EventOpDefinition/readout(_:of:)``).
    func readout(of tree: borrowing BadgeTree) -> OpReadout {
        switch op {
        case .push: PushOp.readout(self, of: tree)
        case .set: SetOp.readout(self, of: tree)
        case .clear: ClearOp.readout(self, of: tree)
        case .login: LoginOp.readout(self, of: tree)
        case .logout: LogoutOp.readout(self, of: tree)
        case .foreground: ForegroundOp.readout(self, of: tree)
        case .background: BackgroundOp.readout(self, of: tree)
        case .appear: AppearOp.readout(self, of: tree)
        case .disappear: DisappearOp.readout(self, of: tree)
        case .tick: TickOp.readout(self, of: tree)
        case .snapshot: SnapshotOp.readout(self, of: tree)
        case .explain: ExplainOp.readout(self, of: tree)
        case .reconcile: ReconcileOp.readout(self, of: tree)
        case .unregister: UnregisterOp.readout(self, of: tree)
        case .expire: ExpireOp.readout(self, of: tree)
        case .contribute: ContributeOp.readout(self, of: tree)
        }
    }
}

extension BadgeStream {
    /// Applies an op that acts on every account of the state, not on the event's own; nil
    /// when the event acts on its account.
    mutating func applyToFleet(_ event: borrowing Event, settings: Settings) -> StreamResult.Applying? {
        switch event.op {
        case .expire: expireFleet(event, settings: settings)
        case .reconcile: event.isFleetWide ? reconcileFleet(settings: settings) : nil
        case .push, .set, .clear, .login, .logout, .foreground, .background, .appear, .disappear, .tick, .snapshot, .explain,
            .unregister, .contribute:
            nil
        }
    }

    /// Whether the line `event` of a store-backed stream needs the store read just before it
    /// is applied (``StoreScan``): an op that acts on the fleet looks at the accounts only the
    /// store holds. Its own account, if any, is loaded like any line's.
    package func needsStoreScan(_ event: borrowing Event) -> Bool {
        switch event.op {
        case .expire: true
        case .reconcile: event.isFleetWide && rules.icon == .tree
        case .push, .set, .clear, .login, .logout, .foreground, .background, .appear, .disappear, .tick, .snapshot, .explain,
            .unregister, .contribute:
            false
        }
    }

    /// Updates the delivered numbers after an applied event (icon policy `tree`, see
    /// <doc:EventLines>) and returns the badge updates the server owes: the op's decision
    /// (``EventOpDefinition/deliver(_:index:total:to:own:)``).
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] {
        switch event.op {
        case .push: PushOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .set: SetOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .clear: ClearOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .login: LoginOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .logout: LogoutOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .foreground: ForegroundOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .background: BackgroundOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .appear: AppearOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .disappear: DisappearOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .tick: TickOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .snapshot: SnapshotOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .explain: ExplainOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .reconcile: ReconcileOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .unregister: UnregisterOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .expire: ExpireOp.deliver(event, index: index, total: total, to: &devices, own: own)
        case .contribute: ContributeOp.deliver(event, index: index, total: total, to: &devices, own: own)
        }
    }

    /// The icon of the event's device (at `index`) after an applied event, icon policy
    /// `payload`: the op's decision (``EventOpDefinition/deliverPayload(_:index:to:own:)``).
    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int {
        switch event.op {
        case .push: PushOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .set: SetOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .clear: ClearOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .login: LoginOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .logout: LogoutOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .foreground: ForegroundOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .background: BackgroundOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .appear: AppearOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .disappear: DisappearOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .tick: TickOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .snapshot: SnapshotOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .explain: ExplainOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .reconcile: ReconcileOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .unregister: UnregisterOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .expire: ExpireOp.deliverPayload(event, index: index, to: &devices, own: own)
        case .contribute: ContributeOp.deliverPayload(event, index: index, to: &devices, own: own)
        }
    }
}
