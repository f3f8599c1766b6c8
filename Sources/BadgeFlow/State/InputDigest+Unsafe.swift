// InputDigest's reads into and hashes of raw memory: pread(2) into an array's bytes and
// SHA-256 of a borrowed buffer. Relies on each read's count staying within the array, and
// each buffer staying valid for the call.

extension InputDigest {
    /// The digest of a `size`-byte input whose first and last MiB are `head` and `tail`
    /// (nil: the same bytes as `head`).
    package static func digest(size: Int, head: [UInt8], tail: [UInt8]?) -> String {
        let firstHex = head.withUnsafeBytes { SHA256.hex(of: $0) }
        guard let tail else { return "\(size):\(firstHex):\(firstHex)" }
        return "\(size):\(firstHex):\(tail.withUnsafeBytes { SHA256.hex(of: $0) })"
    }

    static func read(_ fd: Int32, at offset: Int, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { b in
                retryingOnEINTR { System.pread(fd, b.baseAddress.unsafelyUnwrapped + done, count - done, offset + done) }
            }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }
}
