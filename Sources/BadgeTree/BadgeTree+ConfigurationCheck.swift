// The checks a tree's settings pass when they are made and when they are read from a file.

/// Why tree settings are refused: which setting, and what is wrong with it.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting: `root`, `maxDisplay`, `display["root.Me"]` or `contribute["chat"]`.
    public let setting: String
    /// What is wrong with it, and what to write instead.
    public let reason: String

    /// Creates an error.
    public init(setting: String, reason: String) {
        self.setting = setting
        self.reason = reason
    }

    /// `SETTING: REASON`.
    public var description: String { "\(setting): \(reason)" }
}

extension BadgeTree.Configuration {
    /// Checks the settings: `root` one path segment, `maxDisplay` 1 or more, every `display`
    /// and `contribute` key a valid path that starts with `root`, custom badge names not empty.
    ///
    /// - Throws: ``ConfigurationError`` for the first setting that is wrong.
    public func validate() throws(ConfigurationError) {
        if (try? BadgePath.validate(root)) == nil || root.utf8.contains(UInt8(ascii: ".")) {
            throw ConfigurationError(setting: "root", reason: "must be one path segment (such as \"root\"), got \"\(root)\"")
        }
        if maxDisplay < 1 {
            throw ConfigurationError(setting: "maxDisplay", reason: "must be 1 or more, got \(maxDisplay)")
        }
        for (path, mode) in display.sorted(by: { $0.key < $1.key }) {
            try check(path, in: "display")
            if case .custom(let name) = mode, name.isEmpty {
                throw ConfigurationError(setting: "display[\"\(path)\"]", reason: "a custom badge needs a non-empty name")
            }
        }
        for path in contribute.keys.sorted() { try check(path, in: "contribute") }
    }

    private func check(_ path: String, in section: String) throws(ConfigurationError) {
        let setting = "\(section)[\"\(path)\"]"
        do {
            try BadgePath.validate(path)
        } catch {
            throw ConfigurationError(setting: setting, reason: error.reason)
        }
        let first = path.split(separator: ".", maxSplits: 1).first.map(String.init) ?? path
        if first != root {
            throw ConfigurationError(setting: setting, reason: "a path must start with the root \"\(root)\", as \"\(root).\(path)\" does")
        }
    }
}
