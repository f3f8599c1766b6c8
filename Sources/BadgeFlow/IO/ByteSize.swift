/// A size in bytes as a command line gives it: digits, optionally followed by `K`, `M` or
/// `G` (powers of 1024, as `sort -S` and `ulimit` read them; case-insensitive, an optional
/// `B` or `iB` after it).
package enum ByteSize {
    /// The bytes `text` names; nil when it is not such a size or does not fit an `Int`.
    package static func parse(_ text: String) -> Int? {
        var digits = Substring(text)
        var unit = ""
        while let last = digits.last, !last.isNumber {
            unit = String(last).uppercased() + unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(digits) else { return nil }
        let shift: Int
        switch unit {
        case "", "B": shift = 0
        case "K", "KB", "KIB": shift = 10
        case "M", "MB", "MIB": shift = 20
        case "G", "GB", "GIB": shift = 30
        default: return nil
        }
        guard n <= Int.max >> shift else { return nil }
        return n << shift
    }
}
