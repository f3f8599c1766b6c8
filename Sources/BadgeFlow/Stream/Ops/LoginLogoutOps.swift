/// `login`: the user logged in (see <doc:EventLines>).
enum LoginOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"login","device":"#
    static let addsDevice = true

    /// No fields of its own.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { .event(consume event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .login }

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

/// `logout`: the user logged out (see <doc:EventLines>). The device leaves the account
/// unless it is the device's own.
enum LogoutOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"logout","device":"#
    static let addsDevice = true

    /// No fields of its own.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult { .event(consume event) }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .logout }

    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout { OpReadout() }

    /// The device that logs out is sent 0 when it shows anything, and leaves the account
    /// (its own account keeps it, showing 0: it is not owed the total); every other device
    /// is owed the total.
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] {
        var leaving: BadgeUpdate? = nil
        if let index {
            if devices.values[index].delivered != 0 { leaving = BadgeUpdate(device: event.device, badge: 0) }
            if own {
                devices.values[index].delivered = 0
            } else {
                devices.remove(at: index)
            }
        }
        if own, let index {
            // The device stays in its own account, showing 0: it is not owed the total.
            return BadgeStream.badgeUpdates(&devices, total: total, except: index, adding: leaving)
        }
        return BadgeStream.badgeUpdates(&devices, total: total, except: nil, adding: leaving)
    }

    /// The device's icon stays; it leaves an account not its own.
    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int {
        let icon = devices.values[index].payloadIcon
        if !own { devices.remove(at: index) }
        return icon
    }
}
