// BadgeFlow's thin wrappers over the C library, for the files that need a few of its calls:
// the JSON scanner's byte searches, the line reader, the compressed-input check, the
// session's clock and input identity, the filter's input and output. Each wrapper is one call (inlined), so the per-line
// path costs what the direct call did.
//
// The files built on the system calls (IO/FileIO, IO/MappedFile, IO/OwnedThread, the
// signal wake, the state lock and the state stores) import the C library themselves.

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
