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
        let thread = try #require(OwnedThread.start { ran.withLock { $0 += 1 } })
        thread.join()
        #expect(ran.withLock { $0 } == 1)
        thread.join()
    }

    /// When the system gives no thread (here: a stack no machine can map), `start` says so
    /// with nil, the body never runs, and nothing is joined: the caller does the work itself
    /// (a worker, the filter's analysers) instead of crashing on a handle that is no thread.
    @Test func noThreadFromTheSystemIsNilNotACrash() {
        let ran = Locked(false)
        let thread = OwnedThread.start(stackSize: Int.max / 2) { ran.withLock { $0 = true } }
        #expect(thread == nil)
        #expect(ran.withLock { $0 } == false)
    }
}
