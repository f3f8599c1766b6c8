/// `tick`: time passed: only the sync interval is checked (see <doc:EventLines>).
enum TickOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"tick","device":"#
    static let addsDevice = true

    /// No fields of its own.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { .event(consume event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .tick }

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
