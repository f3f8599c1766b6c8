import Foundation
import Testing

@testable import BadgeFlow

/// The digest a state records of each input (StateFileFormat), and the records it keeps.
@Suite struct InputDigestTests {
    static func hex(_ bytes: [UInt8]) -> String {
        var h = SHA256()
        h.update(bytes)
        return h.finish()
    }

    /// FIPS 180-2's examples.
    @Test func sha256GivesTheStandardsDigests() {
        #expect(Self.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Self.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Self.hex([UInt8](repeating: 0x61, count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func updatesInPiecesGiveTheWholeDigest() {
        let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var pieces = SHA256()
        var at = 0
        for size in [1, 63, 64, 65, 127, 1000, 3] {
            pieces.update(Array(bytes[at..<at + size]))
            at += size
        }
        pieces.update(Array(bytes[at...]))
        #expect(pieces.finish() == Self.hex(bytes))
    }

    @Test func aDigestIsTheSizeAndTheHashesOfTheFirstAndLastMiB() throws {
        let small = Array("{\"op\":\"tick\"}\n".utf8)
        let digest = InputDigest.digest(size: small.count, head: small, tail: nil)
        #expect(digest == "\(small.count):\(Self.hex(small)):\(Self.hex(small))")
        #expect(InputDigest.isValid(digest))
        #expect(!InputDigest.isValid("12:abc:def"))
        let big = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let expected = "\(big.count):\(Self.hex(Array(big.prefix(1 << 20)))):\(Self.hex(Array(big.suffix(1 << 20))))"
        #expect(InputDigest.digest(size: big.count, head: Array(big.prefix(1 << 20)), tail: Array(big.suffix(1 << 20))) == expected)
    }

    /// The fast path (libcrypto on Linux) is the portable code's twin: the standard's
    /// examples, and random inputs of every length around a block's edges and past a MiB.
    @Test func theFastSHA256AgreesWithThePortableOne() {
        func fast(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { SHA256.hex(of: $0) } }
        #expect(fast([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(fast(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var rng = SystemRandomNumberGenerator()
        let lengths = Array(0...130) + [1000, 4095, 65_536, (1 << 20) - 1, 1 << 20, (1 << 20) + 55]
        for length in lengths {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let portable = bytes.withUnsafeBytes { SHA256.portableHex(of: $0) }
            #expect(fast(bytes) == portable, "length \(length)")
        }
    }

    /// stdin read as a stream, in pieces of any size, gives the digest a file of the same
    /// bytes gives (the last MiB kept in a ring).
    @Test(arguments: [0, 1, 100, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, (2 << 20) + 513, (3 << 20) + 17])
    func aStreamedDigestIsTheFilesDigest(_ size: Int) throws {
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let expected =
            size > InputDigest.endBytes
            ? InputDigest.digest(size: size, head: Array(bytes.prefix(1 << 20)), tail: Array(bytes.suffix(1 << 20)))
            : InputDigest.digest(size: size, head: bytes, tail: nil)
        // Pieces smaller and larger than the ring, and one read of everything.
        for pieces in [[1, 7, 4096], [65_536, 3], [3 << 20], [(1 << 20) + 9, 1]] {
            let streamed = StreamedInputDigest()
            var at = 0, k = 0
            bytes.withUnsafeBytes { all in
                while at < size {
                    let n = min(pieces[k % pieces.count], size - at)
                    streamed.add(UnsafeRawBufferPointer(rebasing: all[at..<at + n]))
                    at += n
                    k += 1
                }
            }
            #expect(streamed.size == size)
            #expect(streamed.finish() == expected, "pieces \(pieces)")
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("digest-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(InputDigest.of(path: path) == expected)
    }

    @Test func recordsKeepTheLast64AndMergeEveryPartsInputs() {
        var records = StateRecords()
        for i in 0..<70 {
            records.add(
                AppliedInput(
                    digest: "d\(i)", name: "day\(i)", firstSeq: 1, lastSeq: 2, at: "2026-12-07T00:00:\(i < 10 ? "0" : "")\(i % 60)Z"))
        }
        #expect(records.inputs.count == 64)
        #expect(records.inputs.first?.digest == "d6" && records.applied("d69")?.name == "day69")
        #expect(records.applied("d0") == nil)
        // Stored as meta entries and read back.
        let back = StateRecords(meta: records.meta)
        #expect(back == records)
        var a = StateRecords(), b = StateRecords()
        a.add(AppliedInput(digest: "x", name: "x", firstSeq: 1, lastSeq: 5, at: "2026-12-01T00:00:00Z"))
        b.add(AppliedInput(digest: "x", name: "x", firstSeq: 1, lastSeq: 5, at: "2026-12-01T00:00:00Z"))
        b.add(AppliedInput(digest: "y", name: "y", firstSeq: 6, lastSeq: 9, at: "2026-12-02T00:00:00Z"))
        b.numbered = true
        let merged = StateRecords(merging: [a, b])
        #expect(merged.inputs.map(\.digest) == ["x", "y"] && merged.numbered)
    }
}
