// The shared file's reads and writes at an offset, through a pointer to the bytes.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SharedFileFormat {
    /// The bytes of `fd` from `offset` to its end.
    static func readAll(_ fd: Int32, from offset: Int, count: Int? = nil, path: String) throws(BadgeCenter.PersistenceError) -> [UInt8] {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw BadgeCenter.PersistenceError(
                path: path, kind: .unreadable, reason: "cannot read the file: \(String(cString: strerror(errno)))")
        }
        var out = [UInt8](repeating: 0, count: min(count ?? Int.max, max(0, Int(info.st_size) - offset)))
        var got = 0
        while got < out.count {
            let n = out.withUnsafeMutableBytes { b -> Int in
                guard let start = b.baseAddress else { return 0 }
                return retryingOnEINTR { pread(fd, start + got, b.count - got, off_t(offset + got)) }
            }
            guard n >= 0 else {
                throw BadgeCenter.PersistenceError(
                    path: path, kind: .unreadable, reason: "cannot read the file: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            got += n
        }
        out.removeLast(out.count - got)
        return out
    }

    /// Writes every byte at `offset`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(BadgeCenter.PersistenceError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { b -> Int in
                guard let start = b.baseAddress else { return 0 }
                return retryingOnEINTR { pwrite(fd, start + done, b.count - done, off_t(offset + done)) }
            }
            guard n > 0 else { throw unwritable(path, "cannot write the file") }
            done += n
        }
    }
}
