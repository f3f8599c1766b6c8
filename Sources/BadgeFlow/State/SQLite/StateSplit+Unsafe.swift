// StateSplit's comparison of raw bytes: two SQLite blobs (ids) ordered in place, for the
// merge of parts. Relies on both buffers staying valid for the call (each cursor's row is
// not stepped meanwhile).

extension StateSplit {
    /// Whether the bytes of `a` sort before those of `b` (SQLite's order of BLOBs).
    @inline(__always)
    static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.lexicographicallyPrecedes(b)
    }
}
