// BadgeTree's work on raw bytes: the root check of a path.

extension BadgeTree {
    /// Whether `path`'s first segment is `segment`: the bytes are equal, or `path` goes on
    /// with a dot after them.
    @inline(__always)
    static func startsWithSegment(_ path: UnsafeBufferPointer<UInt8>, _ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        guard path.count >= segment.count else { return false }
        for k in segment.indices where path[k] != segment[k] { return false }
        return path.count == segment.count || path[segment.count] == UInt8(ascii: ".")
    }

    /// Same, for a path or root that is not stored contiguously.
    static func startsWithSegment(_ path: [UInt8], _ segment: [UInt8]) -> Bool {
        path.withUnsafeBufferPointer { p in segment.withUnsafeBufferPointer { r in startsWithSegment(p, r) } }
    }
}
