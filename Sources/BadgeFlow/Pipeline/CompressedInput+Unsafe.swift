// The first bytes of a file, read into an array's storage with pread(2).

extension CompressedInput {
    /// Up to `count` bytes at offset 0 of the file open at `fd` (the file offset does not
    /// move); empty when none can be read that way (a pipe).
    static func readPrefix(_ fd: Int32, count: Int) -> [UInt8] {
        var prefix = [UInt8](repeating: 0, count: count)
        let n = prefix.withUnsafeMutableBytes { System.pread(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(prefix[0..<n]) : []
    }
}
