// StreamResult's line as text, decoded from a borrowed buffer of the writer's bytes. Relies
// on the buffer staying valid for the decode (the writer is alive and unchanged meanwhile).

extension StreamResult {
    /// The NDJSON result line, without its newline.
    public var line: String {
        // A result line is a few hundred bytes; the writer grows if one is longer.
        var w = JSONWriter(capacity: 512)
        render(into: &w)
        return w.withUnsafeBytes { bytes in
            String(
                decoding: bytes.last == UInt8(ascii: "\n") ? UnsafeRawBufferPointer(rebasing: bytes.dropLast()) : bytes,
                as: UTF8.self)
        }
    }
}
