import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one worker type of the state stores: jobs in the order started on a thread it owns,
/// and no thread left behind by `close()` or `deinit`.
@Suite struct WorkerTests {
    @Test func jobsRunInTurnOnTheWorkersOwnThread() {
        let worker = Worker<Int>(name: "test")
        let caller = pthread_self()
        let ranElsewhere = Locked(0)
        for n in 1...5 {
            worker.start {
                if pthread_equal(pthread_self(), caller) == 0 { ranElsewhere.withLock { $0 += 1 } }
                return n * n
            }
            #expect(worker.isPending)
            #expect(worker.wait() == n * n)
            #expect(!worker.isPending)
        }
        #expect(ranElsewhere.withLock { $0 } == 5)
        // Nothing pending: nothing to wait for.
        #expect(worker.wait() == nil)
        worker.close()
    }

    /// The job is held at a gate until `close()` has been called (not slowed by a sleep, which
    /// could end before the call on a loaded machine): close() must wait for it.
    @Test func closingWithAJobPendingLetsItFinishAndEndsTheThread() {
        let worker = Worker<Int>(name: "test")
        let ended = worker.threadEnded
        let finished = Locked(false)
        let gate = Gate(), closing = Guarded(false)
        worker.start {
            gate.pass()
            finished.withLock { $0 = true }
            return 1
        }
        #expect(waitUntil(deadline: 60) { gate.hasArrival })
        gate.open(when: { closing.get() })
        closing.set(true)
        worker.close()
        // close() returned after the job and the thread both ended.
        #expect(finished.withLock { $0 })
        #expect(ended())
        #expect(worker.wait() == nil)
        worker.close()
    }

    @Test func anIdleWorkerReleasedEndsItsThread() {
        var worker: Worker<Int>? = Worker(name: "test")
        let ended = worker?.threadEnded ?? { false }
        worker?.start { 7 }
        #expect(worker?.wait() == 7)
        #expect(!ended())
        worker = nil
        #expect(ended())
    }

    /// With a limit of two, a second job waits behind the first on the same thread, and
    /// the outputs come back oldest first; closing lets both finish.
    @Test func twoJobsPendingRunInTheOrderStarted() {
        let worker = Worker<Int>(name: "test")
        let order = Locked<[Int]>([])
        let first = Gate()
        worker.start(
            {
                first.pass()
                order.withLock { $0.append(1) }
                return 1
            }, limit: 2)
        worker.start(
            {
                order.withLock { $0.append(2) }
                return 2
            }, limit: 2)
        // The second job is queued while the first one runs.
        #expect(waitUntil(deadline: 60) { first.hasArrival })
        #expect(worker.pendingCount == 2)
        #expect(order.withLock { $0 }.isEmpty)
        first.open()
        #expect(worker.wait() == 1)
        #expect(worker.pendingCount == 1)
        #expect(worker.wait() == 2)
        #expect(worker.wait() == nil)
        #expect(order.withLock { $0 } == [1, 2])
        let finished = Locked(0)
        let gate = Gate(), closing = Guarded(false)
        for n in 1...2 {
            worker.start(
                {
                    gate.pass()
                    finished.withLock { $0 += 1 }
                    return n
                }, limit: 2)
        }
        #expect(waitUntil(deadline: 60) { gate.hasArrival })
        gate.open(when: { closing.get() })
        closing.set(true)
        worker.close()
        #expect(finished.withLock { $0 } == 2)
        #expect(worker.wait() == nil)
    }

    @Test func aWorkerReleasedWithAJobPendingEndsItsThread() {
        let finished = Locked(false)
        var worker: Worker<Int>? = Worker(name: "test")
        let ended = worker?.threadEnded ?? { false }
        let gate = Gate(), releasing = Guarded(false)
        worker?.start {
            gate.pass()
            finished.withLock { $0 = true }
            return 1
        }
        #expect(waitUntil(deadline: 60) { gate.hasArrival })
        gate.open(when: { releasing.get() })
        releasing.set(true)
        worker = nil
        #expect(finished.withLock { $0 } && ended())
    }
}
