// JSONTextPrecheck's work on raw bytes: quotes counted and escapes found (memchr) in a
// borrowed buffer of the text. Relies on every pointer found lying inside the buffer, whose
// base and count bound each search.

/// The cheap proof that a text json-c accepted holds no duplicate key, no non-finite number
/// and no single-quoted string, so that the byte scan (``JSONScanner/firstProblem(_:)``) runs
/// only on the few texts it cannot clear.
///
/// What json-c's tree shows: its objects' members (one per key: a repeated key replaces the
/// earlier value, which drops out of the tree with every string under it), its string values,
/// and whether any number is not finite (`NaN`, `Infinity`, `-Infinity`). What the text shows:
/// its `"` bytes (one counting loop, which LLVM vectorises), less those escaped by an odd run
/// of `\` (found by `memchr`, a few a line), and whether a `'` could open a single-quoted
/// string (a `'` whose previous byte other than white space is `{`, `[`, `,` or `:`, or none).
///
/// A text is cleared when json-c read no non-finite number, no `'` could open a string, and
/// its unescaped `"` bytes are twice the tree's members plus string values. With every string
/// double-quoted, those bytes are exactly twice the strings written, which are at least the
/// tree's members plus string values, and equal them only when no key repeats. Colons inside
/// strings, escapes and apostrophes in prose do not matter. A text it does not clear (a
/// repeated key, a `NaN`, a `'` after a comma, a comment holding a `"`) goes to the scan.
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
        /// `"` bytes not escaped by a `\`.
        var quotes = 0
        /// A `'` could open a single-quoted string.
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
        !tree.nonFinite && !text.apostrophe && text.quotes == 2 * (tree.members + tree.strings)
    }

    /// Counts the unescaped `"` bytes and notes a `'` that could open a string.
    static func count(_ bytes: UnsafeRawBufferPointer) -> Bytes {
        guard let base = bytes.baseAddress else { return Bytes() }
        let n = bytes.count
        var text = Bytes(quotes: quotes(bytes), apostrophe: false)
        // Escaped quotes: a `"` right after an odd run of backslashes.
        var k = 0
        while k < n, let hit = System.memchr(base + k, 0x5C, n - k) {
            var end = base.distance(to: UnsafeRawPointer(hit))
            let start = end
            while end < n && bytes[end] == 0x5C { end += 1 }
            if (end - start) & 1 == 1 {
                if end < n && bytes[end] == 0x22 { text.quotes -= 1 }
                end += 1  // the escaped byte
            }
            k = end
        }
        // A `'` that could open a string: after `{`, `[`, `,`, `:` or nothing but white space.
        k = 0
        while k < n, let hit = System.memchr(base + k, 0x27, n - k) {
            var j = base.distance(to: UnsafeRawPointer(hit))
            k = j + 1
            var opens = true  // nothing but white space before it
            while j > 0 {
                j -= 1
                let b = bytes[j]
                if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { continue }
                opens = b == 0x7B || b == 0x5B || b == 0x2C || b == 0x3A
                break
            }
            text.apostrophe = opens
            if text.apostrophe { break }
        }
        return text
    }

    /// The `"` bytes in `bytes`, counted in 8-bit lanes over blocks of 255 bytes (so no lane
    /// overflows), which LLVM vectorises 16 bytes at a time.
    private static func quotes(_ bytes: UnsafeRawBufferPointer) -> Int {
        let n = bytes.count
        var total = 0
        var i = 0
        while i < n {
            let end = min(n, i + 255)
            var lane: UInt8 = 0
            while i < end {
                lane &+= bytes[i] == 0x22 ? 1 : 0
                i &+= 1
            }
            total += Int(lane)
        }
        return total
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
