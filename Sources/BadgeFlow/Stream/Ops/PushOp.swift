/// `push`: a payload arrived, as a bare payload line or `{"op":"push","payload":…}`
/// (see <doc:EventLines>). Its payload is checked and routed by ``LineAnalyzer``.
enum PushOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"push","device":"#
    static let addsDevice = true

    /// `payload` (required) and `push-type`.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        guard let payload = root[HashedKey.payload] else {
            return .rejected(.error(.missingField, "a push needs a \"payload\"", at: "/payload"))
        }
        var pushType: String? = nil
        if let p = root[HashedKey.pushType] {
            guard p.kind == .string else {
                return .rejected(.error(.wrongType, "push-type must be a string, got \(PayloadChecker.describe(p))", at: "/push-type"))
            }
            pushType = p.string
        }
        // The line's length bounds the payload's compact size: only a line over the
        // smallest limit has the payload's own bytes found and measured (a byte scan).
        let size = payload.kind == .object ? line.count : 0
        let text = size > PayloadLimits.maxBytes ? JSONScanner.memberValue("payload", in: line) : nil
        return analyzer.push(
            payload, aps: payload[HashedKey.aps], size: size, measured: false, text: text, base: "/payload",
            pushType: pushType, line: line, event)
    }

    static func happening(_ event: borrowing Event) -> SyncPolicy.Happening? { .push }

    static func readout(_ event: borrowing Event, of tree: borrowing BadgeTree) -> OpReadout { OpReadout() }

    /// A payload whose kind sets the icon (stamped, or sent with aps.badge = icon) delivers
    /// the total to its device, or to every device when it names none; one that does not
    /// leaves the device owed it too.
    static func deliver(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index?, total: Int,
        to devices: inout [String: Device], own: Bool
    ) -> [BadgeUpdate] {
        var except = index
        if event.kind?.setsIcon ?? true {
            if let index {
                devices.values[index].delivered = total
            } else {
                for i in devices.indices { devices.values[i].delivered = total }
            }
        } else {
            except = nil
        }
        return BadgeStream.badgeUpdates(&devices, total: total, except: except)
    }

    /// The payload's `aps.badge`, when it has one, is the device's icon.
    static func deliverPayload(
        _ event: borrowing Event, index: Dictionary<String, Device>.Index, to devices: inout [String: Device], own: Bool
    ) -> Int {
        if let b = event.badge { devices.values[index].payloadIcon = b }
        return devices.values[index].payloadIcon
    }
}
