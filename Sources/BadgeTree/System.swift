// BadgeTree's system calls: the one file of the module that imports the C library for the
// calls other files make through it. The shared file's I/O (`BadgeCenter+SharedFile.swift`,
// `SharedFileFormat.swift`, `SharedFileFormat+Unsafe.swift`) and `Locked` (pthreads) still
// call it directly.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls `call` again while it fails with `EINTR` (a signal interrupted it) and returns its
/// last result: a count, a descriptor or a status, negative on any other failure (`errno`
/// then says which).
///
/// The one retry loop of the package: BadgeFlow and the `badgeflow` command use it too.
@inline(__always)
package func retryingOnEINTR<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result < 0 && errno == EINTR { continue }
        return result
    }
}

/// Thin wrappers over the C library for the files of the package that need no more of it.
package enum System {
    /// The calling thread's `errno`: what the last failed call says went wrong.
    package static var errorNumber: Int32 { errno }

    /// `strerror(errno)`: the last failure, as the C library words it.
    package static var errorMessage: String { String(cString: strerror(errno)) }

    /// The wall clock (`CLOCK_REALTIME`), in UNIX seconds.
    package static func wallClock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
