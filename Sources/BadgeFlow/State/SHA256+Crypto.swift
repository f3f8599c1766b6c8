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
