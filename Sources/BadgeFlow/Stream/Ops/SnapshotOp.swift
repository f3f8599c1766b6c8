/// `snapshot`: report every shown node of the device in the result's `tree` (see <doc:EventLines>).
enum SnapshotOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"snapshot","device":"#
    static let addsDevice = true

    /// No fields of its own.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { .event(consume event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .other }

    /// Every shown node of the account's tree, parents before children.
    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout {
        OpReadout(tree: tree.snapshot())
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
