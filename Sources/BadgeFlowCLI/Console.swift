import BadgeFlow

/// Buffered writes to stdout and plain writes to stderr, through write(2).
enum Console {
    /// True when `fd` is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool { System.isTerminal(fd) }

    /// Whether output to `fd` is coloured when neither `--color` nor `--no-color` is given:
    /// when it is a terminal and `NO_COLOR` is unset or empty (https://no-color.org).
    static func colorByDefault(_ fd: Int32) -> Bool {
        if System.environmentHasValue("NO_COLOR") { return false }
        return isTerminal(fd)
    }

    /// Writes text to stdout.
    static func out(_ text: String) { write(Array(text.utf8), to: 1) }

    /// Writes one line to stderr.
    static func error(_ text: String) { write(Array((text.hasSuffix("\n") ? text : text + "\n").utf8), to: 2) }
}
