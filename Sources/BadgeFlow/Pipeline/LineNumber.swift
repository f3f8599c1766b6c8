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

    /// The error a non-blank line without a valid prefix gets (code `invalid-line-number`).
    public static let invalid = Diagnostic.error(
        .invalidLineNumber,
        "under --numbered a line must start with its line number (a positive decimal integer) and a tab",
        at: "")
}
