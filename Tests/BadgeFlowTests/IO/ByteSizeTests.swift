import Testing

@testable import BadgeFlow

@Suite struct ByteSizeTests {
    @Test func sizesWithAndWithoutUnits() {
        #expect(ByteSize.parse("4096") == 4096)
        #expect(ByteSize.parse("64K") == 64 << 10)
        #expect(ByteSize.parse("160M") == 160 << 20)
        #expect(ByteSize.parse("160m") == 160 << 20)
        #expect(ByteSize.parse("2G") == 2 << 30)
        #expect(ByteSize.parse("2GiB") == 2 << 30)
        #expect(ByteSize.parse("5MB") == 5 << 20)
    }

    @Test func notSizes() {
        for text in ["", "M", "1.5G", "-1M", "12T", "12 M", "x12", "٣M", "99999999999999999999", "9223372036854775807K"] {
            #expect(ByteSize.parse(text) == nil, "\(text)")
        }
    }
}
