/// A fault in a rules file: which file, where in it (JSON Pointer), and why.
public struct RulesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path, or `<built-in>` / `<string>`.
    public let file: String
    /// RFC 6901 pointer of the faulty value, e.g. `/rules/0/action`.
    public let at: String
    /// What is wrong and what is expected instead.
    public let message: String

    /// Creates a rules-file error.
    ///
    /// - Parameters:
    ///   - file: the file's path, or `<built-in>` / `<string>`.
    ///   - at: the RFC 6901 pointer of the faulty value (`""` for the whole file).
    ///   - message: what is wrong and what is expected instead.
    public init(file: String, at: String, message: String) {
        self.file = file
        self.at = at
        self.message = message
    }

    /// `rules.json: /rules/0/action: unknown action "bump"; expected one of …`
    public var description: String { "\(file): \(at.isEmpty ? "(document)" : at): \(message)" }
}
