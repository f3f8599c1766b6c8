/// `contribute`: the account's own contribution setting for `path` (a user's mute), over
/// the rules' (see <doc:EventLines>). Applied through Event/setting
/// (Account/setContribution(_:of:rules:)).
enum ContributeOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"contribute","device":"#
    static let addsDevice = true

    /// `path`, `mode` and `account` (all required).
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        guard let path = analyzer.pathField(root, into: &event) else { return analyzer.rejectedPath(root) }
        guard let m = root["mode"] else {
            return .rejected(
                .error(.missingField, "contribute needs a \"mode\": \"count\", \"dot\", \"none\" or \"rules\"", at: "/mode"))
        }
        let setting: Event.ContributionSetting
        switch m.kind == .string ? m.string : nil {
        case "count"?: setting = .mode(.count)
        case "dot"?: setting = .mode(.dot)
        case "none"?: setting = .mode(.none)
        case "rules"?: setting = .rules
        default:
            return .rejected(
                .error(
                    .invalidValue, "mode must be \"count\", \"dot\", \"none\" or \"rules\", got \(PayloadChecker.describe(m))",
                    at: "/mode"))
        }
        guard event.account != nil else {
            return .rejected(
                .error(
                    .invalidValue,
                    "contribute sets one account's setting: it needs \"account\" (a fleet-wide setting belongs in the rules' contribute)",
                    at: "/account"))
        }
        if let refused = LineAnalyzer.refusedTreePath(path, root: analyzer.rules.tree.root) { return .rejected(refused) }
        event.path = path
        event.setting = setting
        return .event(consume event)
    }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .other }

    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout { OpReadout() }

    /// The device's own app reported (``EventOpDefinition/deliverReported(index:total:to:)``).
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] { deliverReported(index: index, total: total, to: &devices) }

    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int { keepPayloadIcon(index: index, in: &devices) }
}
