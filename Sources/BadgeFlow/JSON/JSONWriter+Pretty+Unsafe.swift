// JSONWriter's pretty layout of compact text read from a borrowed buffer. Relies on the
// buffer staying valid for the call; every index stays below its count.

extension JSONWriter {
    /// Appends to `out` `compact`, JSON text as this writer writes it (no whitespace outside strings),
    /// laid out as json-c's pretty, spaced form lays out a value nested `level` deep: each
    /// member and element on a line of its own, indented two spaces a level, `": "` after
    /// keys, and an empty object or array as `{`, a newline and the closing bracket at the
    /// container's own indent. Strings and numbers are copied byte for byte (json-c's
    /// escapes are the writer's).
    ///
    /// This is how a JSON state file is written an account at a time, with the bytes json-c
    /// gives for the whole document.
    static func appendPretty(_ compact: UnsafeRawBufferPointer, level: Int, to out: inout [UInt8]) {
        var depth = level
        var i = 0
        let n = compact.count
        func newline(_ depth: Int) {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: 2 * depth))
        }
        while i < n {
            let b = compact[i]
            switch b {
            case 0x22:
                // A string, copied up to its closing quote (escapes and all).
                let start = i
                i += 1
                while i < n, compact[i] != 0x22 { i += compact[i] == 0x5C ? 2 : 1 }
                i = min(i + 1, n)
                out.append(contentsOf: compact[start..<i])
                continue
            case 0x7B, 0x5B:
                out.append(b)
                if i + 1 < n, compact[i + 1] == b + 2 {
                    // `{}` or `[]`: json-c writes the newline and the closing bracket's indent.
                    newline(depth)
                    out.append(b + 2)
                    i += 2
                    continue
                }
                depth += 1
                newline(depth)
            case 0x7D, 0x5D:
                depth -= 1
                newline(depth)
                out.append(b)
            case 0x2C:
                out.append(b)
                newline(depth)
            case 0x3A:
                out.append(b)
                out.append(0x20)
            default:
                out.append(b)
            }
            i += 1
        }
    }

    /// ``appendPretty(_:level:to:)`` of what `compact` has written.
    static func appendPretty(_ compact: JSONWriter, level: Int, to out: inout [UInt8]) {
        compact.withUnsafeBytes { appendPretty($0, level: level, to: &out) }
    }
}
