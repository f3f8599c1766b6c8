/// Jobs run in order on a thread the worker owns: what a filter run's read-ahead
/// (``StorePrefetcher``) and commits (``StoreCheckpointer``) run on. The run's
/// ``FilterPipeline`` makes each worker and closes it (through its user) before the
/// connection it drives.
///
/// The owner (one thread: the filter's applying thread) starts jobs with ``start(_:)`` and
/// takes their outputs, oldest first, with ``wait()``. A checkpointer keeps one job at a time;
/// a read-ahead keeps up to two, so that its thread starts the next read as soon as one ends.
/// The hand-off is a ``Locked`` state with two conditions: a job goes in under the lock and
/// the thread is signalled; the thread takes the oldest, runs it without the lock, puts the
/// output in under the lock and signals back. A job's captures (ids, boxes of accounts that
/// the applying thread leaves alone until the job has ended) and its output so cross threads
/// only through the lock.
///
/// ``close()`` (and `deinit`) lets the jobs started finish, ends the thread and joins it: a
/// worker never leaves a thread behind, and never hangs on an idle one. Should the system
/// give no thread, jobs run on the owner's thread in ``start(_:)``.
package final class Worker<Output: Sendable> {
    private struct State {
        /// The jobs started and not yet taken by the thread, oldest first.
        var jobs: [@Sendable () -> Output] = []
        /// The outputs of the jobs that ended and were not taken yet, oldest first.
        var outputs: [Output] = []
        /// Set by ``close()``: the thread ends once no job is left.
        var closing = false
        /// Set by the thread as the last thing it does.
        var exited = false
    }
    private let shared = Locked(State(), conditions: 2)
    /// Signalled when a job goes in, or on close.
    private var jobIn: Locked<State>.Condition { .init(0) }
    /// Broadcast when a job's output comes in.
    private var outputIn: Locked<State>.Condition { .init(1) }
    private var thread: OwnedThread?
    private var closed = false
    /// Whether the system gave a thread (otherwise jobs run in ``start(_:)``).
    private var hasThread = false
    /// The number of jobs started whose outputs were not taken yet.
    private(set) var pendingCount = 0
    /// Whether a job was started and its output not yet taken.
    package var isPending: Bool { pendingCount > 0 }

    /// Starts the worker's thread, named `name` (what `top -H` shows).
    package init(name: String) {
        let shared = shared, jobIn = jobIn, outputIn = outputIn
        thread = OwnedThread.start(name: name) {
            while true {
                let job = shared.withLock(waitingOn: jobIn, until: { !$0.jobs.isEmpty || $0.closing }) { state in
                    state.jobs.isEmpty ? nil : state.jobs.removeFirst()
                }
                guard let job else { break }
                let output = job()
                shared.withLock { $0.outputs.append(output) }
                shared.broadcast(outputIn)
            }
            shared.withLock { $0.exited = true }
        }
        hasThread = thread != nil
    }

    /// Starts `job` on the worker's thread, after the jobs started before it; at most `limit`
    /// jobs may be pending (started, their outputs not taken with ``wait()``), and the worker
    /// must not be closed.
    package func start(_ job: @escaping @Sendable () -> Output, limit: Int = 1) {
        precondition(pendingCount < limit, "Worker: wait() for an earlier job first")
        precondition(!closed, "Worker: start() after close()")
        pendingCount += 1
        guard thread != nil else {
            let output = job()
            shared.withLock { $0.outputs.append(output) }
            return
        }
        shared.withLock { $0.jobs.append(job) }
        shared.signal(jobIn)
    }

    /// Waits for the oldest job pending and takes its output; nil when none is pending.
    package func wait() -> Output? {
        guard pendingCount > 0 else { return nil }
        pendingCount -= 1
        return shared.withLock(waitingOn: outputIn, until: { !$0.outputs.isEmpty }) { state in
            state.outputs.removeFirst()
        }
    }

    /// Lets the jobs started finish (their outputs are dropped), ends the thread and joins it.
    /// Later calls do nothing.
    package func close() {
        guard !closed else { return }
        closed = true
        pendingCount = 0
        shared.withLock { $0.closing = true }
        shared.signal(jobIn)
        thread?.join()
        thread = nil
        shared.withLock {
            $0.jobs = []
            $0.outputs = []
        }
    }

    /// Whether the worker's thread has ended (or never started), read from a value that
    /// outlives the worker: for tests that a closed or released worker leaves no thread.
    package var threadEnded: @Sendable () -> Bool {
        let shared = shared, started = hasThread
        return { !started || shared.withLock { $0.exited } }
    }

    deinit { close() }
}
