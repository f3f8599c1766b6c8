/// One problem found in an input: a stable code, a message for people, and where it is.
///
/// Errors make the input unusable; warnings do not. `at` is an RFC 6901 JSON Pointer into
/// the line or file the problem was found in (`""` for the whole document).
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How bad a problem is.
    public enum Severity: String, Sendable {
        case error, warning
    }

    /// A stable kebab-case identifier of a kind of problem; scripts match on it.
    ///
    /// New codes can be added without breaking code that switches on known ones.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Payload errors (SPEC §1).
        public static let invalidJSON = Code(rawValue: "invalid-json")
        public static let notAnObject = Code(rawValue: "not-an-object")
        public static let missingAps = Code(rawValue: "missing-aps")
        public static let apsNotAnObject = Code(rawValue: "aps-not-an-object")
        public static let wrongType = Code(rawValue: "wrong-type")
        public static let outOfRange = Code(rawValue: "out-of-range")
        public static let invalidValue = Code(rawValue: "invalid-value")
        public static let payloadTooLarge = Code(rawValue: "payload-too-large")
        public static let tooDeep = Code(rawValue: "too-deep")
        public static let invalidUTF8 = Code(rawValue: "invalid-utf8")
        // Payload warnings.
        public static let unknownApsKey = Code(rawValue: "unknown-aps-key")
        public static let emptyAlert = Code(rawValue: "empty-alert")
        public static let silentWithAlert = Code(rawValue: "silent-with-alert")
        // Tree and stream errors.
        public static let invalidPath = Code(rawValue: "invalid-path")
        public static let unknownOp = Code(rawValue: "unknown-op")
        public static let missingField = Code(rawValue: "missing-field")
        public static let lineTooLong = Code(rawValue: "line-too-long")
        public static let invalidTime = Code(rawValue: "invalid-time")
        /// A line read with `filter --numbered` that does not start with `N<TAB>`.
        public static let invalidLineNumber = Code(rawValue: "invalid-line-number")
    }

    public let severity: Severity
    public let code: Code
    public let message: String
    /// RFC 6901 JSON Pointer of the offending value.
    public let at: String

    public init(_ severity: Severity, _ code: Code, _ message: String, at: String) {
        self.severity = severity
        self.code = code
        self.message = message
        self.at = at
    }

    static func error(_ code: Code, _ message: String, at: String) -> Diagnostic {
        Diagnostic(.error, code, message, at: at)
    }

    static func warning(_ code: Code, _ message: String, at: String) -> Diagnostic {
        Diagnostic(.warning, code, message, at: at)
    }

    /// `error[wrong-type] /aps/badge: message`, the compiler-style form without a file.
    public var description: String {
        "\(severity.rawValue)[\(code.rawValue)] \(at.isEmpty ? "(document)" : at): \(message)"
    }
}

extension JSONParseError {
    /// The diagnostic a parse failure is reported as.
    public var diagnostic: Diagnostic {
        let code: Diagnostic.Code
        switch reason {
        case .invalidJSON: code = .invalidJSON
        case .tooDeep: code = .tooDeep
        case .invalidUTF8: code = .invalidUTF8
        }
        return .error(code, "\(message) at byte \(offset)", at: "")
    }
}
