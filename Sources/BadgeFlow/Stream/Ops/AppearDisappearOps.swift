/// `appear`: a page became visible (see <doc:EventLines>).
enum AppearOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"appear","device":"#
    static let addsDevice = true

    /// `page` (required).
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { readPage(root, event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .appear(event.page ?? "") }

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

/// `disappear`: a page stopped being visible (see <doc:EventLines>).
enum DisappearOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"disappear","device":"#
    static let addsDevice = true

    /// `page` (required).
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { readPage(root, event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .disappear(event.page ?? "") }

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

extension EventOpDefinition {
    /// Reads the `page` string `appear` and `disappear` need.
    fileprivate static func readPage(_ root: JSONRef, _ event: consuming Event) -> LineResult {
        guard let p = root[HashedKey.page], p.kind == .string, let page = p.string else {
            return .rejected(
                .error(
                    root[HashedKey.page] == nil ? .missingField : .wrongType,
                    "\(event.op.rawValue) needs a \"page\" string", at: "/page"))
        }
        event.page = page
        return .event(consume event)
    }
}
