/// Recognises a compressed INPUT by the magic bytes at its start, so `filter` can say so
/// instead of answering every line of it with an error line (``FilterRun``).
package enum CompressedInput {
    /// A compression format `filter` recognises, and the command that decompresses it.
    package struct Format: Equatable, Sendable {
        /// The format's name: `gzip`, `zstd`, `bzip2`, `xz`.
        package let name: String
        /// The command that writes the decompressed bytes to stdout: `zcat`, `zstdcat`, ….
        package let tool: String
    }

    /// The format whose magic `prefix` (the first bytes of a file, up to 6) starts with; nil
    /// when it is none of gzip, zstd, bzip2 and xz. NDJSON text never starts with any of these:
    /// each holds a byte that is not valid at the start of a UTF-8 JSON text, or (bzip2's
    /// `BZh` and a digit) is not JSON.
    package static func format(ofPrefix prefix: some Collection<UInt8>) -> Format? {
        let b = Array(prefix.prefix(6))
        func starts(_ magic: [UInt8]) -> Bool { b.count >= magic.count && Array(b[0..<magic.count]) == magic }
        if starts([0x1F, 0x8B]) { return Format(name: "gzip", tool: "zcat") }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return Format(name: "zstd", tool: "zstdcat") }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return Format(name: "xz", tool: "xzcat") }
        if starts([0x42, 0x5A, 0x68]), b.count >= 4, (0x31...0x39).contains(b[3]) {
            return Format(name: "bzip2", tool: "bzcat")
        }
        return nil
    }

    /// The format of the file open at `fd`, read with `pread` at offset 0 (the file offset
    /// does not move); nil when it is not compressed or cannot be read that way (a pipe: its
    /// bytes could not be read twice).
    package static func format(ofFileAt fd: Int32) -> Format? {
        let prefix = readPrefix(fd, count: 6)
        guard !prefix.isEmpty else { return nil }
        return format(ofPrefix: prefix)
    }

    /// What `filter` prints for `name` (an INPUT, or `<stdin>`) in `format`.
    package static func message(_ name: String, _ format: Format) -> String {
        "badgeflow: \(name): \(reason(format))"
    }

    /// Why an input in `format` is refused: `gzip-compressed input; pipe it through zcat`.
    package static func reason(_ format: Format) -> String {
        "\(format.name)\(marker)\(format.tool)"
    }

    /// What every ``reason(_:)`` holds.
    private static let marker = "-compressed input; pipe it through "

    /// Whether `message` (an input's error) says it is compressed: such an input is an I/O
    /// error (exit 4) in `batch` too.
    package static func isReason(_ message: String) -> Bool { message.contains(marker) }
}
