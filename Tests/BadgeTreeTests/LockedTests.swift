import BadgeFlowTestSupport
import Dispatch
import Foundation
import Testing

@testable import BadgeTree

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `Locked`'s conditions: a thread waits under the lock until another changes the value and
/// wakes it.
@Suite struct LockedTests {
    private static let changed = Locked<Int>.Condition(0)

    @Test func aWaiterWakesOnceAnotherThreadMakesItsConditionTrue() {
        let lock = Locked(0, conditions: 1)
        let woke = DispatchSemaphore(value: 0)
        let seen = Locked(-1)
        // The values the waiter found its condition false for.
        let refused = Locked<[Int]>([])
        DispatchQueue.global().async {
            let value = lock.withLock(
                waitingOn: Self.changed,
                until: { value in
                    if value < 3 { refused.withLock { $0.append(value) } }
                    return value >= 3
                }
            ) { value in
                value += 100
                return value
            }
            seen.withLock { $0 = value }
            woke.signal()
        }
        // Values that do not satisfy the waiter leave it asleep.
        for _ in 0..<2 {
            lock.withLock { $0 += 1 }
            lock.signal(Self.changed)
        }
        // Once it has found 2 too small, it is asleep again, not through.
        #expect(waitUntil(deadline: 10) { refused.withLock { $0.last } == 2 })
        #expect(seen.withLock { $0 } == -1)
        lock.withLock { $0 += 1 }
        lock.signal(Self.changed)
        #expect(woke.wait(timeout: .now() + 10) == .success)
        // The body ran with the lock still held from the check: it saw 3, not a later value.
        #expect(seen.withLock { $0 } == 103)
        #expect(lock.withLock { $0 } == 103)
    }

    @Test func aBroadcastWakesEveryWaiter() {
        let lock = Locked(false, conditions: 2)
        let open = Locked<Bool>.Condition(1)
        let done = DispatchSemaphore(value: 0)
        let woken = Locked(0)
        // Waiters that found the condition false, under the lock: they sleep on it from then on.
        let asleep = Locked<Set<Int>>([])
        for n in 0..<4 {
            Thread {
                lock.withLock(
                    waitingOn: open,
                    until: { ready in
                        if !ready { asleep.withLock { _ = $0.insert(n) } }
                        return ready
                    }
                ) { _ in }
                woken.withLock { $0 += 1 }
                done.signal()
            }.start()
        }
        #expect(waitUntil(deadline: 10) { asleep.withLock { $0.count } == 4 })
        lock.withLock { $0 = true }
        lock.broadcast(open)
        for _ in 0..<4 { #expect(done.wait(timeout: .now() + 2) == .success) }
        #expect(woken.withLock { $0 } == 4)
        // Let any waiter a failed broadcast left asleep go.
        for _ in 0..<4 { lock.signal(open) }
    }

    @Test func aConditionAlreadyTrueDoesNotWait() {
        let lock = Locked([1, 2], conditions: 1)
        let count = lock.withLock(waitingOn: .init(0), until: { !$0.isEmpty }) { $0.removeFirst() }
        #expect(count == 1 && lock.withLock { $0 } == [2])
    }
}
