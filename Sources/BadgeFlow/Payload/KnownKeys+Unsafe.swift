// KnownKeys' lookup on raw bytes: a key name compared with the known names of its length
// a word at a time. Relies on `byLength` bounding each length's run of `names`, and each
// name's `start` and length lying inside `bytes`, as `init` lays them out.

extension KnownKeys {
    /// The key whose name is exactly `name`, if any.
    ///
    /// - Complexity: O(number of known names of `name`'s length), comparing bytes only on a
    ///   first-byte match.
    @inline(__always)
    func identify(_ name: UnsafeBufferPointer<UInt8>) -> Key? {
        guard let first = name.first, let nameBase = name.baseAddress else { return nil }
        let n = name.count
        let found: Int? = byLength.withUnsafeBufferPointer { byLength -> Int? in
            guard n + 1 < byLength.count else { return nil }
            let range = byLength[n]..<byLength[n + 1]
            if range.isEmpty { return nil }
            return bytes.withUnsafeBufferPointer { bytes -> Int? in
                guard let bytesBase = bytes.baseAddress else { return nil }
                return names.withUnsafeBufferPointer { names -> Int? in
                    for i in range where names[i].first == first {
                        if Self.same(UnsafeRawPointer(bytesBase + names[i].start), UnsafeRawPointer(nameBase), n) {
                            return i
                        }
                    }
                    return nil
                }
            }
        }
        return found.map { keys[$0] }
    }

    /// Whether the `n` bytes at `a` and `b` are equal; reads no byte outside them.
    @inline(__always)
    private static func same(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                    return false
                }
                i += 8
            }
            // The last few bytes as one word ending at the last byte (it overlaps bytes
            // already compared, which are equal).
            return i == n
                || a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                    == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        }
        if n >= 4 {
            return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
                && a.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
                    == b.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        }
        for i in 0..<n where a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) {
            return false
        }
        return true
    }
}
