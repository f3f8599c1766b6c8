// LineAnalyzer's work on a line in raw memory: the line read from a borrowed buffer (parsed
// by json-c, its envelope's op named by its bytes, its payload measured and cut). Relies on the
// buffer staying valid for the whole analysis: every JSONRef and byte range taken from it is
// used before analyze returns.

extension LineAnalyzer {
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

    func envelope(_ root: JSONRef, line: UnsafeRawBufferPointer) -> LineResult {
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
}
