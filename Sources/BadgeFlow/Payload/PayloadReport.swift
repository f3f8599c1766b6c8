/// The verdict on one payload: its kind, its badge, and every problem found.
public struct PayloadReport: Sendable, Equatable {
    /// The derived kind; nil when the payload has errors.
    public var kind: PayloadKind?
    /// `aps.badge` when present and valid.
    public var badge: Int?
    /// Errors and warnings, in the order they were found.
    public var diagnostics: [Diagnostic]

    /// True when no diagnostic is an error.
    public var isValid: Bool { !diagnostics.contains { $0.severity == .error } }

    /// The first error, if any.
    public var firstError: Diagnostic? { diagnostics.first { $0.severity == .error } }

    /// The warnings only.
    public var warnings: [Diagnostic] { diagnostics.filter { $0.severity == .warning } }

    /// Creates a report; ``PayloadValidator`` makes these.
    ///
    /// - Parameters:
    ///   - kind: the derived kind, nil when the payload has errors.
    ///   - badge: `aps.badge` when present and valid.
    ///   - diagnostics: errors and warnings, in the order found.
    public init(kind: PayloadKind?, badge: Int?, diagnostics: [Diagnostic]) {
        self.kind = kind
        self.badge = badge
        self.diagnostics = diagnostics
    }
}
