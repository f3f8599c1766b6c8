// StreamedInputDigest's copies from raw memory: each piece read is copied into the first
// MiB kept and the ring of the last MiB (memcpy). Relies on every copy's count being bounded
// by the room left in its target (the head's missing bytes, the ring's end).

extension StreamedInputDigest {
    /// Adds the next `bytes` read.
    package func add(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let end = InputDigest.endBytes
        if head.count < end { head.append(contentsOf: UnsafeRawBufferPointer(start: base, count: min(end - head.count, bytes.count))) }
        size += bytes.count
        // Only the last `end` bytes of this piece can be in the last MiB.
        let keep = min(bytes.count, end)
        let from = base + (bytes.count - keep)
        ring.withUnsafeMutableBytes { r in
            guard let ringBase = r.baseAddress else { return }
            let first = min(keep, end - ringEnd)
            System.memcpy(ringBase + ringEnd, from, first)
            if keep > first { System.memcpy(ringBase, from + first, keep - first) }
        }
        ringEnd = (ringEnd + keep) % end
    }
}
