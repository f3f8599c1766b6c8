/// `clear`: clear `path`, or with `force` its whole subtree (see <doc:EventLines>).
enum ClearOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"clear","device":"#
    static let addsDevice = true

    /// `path` (required) and `force`.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        guard let path = analyzer.pathField(root, into: &event) else { return analyzer.rejectedPath(root) }
        var force = false
        if let f = root[HashedKey.force], !f.isNull {
            guard let b = f.bool else {
                return .rejected(.error(.wrongType, "force must be a boolean, got \(PayloadChecker.describe(f))", at: "/force"))
            }
            force = b
        }
        event.path = path
        event.action = .clear(force: force)
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
