#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex, with conditions to wait on under that mutex: the one
/// lock of the package (`BadgeCenter`, the filter's batch queue, the state stores' workers).
///
/// Used instead of `Synchronization.Mutex` so the library runs on OS versions that predate it.
///
/// Unchecked Sendable: the value is read and written only inside ``withLock(_:)`` (or
/// ``withLock(waitingOn:until:_:)``), with the mutex held, which orders every access.
package final class Locked<Value>: @unchecked Sendable {
    /// One of the conditions a lock owns (``Locked/init(_:conditions:)``): the `index`th,
    /// counting from 0.
    package struct Condition: Sendable, Equatable {
        /// Which of the lock's conditions.
        package let index: Int

        /// The `index`th condition of a lock.
        package init(_ index: Int) { self.index = index }
    }

    // Heap-allocated: pthread objects must not move, and `&property` promises no stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int
    private var value: Value

    /// A lock over `value` with `conditions` conditions to wait on (``Condition``, 0 to
    /// `conditions - 1`).
    package init(_ value: Value, conditions: Int = 0) {
        self.value = value
        conditionCount = max(conditions, 0)
        self.conditions = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: max(conditionCount, 1))
        pthread_mutex_init(mutex, nil)
        for i in 0..<conditionCount { pthread_cond_init(self.conditions + i, nil) }
    }

    deinit {
        for i in 0..<conditionCount { pthread_cond_destroy(conditions + i) }
        conditions.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Waits until `ready` holds for the value, then runs `body` with exclusive access to it,
    /// without releasing the lock in between.
    ///
    /// `ready` is checked with the lock held; while it is false the lock is released and the
    /// thread sleeps on `condition` until another thread ``signal(_:)``s or
    /// ``broadcast(_:)``s it (after changing the value under the lock), then checks again.
    package func withLock<R, E: Error>(
        waitingOn condition: Condition, until ready: (borrowing Value) -> Bool, _ body: (inout Value) throws(E) -> R
    ) throws(E) -> R {
        let cond = pointer(condition)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(value) { pthread_cond_wait(cond, mutex) }
        return try body(&value)
    }

    /// Wakes one thread waiting on `condition` (none: nothing happens). Call it after
    /// changing the value, with or without the lock held.
    package func signal(_ condition: Condition) {
        pthread_cond_signal(pointer(condition))
    }

    /// Wakes every thread waiting on `condition`. Call it after changing the value, with or
    /// without the lock held.
    package func broadcast(_ condition: Condition) {
        pthread_cond_broadcast(pointer(condition))
    }

    private func pointer(_ condition: Condition) -> UnsafeMutablePointer<pthread_cond_t> {
        precondition(condition.index >= 0 && condition.index < conditionCount, "Locked: no condition \(condition.index)")
        return conditions + condition.index
    }
}
