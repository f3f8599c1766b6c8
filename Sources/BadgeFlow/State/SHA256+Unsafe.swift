// SHA-256 over raw memory: the portable code reads 64-byte blocks of a borrowed buffer, and
// on Linux libcrypto's one-shot SHA256 reads the buffer through its base address. Relies on
// each block lying inside the buffer (whole blocks only; the rest waits in `pending`) and on
// the buffer staying valid for the call.

// Linux only: the manifest links libcrypto there (an Apple platform has no libcrypto to link).
#if os(Linux) && canImport(CCrypto)
import CCrypto
#endif

extension SHA256 {
    /// The SHA-256 of `bytes`, in lowercase hex.
    ///
    /// Where BadgeFlow links libcrypto (Linux), its one-shot `SHA256`, which uses the CPU's
    /// SHA extensions when it has them (~1.5 GB/s on an x86-64 with SHA-NI, ~20 times this
    /// type's own code); elsewhere this type's portable code. `InputDigestTests` checks that
    /// both give the standard's digests and agree on random inputs.
    package static func hex(of bytes: UnsafeRawBufferPointer) -> String {
        #if os(Linux) && canImport(CCrypto)
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { out in
            // An empty input has no base address; libcrypto reads no byte of it.
            let empty: [UInt8] = [0]
            empty.withUnsafeBufferPointer { none in
                let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? none.baseAddress
                _ = CCrypto.SHA256(data, bytes.count, out.baseAddress)
            }
        }
        return hexString(digest)
        #else
        return portableHex(of: bytes)
        #endif
    }

    /// The SHA-256 of `bytes` in lowercase hex by this type's portable code (what
    /// ``hex(of:)`` uses where there is no libcrypto; the tests' reference).
    package static func portableHex(of bytes: UnsafeRawBufferPointer) -> String {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finish()
    }

    /// `bytes` as lowercase hex.
    static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension SHA256 {
    /// Adds `bytes`.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var i = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            i = take
            if pending.count == 64 {
                let block = pending
                block.withUnsafeBytes { compress($0) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while bytes.count - i >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: bytes[i..<i + 64]))
            i += 64
        }
        if i < bytes.count { pending.append(contentsOf: bytes[i...]) }
    }

    /// Adds `bytes`.
    package mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest, in lowercase hex.
    package mutating func finish() -> String {
        let bits = length &* 8
        var tail: [UInt8] = [0x80]
        while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        let saved = length
        tail.withUnsafeBytes { update($0) }
        length = saved
        var bytes: [UInt8] = []
        for word in h {
            for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return Self.hexString(bytes)
    }

    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        @inline(__always) func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        for t in 0..<16 {
            w[t] =
                UInt32(block[t * 4]) << 24 | UInt32(block[t * 4 + 1]) << 16 | UInt32(block[t * 4 + 2]) << 8 | UInt32(block[t * 4 + 3])
        }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7]
        for t in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ ch &+ Self.k[t] &+ w[t]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            hh = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
        }
        h[0] &+= a
        h[1] &+= b
        h[2] &+= c
        h[3] &+= d
        h[4] &+= e
        h[5] &+= f
        h[6] &+= g
        h[7] &+= hh
    }
}
