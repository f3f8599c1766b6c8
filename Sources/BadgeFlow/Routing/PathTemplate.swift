/// A badge path with `{pointer}` holes filled from the payload: `root.chat.{/aps/thread-id}`.
///
/// String values are escaped with `BadgePath.escapeSegment` so they stay inside their
/// segment; integers are written in decimal.
public struct PathTemplate: Sendable, CustomStringConvertible {
    enum Part: Sendable {
        case literal(String)
        case pointer(JSONPointer)
    }

    struct TemplateError: Error { let reason: String }

    let parts: [Part]
    /// The template text as written in the rules file.
    public let description: String

    /// Compiles template text; returns a reason when a `{` is unclosed or holds no pointer.
    static func compile(_ text: String) -> Result<PathTemplate, TemplateError> {
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else {
                return .failure(TemplateError(reason: "\"{\" without a closing \"}\""))
            }
            let inner = String(rest[rest.index(after: open)..<close])
            guard !inner.isEmpty, let pointer = JSONPointer(inner) else {
                return .failure(TemplateError(reason: "\"{\(inner)}\" is not a JSON Pointer such as {/aps/thread-id}"))
            }
            if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
            parts.append(.pointer(pointer))
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { parts.append(.literal(literal)) }
        return .success(PathTemplate(parts: parts, description: text))
    }

    /// The result of filling the holes.
    enum Rendered {
        case path(String)
        /// A hole's value is missing: the rule does not match.
        case missing
        /// A hole's value is of the wrong type or empty.
        case invalid(Diagnostic)
    }

    /// Fills the holes from `payload`; `base` is the payload's pointer in the line.
    func render(_ payload: JSONRef, base: String) -> Rendered {
        if parts.count == 1, case .literal(let s) = parts[0] { return .path(s) }
        var out = ""
        for part in parts {
            switch part {
            case .literal(let s):
                out += s
            case .pointer(let p):
                guard let value = payload.resolve(p), !value.isNull else { return .missing }
                switch value.kind {
                case .string:
                    if value.stringByteCount == 0 {
                        return .invalid(.error(.invalidPath, "path template \(description): {\(p)} is an empty string",
                                               at: base + p.description))
                    }
                    out += BadgePath.escapeSegment(value.string ?? "")
                case .int where !value.intOverflowed:
                    out += String(value.int ?? 0)
                default:
                    return .invalid(.error(.wrongType,
                                           "path template \(description): {\(p)} must be a string or an integer, got \(PayloadChecker.describe(value))",
                                           at: base + p.description))
                }
            }
        }
        return .path(out)
    }

    /// The template with every hole replaced by `x`, to check its shape at load.
    var sample: String {
        parts.map { part -> String in
            if case .literal(let s) = part { return s }
            return "x"
        }.joined()
    }
}
