/// `unregister`: drop a device APNs no longer delivers to (it answered 410), sending it
/// nothing (see <doc:EventLines>).
enum UnregisterOp: EventOpDefinition {
    static let namedWhenUnknown = false
    static let resultFragment: StaticString = #","op":"unregister","device":"#
    /// A device not in the account is not added only to be dropped.
    static let addsDevice = false

    /// No fields of its own; the line must name a device.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        guard !event.isAccountLevel else {
            return .rejected(.error(.missingField, "unregister needs the \"device\" APNs answered 410 for", at: "/device"))
        }
        return .event(consume event)
    }

    /// The sync policy of a device that leaves is not told.
    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { nil }

    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout { OpReadout() }

    /// The device leaves with nothing sent; every other device is owed the total.
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] {
        if let index { devices.remove(at: index) }
        return BadgeStream.badgeUpdates(&devices, total: total, except: nil)
    }

    /// The device leaves; the result shows the icon it had.
    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int {
        let icon = devices.values[index].payloadIcon
        devices.remove(at: index)
        return icon
    }
}
