/// Reads one NDJSON line into an `Event`: parse, validate, route.
///
/// The line formats are described in <doc:EventLines>.
///
/// Stateless apart from its reused json-c tokener: give each thread its own analyzer and
/// share the `RuleSet`. Every problem becomes a `Diagnostic` whose pointer is into the line.
public final class LineAnalyzer {
    /// The compiled rules.
    public let rules: RuleSet
    /// Whether pushes whose kind sets the icon keep their payload for stamping
    /// (``Event/stamp``; `badgeflow filter --stamp`).
    public let stamp: Bool
    private let parser = JSONParser(maxDepth: PayloadLimits.maxDepth)

    /// Creates an analyzer for `rules`; with `stamp`, push results carry the stamped payload.
    public init(rules: RuleSet, stamp: Bool = false) {
        self.rules = rules
        self.stamp = stamp
    }

    /// Analyses one line (without its newline; a trailing CR is ignored).
    public func analyze(_ line: UnsafeRawBufferPointer) -> LineResult {
        let size = PayloadValidator.trimmedCount(line)
        if size == 0 { return .blank }
        return parser.withDocument(line) { parsed -> LineResult in
            switch parsed {
            case .failure(let e):
                if size > PayloadLimits.maxVoIPBytes * 2 {
                    return .rejected(PayloadValidator.tooLarge(size, limit: PayloadLimits.maxBytes, at: ""))
                }
                return .rejected(e.diagnostic)
            case .success(let root):
                guard root.kind == .object else {
                    return .rejected(.error(.notAnObject, "an event must be a JSON object, got \(PayloadChecker.describe(root))", at: ""))
                }
                if let aps = root[HashedKey.aps] {
                    return push(
                        root, aps: aps, size: size, measured: true, base: "", pushType: nil, line: line, Event(op: .push))
                }
                return envelope(root, line: line)
            }
        }
    }

    /// Analyses one line given as text.
    public func analyze(_ line: String) -> LineResult {
        var line = line
        return line.withUTF8 { analyze(UnsafeRawBufferPointer($0)) }
    }

    private func envelope(_ root: JSONRef, line: UnsafeRawBufferPointer) -> LineResult {
        guard let opValue = root[HashedKey.op] else {
            return .rejected(.error(.missingField, "an event needs \"aps\" (a bare payload) or \"op\"", at: "/op"))
        }
        guard let op = Self.op(opValue) else {
            // The list predates `explain` and stays as it was, so error lines keep their bytes.
            let later: [Event.Op] = [.explain, .reconcile, .unregister, .expire]
            let ops = Event.Op.allCases.filter { !later.contains($0) }.map(\.rawValue).joined(separator: ", ")
            return .rejected(.error(.unknownOp, "unknown op \(PayloadChecker.describe(opValue)); expected one of \(ops)", at: "/op"))
        }
        var event = Event(op: op)
        if let d = root[HashedKey.device] {
            guard d.kind == .string, let s = d.string else {
                return .rejected(.error(.wrongType, "device must be a string, got \(PayloadChecker.describe(d))", at: "/device"))
            }
            event.device = s
        }
        if let a = root[HashedKey.account] {
            guard a.kind == .string, let s = a.string else {
                return .rejected(.error(.wrongType, "account must be a string, got \(PayloadChecker.describe(a))", at: "/account"))
            }
            event.account = s
        }
        if let i = root[HashedKey.id] {
            guard i.kind == .string, let s = i.string else {
                return .rejected(.error(.wrongType, "id must be a string, got \(PayloadChecker.describe(i))", at: "/id"))
            }
            let bytes = s.utf8.count
            guard bytes >= 1 && bytes <= 128 else {
                return .rejected(.error(.invalidValue, "id must be 1 to 128 bytes, got \(bytes)", at: "/id"))
            }
            event.id = s
        }
        if let t = root[HashedKey.at], !t.isNull {
            switch t.kind {
            case .int, .double:
                guard let v = t.number, v.isFinite, !t.intOverflowed else {
                    return .rejected(
                        .error(.invalidTime, "at must be UNIX seconds or RFC 3339 text, got \(PayloadChecker.describe(t))", at: "/at"))
                }
                event.at = v
            case .string:
                guard let v = EventTime.parseRFC3339(t.string ?? "") else {
                    return .rejected(
                        .error(
                            .invalidTime, "at must be RFC 3339 text such as 2026-11-22T10:00:00Z, got \(PayloadChecker.describe(t))",
                            at: "/at"))
                }
                event.at = v
            default:
                return .rejected(
                    .error(.invalidTime, "at must be UNIX seconds or RFC 3339 text, got \(PayloadChecker.describe(t))", at: "/at"))
            }
        }
        switch op {
        case .push:
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
            // The line's length bounds the payload's compact size: the checker measures the
            // payload (json-c writes it) only when the line is over the limit.
            let size = payload.kind == .object ? line.count : 0
            return push(
                payload, aps: payload[HashedKey.aps], size: size, measured: false, base: "/payload", pushType: pushType,
                line: line, event)
        case .set:
            guard let path = pathField(root, into: &event) else { return rejectedPath(root) }
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
        case .clear:
            guard let path = pathField(root, into: &event) else { return rejectedPath(root) }
            var force = false
            if let f = root[HashedKey.force], !f.isNull {
                guard let b = f.bool else {
                    return .rejected(.error(.wrongType, "force must be a boolean, got \(PayloadChecker.describe(f))", at: "/force"))
                }
                force = b
            }
            event.path = path
            event.action = .clear(force: force)
        case .explain:
            guard let path = pathField(root, into: &event) else { return rejectedPath(root) }
            // Explaining changes nothing, so the tree never sees the path: check it here.
            if let refused = Self.refusedTreePath(path, root: rules.tree.root) { return .rejected(refused) }
            event.path = path
        case .appear, .disappear:
            guard let p = root[HashedKey.page], p.kind == .string, let page = p.string else {
                return .rejected(
                    .error(
                        root[HashedKey.page] == nil ? .missingField : .wrongType,
                        "\(op.rawValue) needs a \"page\" string", at: "/page"))
            }
            event.page = page
        case .reconcile:
            // Naming no account and no device: every account of the state.
            let fleetWide = root[HashedKey.account] == nil && root[HashedKey.device] == nil
            if fleetWide, root[HashedKey.badge] != nil {
                return .rejected(
                    .error(.invalidValue, "badge is what a device reports it shows: this reconcile names no device", at: "/badge"))
            }
            event.isFleetWide = fleetWide
            if let b = root[HashedKey.badge] {
                guard b.kind == .int, let n = b.int, !b.intOverflowed else {
                    return .rejected(
                        .error(.wrongType, "badge must be an integer, 0 or more, got \(PayloadChecker.describe(b))", at: "/badge"))
                }
                guard n >= 0, n <= Int64(Int32.max) else {
                    return .rejected(.error(.invalidValue, "badge must be from 0 to 2147483647, got \(n)", at: "/badge"))
                }
                guard !event.isAccountLevel else {
                    return .rejected(
                        .error(.invalidValue, "badge is what a device reports it shows: this reconcile names no device", at: "/badge"))
                }
                event.badge = Int(n)
            }
        case .expire:
            // Fleet-wide: it names no account or device, and its time is required.
            for field in ["account", "device"] where root[field] != nil {
                return .rejected(
                    .error(.invalidValue, "expire acts on every account: it must not name \"\(field)\"", at: "/" + field))
            }
            guard event.at != nil, let t = root[HashedKey.at] else {
                return .rejected(.error(.missingField, "expire needs \"at\", the time marks due by then expire", at: "/at"))
            }
            event.atText = t.serialized(pretty: false)
        case .contribute:
            guard let path = pathField(root, into: &event) else { return rejectedPath(root) }
            guard let m = root["mode"] else {
                return .rejected(
                    .error(.missingField, "contribute needs a \"mode\": \"count\", \"dot\", \"none\" or \"rules\"", at: "/mode"))
            }
            let setting: Event.ContributionSetting
            switch m.kind == .string ? m.string : nil {
            case "count"?: setting = .mode(.count)
            case "dot"?: setting = .mode(.dot)
            case "none"?: setting = .mode(.none)
            case "rules"?: setting = .rules
            default:
                return .rejected(
                    .error(
                        .invalidValue, "mode must be \"count\", \"dot\", \"none\" or \"rules\", got \(PayloadChecker.describe(m))",
                        at: "/mode"))
            }
            guard event.account != nil else {
                return .rejected(
                    .error(
                        .invalidValue,
                        "contribute sets one account's setting: it needs \"account\" (a fleet-wide setting belongs in the rules' contribute)",
                        at: "/account"))
            }
            if let refused = Self.refusedTreePath(path, root: rules.tree.root) { return .rejected(refused) }
            event.path = path
            event.setting = setting
        case .unregister:
            guard !event.isAccountLevel else {
                return .rejected(.error(.missingField, "unregister needs the \"device\" APNs answered 410 for", at: "/device"))
            }
        case .login, .logout, .foreground, .background, .tick, .snapshot:
            break
        }
        return .event(event)
    }

    /// Every op's name as bytes, for `op(_:)`.
    private static let opNames: [(name: [UInt8], op: Event.Op)] = Event.Op.allCases.map { (Array($0.rawValue.utf8), $0) }

    /// The op `value` names, read from json-c's bytes: no `String` made, no string switch
    /// (`Event.Op(rawValue:)` counted ~360 instructions an envelope line, the `String` ~210).
    private static func op(_ value: JSONRef) -> Event.Op? {
        guard value.kind == .string else { return nil }
        return value.withStringBytes { text in
            for entry in opNames where entry.name.count == text.count {
                if entry.name.withUnsafeBufferPointer({ $0.elementsEqual(text) }) { return entry.op }
            }
            return nil
        }
    }

    /// The `invalid-path` error at `/path` for a path that is not valid or not under `root`.
    private static func refusedTreePath(_ path: String, root treeRoot: String) -> Diagnostic? {
        do { try BadgePath.validate(path) } catch {
            return .error(.invalidPath, error.description, at: "/path")
        }
        guard path == treeRoot || path.hasPrefix(treeRoot + ".") else {
            return .error(.invalidPath, "invalid path \"\(path)\": a path must start with the root \"\(treeRoot)\"", at: "/path")
        }
        return nil
    }

    private func pathField(_ root: JSONRef, into event: inout Event) -> String? {
        guard let p = root[HashedKey.path], p.kind == .string else { return nil }
        return p.string
    }

    private func rejectedPath(_ root: JSONRef) -> LineResult {
        guard let p = root[HashedKey.path] else {
            return .rejected(.error(.missingField, "this op needs a \"path\" such as \"root.chat.alice\"", at: "/path"))
        }
        return .rejected(.error(.wrongType, "path must be a string, got \(PayloadChecker.describe(p))", at: "/path"))
    }

    /// Validates and routes a payload, completing `event` (taken, not copied: the result
    /// moves it into the `LineResult`). `aps` is the payload's `aps` member, looked up once
    /// for the checker and the routing.
    @inline(__always)
    private func push(
        _ payload: JSONRef, aps: JSONRef?, size: Int, measured: Bool, base: String, pushType: String?,
        line: UnsafeRawBufferPointer, _ event: consuming Event
    ) -> LineResult {
        let report = PayloadChecker.check(
            payload, aps: aps, byteCount: size, measured: measured, pushType: pushType, base: base)
        if let error = report.firstError { return .rejected(error) }
        event.kind = report.kind
        event.badge = report.badge
        event.warnings = report.diagnostics
        if stamp, report.kind?.setsIcon ?? true {
            // The input's own bytes when the text can be cut; json-c's parse otherwise.
            event.stamp = PayloadStamp.cut(line, envelope: !base.isEmpty) ?? PayloadStamp.rewritten(payload)
        }
        switch rules.route(payload, aps: aps, base: base) {
        case .none:
            event.rule = nil
        case .failed(let d):
            return .rejected(d)
        case .matched(let index, let path, let action, let once):
            let rule = rules.rules[index]
            event.rule = rule.name
            event.path = path
            event.once = once
            if let ttl = rule.ttl {
                switch ttl {
                case .literal(let n): event.ttl = Double(n)
                case .pointer(let p):
                    guard let v = payload.resolve(p), !v.isNull else {
                        return .rejected(.error(.missingField, "the rule's ttl \(p) is missing from the payload", at: base + p.description))
                    }
                    guard v.kind == .int, let n = v.int, !v.intOverflowed, n >= 0, n <= Int64(Int32.max) else {
                        return .rejected(
                            .error(
                                .wrongType,
                                "the rule's ttl \(p) must be an integer from 0 to 2147483647, got \(PayloadChecker.describe(v))",
                                at: base + p.description))
                    }
                    event.ttl = Double(n)
                }
            }
            switch resolve(action, payload, base: base) {
            case .success(let a): event.action = a
            case .failure(let d): return .rejected(d)
            }
        }
        return .event(consume event)
    }

    private struct Failure: Error { let diagnostic: Diagnostic }

    /// Replaces pointer amounts with the payload's values.
    private func resolve(_ action: RoutingRule.Action, _ payload: JSONRef, base: String) -> Result<RoutingRule.Action, Diagnostic> {
        func amount(_ a: RoutingRule.Amount, min: Int64) -> Result<RoutingRule.Amount, Diagnostic> {
            guard case .pointer(let p) = a else { return .success(a) }
            guard let v = payload.resolve(p), !v.isNull else {
                return .failure(.error(.missingField, "the rule's amount \(p) is missing from the payload", at: base + p.description))
            }
            guard v.kind == .int, let n = v.int, !v.intOverflowed, n >= min, n <= Int64(Int32.max) else {
                return .failure(
                    .error(
                        .wrongType,
                        "the rule's amount \(p) must be an integer from \(min) to 2147483647, got \(PayloadChecker.describe(v))",
                        at: base + p.description))
            }
            return .success(.literal(Int(n)))
        }
        switch action {
        case .increment(let a): return amount(a, min: Int64(Int32.min)).map { .increment($0) }
        case .set(let a): return amount(a, min: 0).map { .set($0) }
        default: return .success(action)
        }
    }
}

extension Diagnostic: Error {}
