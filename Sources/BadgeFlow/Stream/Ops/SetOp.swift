/// `set`: a dot, or with `count` a number, on `path` (see <doc:EventLines>).
enum SetOp: EventOpDefinition {
    static let namedWhenUnknown = true
    static let resultFragment: StaticString = #","op":"set","device":"#
    static let addsDevice = true

    /// `path` (required), `count`, `ttl` and `once`.
    static func read(
        _ root: JSONRef, line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer, _ event: consuming Event
    ) -> LineResult {
        guard let path = analyzer.pathField(root, into: &event) else { return analyzer.rejectedPath(root) }
        if let c = root[HashedKey.count], !c.isNull {
            guard c.kind == .int, let n = c.int, n >= 0, n <= Int64(Int32.max) else {
                return .rejected(
                    .error(.wrongType, "count must be an integer from 0 to 2147483647, got \(PayloadChecker.describe(c))", at: "/count")
                )
            }
            event.action = .set(.literal(Int(n)))
        } else {
            event.action = .dot
        }
        if let t = root[HashedKey.ttl], !t.isNull {
            guard t.kind == .int || t.kind == .double, let v = t.number, v.isFinite, v >= 0, !t.intOverflowed else {
                return .rejected(
                    .error(.wrongType, "ttl must be a number of seconds, 0 or more, got \(PayloadChecker.describe(t))", at: "/ttl"))
            }
            event.ttl = v
        }
        if let o = root[HashedKey.once], !o.isNull {
            guard o.kind == .string, let token = o.string, !token.isEmpty else {
                return .rejected(.error(.wrongType, "once must be a non-empty string, got \(PayloadChecker.describe(o))", at: "/once"))
            }
            event.once = token
        }
        event.path = path
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
