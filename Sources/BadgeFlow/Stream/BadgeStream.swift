/// The stateful half of the filter: applies events to devices in input order and writes
/// one result line per event (SPEC §4).
///
/// ```swift
/// let analyzer = LineAnalyzer(rules: .builtIn)
/// var stream = BadgeStream(rules: .builtIn)
/// var out = JSONWriter()
/// stream.apply(analyzer.analyze(#"{"aps":{"alert":"hi","thread-id":"alice"}}"#), seq: 1, into: &out)
/// // {"seq":1,"op":"push","device":"","kind":"alert","rule":"chat","path":"root.chat.alice",…}
/// ```
///
/// Output depends only on the input (event times come from `at`), so a replay is
/// byte-identical.
public struct BadgeStream: Sendable {
    /// The compiled rules.
    public let rules: RuleSet
    /// Devices by id, created on first use.
    public internal(set) var devices: [String: Device] = [:]
    /// Lines rejected so far.
    public private(set) var rejected = 0

    /// Creates a stream with no devices.
    public init(rules: RuleSet) { self.rules = rules }

    /// Applies one analysed line and appends its result line to `out` (nothing for a blank line).
    public mutating func apply(_ line: consuming LineResult, seq: Int, into out: inout JSONWriter) {
        apply(line, seq: seq)?.render(into: &out)
    }

    /// Applies one analysed line and returns its result as a value (nil for a blank line).
    ///
    /// The line's ``Event`` is moved into the result, not copied.
    public mutating func apply(_ line: consuming LineResult, seq: Int) -> StreamResult? {
        switch consume line {
        case .blank:
            return nil
        case .rejected(let diagnostic):
            rejected += 1
            return StreamResult(seq: seq, body: .rejected(diagnostic))
        case .event(let event):
            let body = apply(event)
            if case .rejected = body { rejected += 1 }
            return StreamResult(seq: seq, body: body)
        }
    }

    private mutating func apply(_ event: consuming Event) -> StreamResult.Body {
        // Only scalars are taken from the rules here: copying the RuleSet would retain its
        // arrays once per event, on the same reference counts the workers touch.
        let settings = Settings(icon: rules.icon, maxDisplay: rules.tree.maxDisplay)
        // Mutate the device in place in the dictionary: one hash, no copy of its tree.
        let index: Dictionary<String, Device>.Index
        if let found = devices.index(forKey: event.device) {
            index = found
        } else {
            devices[event.device] = Device(rules: rules)
            guard let made = devices.index(forKey: event.device) else {
                return .rejected(.error(.invalidPath, "device \"\(event.device)\" could not be created", at: "/device"))
            }
            index = made
        }
        return Self.apply(event, settings: settings, to: &devices.values[index])
    }

    /// What applying an event needs from the stream besides the device.
    private struct Settings {
        let icon: RuleSet.IconPolicy
        let maxDisplay: Int
    }

    /// Applies `event` to `device`.
    private static func apply(_ event: consuming Event, settings: Settings, to device: inout Device) -> StreamResult.Body {
        // Events without `at` take the previous time of the same device.
        if let at = event.at { device.clock = at }
        let clock = device.clock
        var outcome = Outcome.unchanged
        if let path = event.path {
            do {
                outcome = try Self.perform(event.action, on: path, in: &device.tree)
            } catch {
                let at = event.op == .push ? "" : "/path"
                let d = Diagnostic.error(.invalidPath,
                                         event.op == .push ? "rule \"\(event.rule ?? "")\" made an invalid path: \(error.description)" : error.description,
                                         at: at)
                return .rejected(d)
            }
        }
        if settings.icon == .payload {
            if let d = outcome.decrement { device.payloadIcon = max(0, device.payloadIcon - d.by) }
            if let b = event.badge { device.payloadIcon = b }
        }
        let happening: SyncPolicy.Happening
        switch event.op {
        case .login: happening = .login
        case .logout: happening = .logout
        case .foreground: happening = .foreground
        case .background: happening = .background
        case .appear: happening = .appear(event.page ?? "")
        case .disappear: happening = .disappear(event.page ?? "")
        case .push: happening = .push
        case .tick: happening = .tick
        case .set, .clear, .snapshot: happening = .other
        }
        let reason = device.sync.handle(happening, at: clock)
        let tree = event.op == .snapshot ? device.tree.snapshot() : nil
        return .applied(StreamResult.Applied(event: event, outcome: outcome, icon: device.icon(settings.icon),
                                             sync: reason, tree: tree, maxDisplay: settings.maxDisplay))
    }

    /// Performs a resolved action on a tree.
    static func perform(_ action: RoutingRule.Action, on path: String, in tree: inout BadgeTree) throws(BadgePathError) -> Outcome {
        switch action {
        case .dot: return try tree.set(path)
        case .increment(.literal(let k)): return try tree.increment(path, by: k)
        case .set(.literal(let n)): return try tree.set(path, count: n)
        case .clear(let force): return try tree.clear(path, force: force)
        case .ignore, .increment(.pointer), .set(.pointer): return .unchanged
        }
    }
}
