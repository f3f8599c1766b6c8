// IDIndex's work on raw memory: the buckets zeroed in place. Relies on nothing but the
// array's own bounds (the buffer is the whole array, written while it is uniquely held).

extension IDIndex {
    /// Sets every bucket to 0 (empty), keeping the storage.
    @inline(__always)
    mutating func zeroBuckets() {
        buckets.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    }
}
