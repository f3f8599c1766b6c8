#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cheap proof that a text json-c accepted holds no duplicate key, no non-finite number
/// and no single-quoted string, so that the byte scan (``JSONScanner/firstProblem(_:)``) runs
/// only on the few texts it cannot clear.
///
/// What json-c's tree shows: its objects' members (one per key: a repeated key replaces the
/// earlier value, which drops out of the tree with every string under it), its string values,
/// and whether any number is not finite (`NaN`, `Infinity`, `-Infinity`). What the text shows,
/// in one counting loop over its bytes: its `"` bytes, its `:` bytes, and whether it holds a
/// `\` or a `'`.
///
/// A text is cleared when json-c read no non-finite number, the text holds no `'` (so every
/// string is double-quoted) and either
/// - it holds no `\`: then no string holds a `"`, so the `"` bytes are exactly twice the
///   strings written; the strings written are at least the tree's members plus string values,
///   and equal them only when no key repeats (a colon inside a string does not matter); or
/// - it holds a `\`: then the `:` bytes are at least the keys written, which are at least the
///   tree's members, and a text with as many `:` as members cannot repeat a key.
enum JSONTextPrecheck {
    /// What a json-c tree holds, for the precheck.
    struct Tally: Equatable {
        /// Members of all objects (keys json-c kept).
        var members = 0
        /// String values (not keys).
        var strings = 0
        /// A number json-c read is not finite.
        var nonFinite = false
    }

    /// What a text holds, for the precheck.
    struct Bytes: Equatable {
        /// `"` bytes.
        var quotes = 0
        /// `:` bytes.
        var colons = 0
        /// A `\` is present.
        var backslash = false
        /// A `'` is present.
        var apostrophe = false
    }

    /// True when `bytes`, a text json-c parsed into `root`, provably holds no duplicate key,
    /// non-finite number or single-quoted string; false when the byte scan must decide.
    static func clears(_ bytes: UnsafeRawBufferPointer, root: JSONRef) -> Bool {
        var tree = Tally()
        root.tally(into: &tree)
        return clears(count(bytes), tree)
    }

    /// The decision itself (see the type's documentation).
    static func clears(_ text: Bytes, _ tree: Tally) -> Bool {
        if tree.nonFinite || text.apostrophe { return false }
        if text.backslash { return text.colons == tree.members }
        return text.quotes == 2 * (tree.members + tree.strings)
    }

    /// Counts `"` and `:` and notes `\` and `'` in one branch-free loop (LLVM vectorises it).
    static func count(_ bytes: UnsafeRawBufferPointer) -> Bytes {
        var quotes: UInt32 = 0
        var colons: UInt32 = 0
        var odd: UInt32 = 0
        var start = 0
        let n = bytes.count
        var text = Bytes()
        // 32-bit lanes vectorise better than 64-bit ones; flush them every 1 GiB.
        while start < n {
            let end = min(n, start + (1 << 30))
            quotes = 0
            colons = 0
            var i = start
            while i < end {
                let b = bytes[i]
                quotes &+= b == 0x22 ? 1 : 0
                colons &+= b == 0x3A ? 1 : 0
                odd |= b == 0x5C ? 1 : 0
                odd |= b == 0x27 ? 2 : 0
                i &+= 1
            }
            text.quotes += Int(quotes)
            text.colons += Int(colons)
            start = end
        }
        text.backslash = odd & 1 != 0
        text.apostrophe = odd & 2 != 0
        return text
    }
}

extension JSONScanner {
    /// The first duplicate key, non-finite number or single-quoted string in `bytes`, whose
    /// json-c tree is `root`; nil when there is none. ``JSONTextPrecheck`` clears the usual
    /// text without the byte scan.
    static func firstProblem(_ bytes: UnsafeRawBufferPointer, root: JSONRef) -> JSONTextProblem? {
        if JSONTextPrecheck.clears(bytes, root: root) { return nil }
        return firstProblem(bytes)
    }
}
