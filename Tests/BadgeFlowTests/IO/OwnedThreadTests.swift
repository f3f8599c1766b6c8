import Testing

@testable import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct OwnedThreadTests {
    /// A thread runs its body and is joined once, by `join()` or by its release.
    @Test func aThreadRunsItsBodyAndIsJoined() throws {
        let ran = Locked(0)
        let thread = try #require(OwnedThread.start(name: "test") { ran.withLock { $0 += 1 } })
        thread.join()
        #expect(ran.withLock { $0 } == 1)
        thread.join()
    }

    /// When the system gives no thread (here: a stack no machine can map), `start` says so
    /// with nil, the body never runs, and nothing is joined: the caller does the work itself
    /// (a worker, the filter's analysers) instead of crashing on a handle that is no thread.
    @Test func noThreadFromTheSystemIsNilNotACrash() {
        let ran = Locked(false)
        let thread = OwnedThread.start(name: "test", stackSize: Int.max / 2) { ran.withLock { $0 = true } }
        #expect(thread == nil)
        #expect(ran.withLock { $0 } == false)
    }

    #if os(Linux)
    /// A thread carries its name (what `top -H` and `perf` show), cut to Linux's 15 bytes.
    @Test func aThreadIsNamed() throws {
        let seen = Locked("")
        let thread = try #require(
            OwnedThread.start(name: "bf-a-name-longer-than-15") {
                let fd = open("/proc/thread-self/comm", O_RDONLY)
                guard fd >= 0 else { return }
                defer { close(fd) }
                var buffer = [UInt8](repeating: 0, count: 64)
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                let name = String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self)
                seen.withLock { $0 = name }
            })
        thread.join()
        #expect(seen.withLock { $0 } == "bf-a-name-longe\n")
    }
    #endif
}
