/// Why a JSON text could not be parsed, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of parse failure; each maps to a diagnostic code.
    public enum Reason: String, Sendable {
        /// Not JSON: a syntax error, truncated input, or trailing data.
        case invalidJSON = "invalid-json"
        /// Arrays and objects nested deeper than the parser's limit.
        case tooDeep = "too-deep"
        /// A string holds bytes that are not UTF-8.
        case invalidUTF8 = "invalid-utf8"
    }

    /// The class of failure.
    public let reason: Reason
    /// A human sentence naming what went wrong.
    public let message: String
    /// The byte offset in the input where the parser stopped.
    public let offset: Int

    /// `MESSAGE (byte N)`.
    public var description: String { "\(message) (byte \(offset))" }
}
