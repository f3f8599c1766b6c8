// FileIO's reads and writes through raw memory: read(2) into a chunk of an array and
// write(2) from the writer's buffer. Relies on each buffer staying valid (the array borrowed)
// for the one call that fills or drains it, and on counts never past the buffer's end.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension FileIO.AtomicWriter {
    func flush() throws(FileIO.Failure) {
        // A write that failed part-way leaves the temporary file unknown: never commit it.
        if let failed { throw failed }
        var written = 0
        while written < buffer.count {
            let n = buffer.withUnsafeBytes { buf -> Int in
                guard let base = buf.baseAddress else { return 0 }
                return retryingOnEINTR { systemWrite(fd, base + written, buf.count - written) }
            }
            if n < 0 {
                let f = FileIO.failure(temp ?? path, "cannot write")
                failed = f
                throw f
            }
            written += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

extension FileIO {
    /// Reads a whole file as bytes.
    public static func readBytes(_ path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw failure(path, "cannot open") }
        defer { close(fd) }
        var out: [UInt8] = []
        // Sized once for a regular file: growing by doubling would hold up to twice its size.
        var st = stat()
        if fstat(fd, &st) == 0, st.st_size > 0 { out.reserveCapacity(Int(st.st_size) + 1) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { b in retryingOnEINTR { read(fd, b.baseAddress, b.count) } }
            if n < 0 { throw failure(path, "cannot read") }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }
}

/// write(2), named apart from `AtomicWriter.write(_:)`.
private func systemWrite(_ fd: Int32, _ buf: UnsafeRawPointer, _ n: Int) -> Int { write(fd, buf, n) }
