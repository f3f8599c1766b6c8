/// `foreground`: the app came to the foreground (see <doc:EventLines>).
enum ForegroundOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"foreground","device":"#
    static let addsDevice = true

    /// No fields of its own.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { .event(consume event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .foreground }

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

/// `background`: the app went to the background (see <doc:EventLines>).
enum BackgroundOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"background","device":"#
    static let addsDevice = true

    /// No fields of its own.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { .event(consume event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .background }

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
