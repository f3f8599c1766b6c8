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

    /// The 1-based line and column of `offset` in `text`, the text that was parsed: lines
    /// end at `\n`, and the column counts characters (Unicode scalars), as editors do.
    public func location(in text: String) -> (line: Int, column: Int) {
        var line = 1, column = 1, i = 0
        for byte in text.utf8 {
            if i >= offset { break }
            i += 1
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// `unexpected end of input at line 3, column 7 (byte 41)`, for a message about `text`.
    public func located(in text: String) -> String {
        let (line, column) = location(in: text)
        return "\(message) at line \(line), column \(column) (byte \(offset))"
    }
}
