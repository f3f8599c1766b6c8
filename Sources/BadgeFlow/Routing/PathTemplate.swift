/// A badge path with `{pointer}` holes filled from the payload: `root.chat.{/aps/thread-id}`.
///
/// String values are escaped with `BadgePath.escapeSegment` so they stay inside their
/// segment; integers are written in decimal.
public struct PathTemplate: Sendable, CustomStringConvertible {
    enum Part: Sendable {
        case literal(String)
        /// A hole: its pointer, and the pointer's index in the rule set's table (-1 until compiled into one).
        case pointer(JSONPointer, slot: Int)
    }

    struct TemplateError: Error { let reason: String }

    let parts: [Part]
    /// The template text as written in the rules file.
    public let description: String
    /// `parts` in a form read without retaining anything, for the fast rendering path.
    let program: Program

    init(parts: [Part], description: String) {
        self.parts = parts
        self.description = description
        program = Program(parts)
    }

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
            parts.append(.pointer(pointer, slot: -1))
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { parts.append(.literal(literal)) }
        return .success(PathTemplate(parts: parts, description: text))
    }

    /// The template with each hole's pointer numbered by `slot(pointer)`.
    func withSlots(_ slot: (JSONPointer) -> Int) -> PathTemplate {
        PathTemplate(
            parts: parts.map { part in
                if case .pointer(let p, _) = part { return .pointer(p, slot: slot(p)) }
                return part
            }, description: description)
    }

    /// The result of filling the holes.
    enum Rendered {
        case path(String)
        /// A hole's value is missing: the rule does not match.
        case missing
        /// A hole's value is of the wrong type or empty.
        case invalid(Diagnostic)
    }

    /// The general path: builds the String piece by piece and reports problems.
    func renderSlow(_ payload: Selected, base: String) -> Rendered {
        fill(payload, base: base, token: false)
    }

    /// Fills the holes as plain text, without escaping: a rule's `once` token, which is
    /// compared with the tokens `set` envelopes carry, never used as a path.
    func renderToken(_ payload: Selected, base: String) -> Rendered {
        fill(payload, base: base, token: true)
    }

    /// Fills the holes: path segments escaped and an empty string `invalid-path` (a path), or
    /// values taken as they are and an empty string `wrong-type` (a `once` token).
    private func fill(_ payload: Selected, base: String, token: Bool) -> Rendered {
        var out = ""
        for part in parts {
            switch part {
            case .literal(let s):
                out += s
            case .pointer(let p, let slot):
                guard let value = payload.value(slot), !value.isNull else { return .missing }
                switch value.kind {
                case .string where !token || value.stringByteCount > 0:
                    if value.stringByteCount == 0 {
                        return .invalid(
                            .error(
                                .invalidPath, "path template \(description): {\(p)} is an empty string",
                                at: base + p.description))
                    }
                    out += token ? value.string ?? "" : BadgePath.escapeSegment(value.string ?? "")
                case .int where !value.intOverflowed:
                    out += String(value.int ?? 0)
                default:
                    let what =
                        token
                        ? "once token \(description): {\(p)} must be a non-empty string or an integer"
                        : "path template \(description): {\(p)} must be a string or an integer"
                    return .invalid(
                        .error(.wrongType, "\(what), got \(PayloadChecker.describe(value))", at: base + p.description))
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
