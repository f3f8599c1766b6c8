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

    /// Writes all of `bytes` to `fd`; returns false on a write error (e.g. a closed pipe).
    @discardableResult
    static func write(_ bytes: [UInt8], to fd: Int32 = 1) -> Bool {
        bytes.withUnsafeBytes { write($0, to: fd) }
    }

    /// Writes all of `buf` to `fd`; returns false on a write error (e.g. a closed pipe).
    @discardableResult
    static func write(_ buf: UnsafeRawBufferPointer, to fd: Int32 = 1) -> Bool {
        var done = 0
        while done < buf.count {
            guard let base = buf.baseAddress else { return true }
            let n = retryingOnEINTR { System.write(fd, base + done, buf.count - done) }
            if n < 0 { return false }
            done += n
        }
        return true
    }

    /// Writes text to stdout.
    static func out(_ text: String) { write(Array(text.utf8), to: 1) }

    /// Writes one line to stderr.
    static func error(_ text: String) { write(Array((text.hasSuffix("\n") ? text : text + "\n").utf8), to: 2) }
}
