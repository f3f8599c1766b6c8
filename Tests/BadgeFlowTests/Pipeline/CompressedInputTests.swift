import Testing

@testable import BadgeFlow

/// ``CompressedInput``: a compressed INPUT is told by its magic bytes (the filter's refusal
/// of one is in `BadgeFlowCLITests/CompressedInputTests`).
@Suite struct CompressedInputTests {
    @Test func magicBytesNameTheFormatAndItsTool() {
        #expect(CompressedInput.format(ofPrefix: [0x1F, 0x8B, 0x08, 0x00]) == .init(name: "gzip", tool: "zcat"))
        #expect(CompressedInput.format(ofPrefix: [0x28, 0xB5, 0x2F, 0xFD, 0x24]) == .init(name: "zstd", tool: "zstdcat"))
        #expect(CompressedInput.format(ofPrefix: Array("BZh91AY".utf8)) == .init(name: "bzip2", tool: "bzcat"))
        #expect(CompressedInput.format(ofPrefix: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) == .init(name: "xz", tool: "xzcat"))
        // Text, and prefixes that only look alike, are not compressed.
        #expect(CompressedInput.format(ofPrefix: Array("{\"op\":\"tick\"}".utf8)) == nil)
        #expect(CompressedInput.format(ofPrefix: Array("BZh{".utf8)) == nil)
        #expect(CompressedInput.format(ofPrefix: [0x1F]) == nil)
        #expect(CompressedInput.format(ofPrefix: [0xFD, 0x37, 0x7A, 0x58, 0x5A]) == nil)
        #expect(CompressedInput.format(ofPrefix: [UInt8]()) == nil)
    }
}
