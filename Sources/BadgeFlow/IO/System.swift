// BadgeFlow's thin wrappers over the C library, for the files that need a few of its calls:
// the JSON scanner's byte searches, the line reader, the compressed-input check, the
// session's clock and input identity, the filter's input and output, the states' file
// status, removal and renames, the input digest's reads. Each wrapper is one call (inlined),
// so the per-line path costs what the direct call did.
//
// The only files of the module that import the C library: this one, the ones built on the
// system calls in IO/ (FileIO, FileIO+Unsafe, MappedFile, OwnedThread, OwnedThread+Unsafe,
// SignalWake, SignalWake+Unsafe, StateLock, ResultsFile) and the C-binding stores (SQLiteStore,
// RocksDBStore). Scripts/check-unsafe-boundaries.sh holds that list.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension System {
    /// memchr(3): the first `byte` among the `count` bytes at `start`, or nil.
    @inline(__always)
    static func memchr(_ start: UnsafeRawPointer, _ byte: Int32, _ count: Int) -> UnsafeMutableRawPointer? {
        cMemchr(start, byte, count)
    }

    /// memcmp(3): zero when the `count` bytes at `a` and `b` are equal.
    @inline(__always)
    static func memcmp(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Int32 {
        cMemcmp(a, b, count)
    }

    /// memmove(3): copies `count` bytes from `source` to `target` (the ranges may overlap).
    @inline(__always)
    static func memmove(_ target: UnsafeMutableRawPointer, _ source: UnsafeRawPointer, _ count: Int) {
        cMemmove(target, source, count)
    }

    /// strlen(3): the bytes before the NUL that ends `string`.
    @inline(__always)
    static func strlen(_ string: UnsafePointer<CChar>) -> Int {
        Int(cStrlen(string))
    }

    /// read(2): up to `count` bytes from `fd` into `buffer`; negative on failure (`errno`).
    @inline(__always)
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        cRead(fd, buffer, count)
    }

    /// pread(2): up to `count` bytes of `fd` from `offset`, the file offset unmoved.
    @inline(__always)
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: Int) -> Int {
        cPread(fd, buffer, count, off_t(offset))
    }

    /// write(2): up to `count` bytes of `bytes` to `fd`; negative on failure (`errno`).
    @inline(__always)
    package static func write(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        cWrite(fd, bytes, count)
    }

    /// open(2) for reading (`O_RDONLY | O_CLOEXEC`); negative on failure (`errno`).
    package static func openForReading(_ path: String) -> Int32 { open(path, O_RDONLY | O_CLOEXEC) }

    /// close(2), its result ignored.
    package static func closeDescriptor(_ fd: Int32) { _ = close(fd) }

    /// strerror(3) of the error number `code`.
    package static func errorMessage(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// `EPIPE`: a write found its reader gone.
    package static var brokenPipeError: Int32 { EPIPE }

    /// True when the last failed call was interrupted by a signal (`EINTR`).
    static var interrupted: Bool { errno == EINTR }

    /// The monotonic clock (`CLOCK_MONOTONIC`), in seconds.
    package static func monotonicClock() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// The current time in UTC (time(3), gmtime_r(3)): the year, month (1-12), day, hour,
    /// minute and second.
    package static func utcNow() -> (year: Int32, month: Int32, day: Int32, hour: Int32, minute: Int32, second: Int32) {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        return (parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    /// `dev D, inode I` of the file at `path` (stat(2), following links), nil when it
    /// cannot be stat'ed.
    static func fileIdentity(_ path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return "dev \(st.st_dev), inode \(st.st_ino)"
    }

    /// The name of the folder entry `entry` (readdir(3)): the bytes of `d_name` before its NUL.
    package static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
    }

    /// The same name as text (UTF-8 decoded, as the folder's other names are).
    package static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    /// What stat(2) says of a file: its kind, size, identity and modification time.
    package struct FileStatus {
        /// A file's kind (`st_mode & S_IFMT`).
        package enum Kind: Equatable {
            /// `S_IFREG`.
            case regular
            /// `S_IFDIR`.
            case folder
            /// `S_IFLNK` (only lstat(2) sees one).
            case link
            /// `S_IFIFO`.
            case fifo
            /// `S_IFSOCK`.
            case socket
            /// `S_IFCHR`.
            case characterDevice
            /// `S_IFBLK`.
            case blockDevice
            /// Any other.
            case other
        }

        /// The file's kind.
        package let kind: Kind
        /// `st_size`, in bytes.
        package let size: Int64
        /// `st_dev`.
        package let device: UInt64
        /// `st_ino`.
        package let inode: Int64
        /// The modification time (`st_mtim`), seconds and nanoseconds.
        package let modified: (seconds: Int64, nanoseconds: Int64)

        /// A regular file (`S_IFREG`).
        package var isRegular: Bool { kind == .regular }
        /// A folder (`S_IFDIR`).
        package var isFolder: Bool { kind == .folder }

        /// The status `st` says.
        package init(_ st: stat) {
            switch st.st_mode & S_IFMT {
            case S_IFREG: kind = .regular
            case S_IFDIR: kind = .folder
            case S_IFLNK: kind = .link
            case S_IFIFO: kind = .fifo
            case S_IFSOCK: kind = .socket
            case S_IFCHR: kind = .characterDevice
            case S_IFBLK: kind = .blockDevice
            default: kind = .other
            }
            size = Int64(st.st_size)
            device = UInt64(truncatingIfNeeded: st.st_dev)
            inode = Int64(truncatingIfNeeded: st.st_ino)
            #if canImport(Darwin)
            let time = st.st_mtimespec
            #else
            let time = st.st_mtim
            #endif
            modified = (Int64(time.tv_sec), Int64(time.tv_nsec))
        }
    }

    /// stat(2) of `path` (links followed), nil when it cannot be stat'ed (`errno`).
    package static func status(_ path: String) -> FileStatus? {
        var st = stat()
        return stat(path, &st) == 0 ? FileStatus(st) : nil
    }

    /// lstat(2) of `path` (a link itself), nil when it cannot be stat'ed (`errno`).
    package static func linkStatus(_ path: String) -> FileStatus? {
        var st = stat()
        return lstat(path, &st) == 0 ? FileStatus(st) : nil
    }

    /// fstat(2) of the file open on `fd`, nil when it cannot be stat'ed (`errno`).
    package static func status(of fd: Int32) -> FileStatus? {
        var st = stat()
        return fstat(fd, &st) == 0 ? FileStatus(st) : nil
    }

    /// The file offset of `fd` (lseek(2) by 0 from `SEEK_CUR`), negative on failure.
    package static func currentOffset(_ fd: Int32) -> Int { Int(lseek(fd, 0, SEEK_CUR)) }

    /// fsync(2) of `fd`, its result ignored.
    static func sync(_ fd: Int32) { _ = fsync(fd) }

    /// unlink(2), its failure ignored.
    package static func removeFile(_ path: String) { _ = unlink(path) }

    /// rmdir(2), its failure ignored.
    static func removeEmptyFolder(_ path: String) { _ = rmdir(path) }

    /// mkdir(2) with `mode`; false on failure (`errno`).
    package static func makeFolder(_ path: String, mode: UInt32 = 0o755) -> Bool { mkdir(path, mode_t(mode)) == 0 }

    /// rename(2) of `source` over `target`; false on failure (`errno`).
    static func rename(_ source: String, over target: String) -> Bool { cRename(source, target) == 0 }

    /// This process's id (getpid(2)).
    package static var processID: Int32 { getpid() }

    /// The names in the folder at `path` (opendir(3), readdir(3)), in the order read, `.` and
    /// `..` left out; nil when it cannot be opened (`errno`).
    static func folderNames(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name: String = entryName(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// memcpy(3): copies `count` bytes from `source` to `target` (the ranges must not overlap).
    @inline(__always)
    static func memcpy(_ target: UnsafeMutableRawPointer, _ source: UnsafeRawPointer, _ count: Int) {
        cMemcpy(target, source, count)
    }

    /// realpath(3) of `path`, nil when it cannot be resolved.
    static func realPath(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }
}

// The C functions under names the wrappers above do not shadow.
@inline(__always)
private func cMemchr(_ s: UnsafeRawPointer, _ c: Int32, _ n: Int) -> UnsafeMutableRawPointer? { memchr(s, c, n) }
@inline(__always)
private func cMemcmp(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Int32 { memcmp(a, b, n) }
@inline(__always)
private func cMemmove(_ d: UnsafeMutableRawPointer, _ s: UnsafeRawPointer, _ n: Int) { memmove(d, s, n) }
@inline(__always)
private func cStrlen(_ s: UnsafePointer<CChar>) -> Int { Int(strlen(s)) }
@inline(__always)
private func cRead(_ fd: Int32, _ p: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, p, n) }
@inline(__always)
private func cWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
@inline(__always)
private func cPread(_ fd: Int32, _ p: UnsafeMutableRawPointer?, _ n: Int, _ o: off_t) -> Int { pread(fd, p, n, o) }
@inline(__always)
private func cMemcpy(_ d: UnsafeMutableRawPointer, _ s: UnsafeRawPointer, _ n: Int) { memcpy(d, s, n) }
private func cRename(_ source: String, _ target: String) -> Int32 { rename(source, target) }
