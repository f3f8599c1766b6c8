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
                // What json-c takes but JSON does not: a repeated key, NaN, single quotes.
                if let problem = JSONScanner.firstProblem(line, root: root) { return .rejected(problem.diagnostic) }
                if let aps = root[HashedKey.aps] {
                    return push(
                        root, aps: aps, size: size, measured: true, text: line, base: "", pushType: nil, line: line,
                        Event(op: .push))
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
            // The ops each op's definition says the message names (`Ops/`), in declaration order.
            let ops = Event.Op.namedWhenUnknown.map(\.rawValue).joined(separator: ", ")
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
        // The op's own fields, read by its definition (`Ops/`).
        return op.read(root, line: line, by: self, event)
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
    static func refusedTreePath(_ path: String, root treeRoot: String) -> Diagnostic? {
        do { try BadgePath.validate(path) } catch {
            return .error(.invalidPath, error.description, at: "/path")
        }
        guard path == treeRoot || path.hasPrefix(treeRoot + ".") else {
            return .error(.invalidPath, "invalid path \"\(path)\": a path must start with the root \"\(treeRoot)\"", at: "/path")
        }
        return nil
    }

    func pathField(_ root: JSONRef, into event: inout Event) -> String? {
        guard let p = root[HashedKey.path], p.kind == .string else { return nil }
        return p.string
    }

    func rejectedPath(_ root: JSONRef) -> LineResult {
        guard let p = root[HashedKey.path] else {
            return .rejected(.error(.missingField, "this op needs a \"path\" such as \"root.chat.alice\"", at: "/path"))
        }
        return .rejected(.error(.wrongType, "path must be a string, got \(PayloadChecker.describe(p))", at: "/path"))
    }

    /// Validates and routes a payload, completing `event` (taken, not copied: the result
    /// moves it into the `LineResult`). `aps` is the payload's `aps` member, looked up once
    /// for the checker and the routing.
    @inline(__always)
    func push(
        _ payload: JSONRef, aps: JSONRef?, size: Int, measured: Bool, text: UnsafeRawBufferPointer?, base: String,
        pushType: String?, line: UnsafeRawBufferPointer, _ event: consuming Event
    ) -> LineResult {
        let report = PayloadChecker.check(
            payload, aps: aps, byteCount: size, measured: measured, text: text, pushType: pushType, base: base)
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
