/// `explain`: report the marks that make `path` show, in the result's `explain` (see
/// <doc:EventLines>).
enum ExplainOp: EventOpDefinition {
    static let namedWhenUnknown = false
    static let resultFragment: StaticString = #","op":"explain","device":"#
    static let addsDevice = true

    /// `path` (required), checked here: explaining changes nothing, so the tree never sees it.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        guard let path = analyzer.pathField(root, into: &event) else { return analyzer.rejectedPath(root) }
        if let refused = LineAnalyzer.refusedTreePath(path, root: analyzer.rules.tree.root) { return .rejected(refused) }
        event.path = path
        return .event(consume event)
    }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .other }

    /// The marks that make `path` show, deepest first.
    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout {
        OpReadout(explain: tree.explain(event.path ?? ""))
    }

    /// The device's own app reported (``EventOpDefinition/deliverReported(index:total:to:)``).
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] { deliverReported(index: index, total: total, to: &devices) }

    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int { keepPayloadIcon(index: index, in: &devices) }
}
