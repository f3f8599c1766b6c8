/// The `N<TAB>` prefix of a numbered input line (`badgeflow filter --numbered`).
///
/// A partitioned run numbers the lines of its input once, in input order, then splits them
/// by account; each part is filtered with `--numbered`, so every result carries the number
/// the line had in the whole input, and the parts' results merged by `seq` are the lines one
/// run over the whole input writes.
///
/// ```swift
/// let text = "42\t{\"op\":\"tick\"}"
/// // LineNumber.split(bytes) == (42, the bytes of {"op":"tick"})
/// ```
public enum LineNumber {
    /// The most digits a number may have: 19 digits hold every value up to `Int.max`.
    public static let maxDigits = 19
    /// The longest prefix: `maxDigits` digits and the tab.
    public static let maxPrefixBytes = maxDigits + 1

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

    /// The error a non-blank line without a valid prefix gets (code `invalid-line-number`).
    public static let invalid = Diagnostic.error(
        .invalidLineNumber,
        "under --numbered a line must start with its line number (a positive decimal integer) and a tab",
        at: "")

    /// Whether `line` holds only JSON whitespace (a blank line, which yields no result).
    public static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        PayloadValidator.trimmedCount(line) == 0
    }
}
