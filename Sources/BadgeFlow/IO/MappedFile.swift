#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A regular file mapped read-only, for reading a large file front to back without holding
/// it: ``release(through:)`` gives back the pages already read, so only a window of the
/// file stays resident (its pages stay in the kernel's page cache, not in the process).
final class MappedFile {
    /// The file's bytes (empty for an empty file).
    let bytes: UnsafeRawBufferPointer
    private let base: UnsafeMutableRawPointer?
    private var released = 0
    /// Pages are given back in steps of at least this many bytes.
    private static let step = 8 << 20
    private static let pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)

    /// Maps `path`; nil when it cannot be opened, is not a regular file, or cannot be mapped.
    init?(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int(st.st_size)
        guard size > 0 else {
            base = nil
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else { return nil }
        _ = madvise(p, size, MADV_SEQUENTIAL)
        base = p
        bytes = UnsafeRawBufferPointer(start: p, count: size)
    }

    /// Gives back the whole pages before `offset` (they are read again from the page cache
    /// if touched later); a no-op until a few MiB have been read since the last call.
    func release(through offset: Int) {
        guard let base else { return }
        let end = min(offset, bytes.count) / Self.pageSize * Self.pageSize
        guard end - released >= Self.step else { return }
        _ = madvise(base + released, end - released, MADV_DONTNEED)
        released = end
    }

    deinit {
        if let base { munmap(base, bytes.count) }
    }
}
