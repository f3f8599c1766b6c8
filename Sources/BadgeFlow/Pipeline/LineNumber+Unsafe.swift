// The `N<TAB>` prefix read in place from a line's borrowed bytes (valid only while the
// reader's callback runs: `LineReader.Line`); nothing here keeps a pointer.

extension LineNumber {
    /// Splits a numbered line into its number and the event text after the tab.
    ///
    /// The prefix is one or more ASCII decimal digits whose value is at least 1 and at most
    /// `Int.max`, then one tab (U+0009). Nothing is allocated; the text is a slice of `line`.
    ///
    /// - Returns: nil when the line does not start with such a prefix.
    @inline(__always)
    public static func split(_ line: UnsafeRawBufferPointer) -> (number: Int, rest: UnsafeRawBufferPointer)? {
        var value = 0
        var i = 0
        let count = line.count
        while i < count {
            let b = line[i]
            if b == 0x09 { break }
            let digit = Int(b) &- 0x30
            guard digit >= 0, digit <= 9, i < maxDigits else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = sum
            i += 1
        }
        // No digits, no tab, or a zero value.
        guard i > 0, i < count, value > 0 else { return nil }
        return (value, UnsafeRawBufferPointer(rebasing: line[(i + 1)...]))
    }

    /// Whether `line` holds only JSON whitespace (a blank line, which yields no result).
    public static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        PayloadValidator.trimmedCount(line) == 0
    }

    /// ``split(_:)`` over the head of an overlong line (`LineReader/overlongHead`): its
    /// number, and how many bytes of the head the prefix takes.
    static func split(head: [UInt8]) -> (number: Int, prefixBytes: Int)? {
        head.withUnsafeBytes { bytes in split(bytes).map { ($0.number, head.count - $0.rest.count) } }
    }
}
