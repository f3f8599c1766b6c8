/// One problem found in an input: a stable code, a message for people, and where it is.
///
/// Errors make the input unusable; warnings do not. `at` is an RFC 6901 JSON Pointer into
/// the line or file the problem was found in (`""` for the whole document).
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How bad a problem is.
    public enum Severity: String, Sendable {
        /// The input is unusable: a payload is invalid, an event line gets an error line.
        case error
        /// Worth fixing, but the input is still used; result lines list these in `warnings`.
        case warning
    }

    /// A stable kebab-case identifier of a kind of problem; scripts match on it.
    ///
    /// New codes can be added without breaking code that switches on known ones.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's text, such as `"wrong-type"`.
        public let rawValue: String
        /// Wraps a code's text; the known codes are the static members below.
        ///
        /// - Parameter rawValue: the kebab-case code text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's text.
        public var description: String { rawValue }

        // Payload errors (see <doc:PayloadValidation>).
        /// `invalid-json`: not JSON (a syntax error, truncated input, or data after the value).
        public static let invalidJSON = Code(rawValue: "invalid-json")
        /// `not-an-object`: the payload or event line is JSON but not an object.
        public static let notAnObject = Code(rawValue: "not-an-object")
        /// `missing-aps`: the payload has no `aps` key.
        public static let missingAps = Code(rawValue: "missing-aps")
        /// `aps-not-an-object`: `aps` is present but not an object.
        public static let apsNotAnObject = Code(rawValue: "aps-not-an-object")
        /// `wrong-type`: a value has the wrong JSON type, such as `"badge": "99+"`.
        public static let wrongType = Code(rawValue: "wrong-type")
        /// `out-of-range`: a number outside its range, such as a negative badge.
        public static let outOfRange = Code(rawValue: "out-of-range")
        /// `invalid-value`: a string outside its allowed set, such as an unknown `interruption-level`.
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// `payload-too-large`: more bytes than APNs accepts (4096, or 5120 for VoIP).
        public static let payloadTooLarge = Code(rawValue: "payload-too-large")
        /// `too-deep`: arrays and objects nested deeper than 32 levels.
        public static let tooDeep = Code(rawValue: "too-deep")
        /// `invalid-utf8`: bytes that are not well-formed UTF-8 (RFC 3629).
        public static let invalidUTF8 = Code(rawValue: "invalid-utf8")
        /// `missing-key`: a key a Live Activity event requires is absent (`timestamp`; `content-state`
        /// for `update`; `content-state`, `attributes-type`, `attributes` and `alert` for `start`).
        public static let missingKey = Code(rawValue: "missing-key")
        /// `duplicate-key`: an object repeats a key (at the second one); json-c keeps the last
        /// value and APNs servers differ in which they read.
        public static let duplicateKey = Code(rawValue: "duplicate-key")
        /// `date-in-milliseconds`: a `stale-date` or `dismissal-date` past 10^11, milliseconds
        /// where APNs wants UNIX seconds.
        public static let dateInMilliseconds = Code(rawValue: "date-in-milliseconds")
        // Payload warnings.
        /// `loc-args-without-loc-key` (warning): `loc-args` (or `title-loc-args`,
        /// `subtitle-loc-args`) without the format key it fills.
        public static let locArgsWithoutLocKey = Code(rawValue: "loc-args-without-loc-key")
        /// `content-available-zero` (warning): `content-available: 0`, which APNs does not read
        /// as "not silent"; the key should be left out.
        public static let contentAvailableZero = Code(rawValue: "content-available-zero")
        /// `timestamp-in-milliseconds` (warning): a Live Activity `timestamp` past 10^11, which
        /// reads as milliseconds where APNs wants UNIX seconds.
        public static let timestampInMilliseconds = Code(rawValue: "timestamp-in-milliseconds")
        /// `push-type-mismatch` (warning): the payload does not fit its push type (`background`
        /// with an alert, sound or badge; `alert` with none; `liveactivity` without `event`; Live
        /// Activity keys under another type).
        public static let pushTypeMismatch = Code(rawValue: "push-type-mismatch")
        /// `unknown-aps-key` (warning): a key inside `aps`, `alert` or `sound` that APNs does not define.
        public static let unknownApsKey = Code(rawValue: "unknown-aps-key")
        /// `empty-alert` (warning): an alert that would show no text.
        public static let emptyAlert = Code(rawValue: "empty-alert")
        /// `silent-with-alert` (warning): `content-available` together with alert, badge or sound.
        public static let silentWithAlert = Code(rawValue: "silent-with-alert")
        // Tree and stream errors.
        /// `invalid-path`: a path that breaks the path rules, or a template value that is an empty string.
        public static let invalidPath = Code(rawValue: "invalid-path")
        /// `unknown-op`: an event line whose `op` is not one of the known operations.
        public static let unknownOp = Code(rawValue: "unknown-op")
        /// `missing-field`: a required field is absent (`op`, `payload`, `path`, `page`, a rule's amount).
        public static let missingField = Code(rawValue: "missing-field")
        /// `line-too-long`: a line longer than the filter's `--max-line-bytes`; it was skipped unread.
        public static let lineTooLong = Code(rawValue: "line-too-long")
        /// `invalid-time`: an `at` that is neither UNIX seconds nor RFC 3339 text.
        public static let invalidTime = Code(rawValue: "invalid-time")
        /// A line read with `filter --numbered` that does not start with `N<TAB>`.
        public static let invalidLineNumber = Code(rawValue: "invalid-line-number")
    }

    /// Whether the problem makes the input unusable.
    public let severity: Severity
    /// The stable code scripts match on.
    public let code: Code
    /// A sentence for people; its wording may change between releases.
    public let message: String
    /// RFC 6901 JSON Pointer of the offending value.
    public let at: String

    /// Creates a diagnostic.
    ///
    /// - Parameters:
    ///   - severity: error or warning.
    ///   - code: the stable code.
    ///   - message: the sentence for people.
    ///   - at: the RFC 6901 JSON Pointer of the offending value (`""` for the whole input).
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
