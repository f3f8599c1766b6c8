/// One job at a time on a thread the worker owns: what the state stores' read-ahead
/// (``StorePrefetcher``) and commits (``StoreCheckpointer``) run on.
///
/// The owner (one thread: the filter's applying thread) starts a job with ``start(_:)`` and
/// takes its output with ``wait()``. The hand-off is a ``Locked`` state with two conditions:
/// the job goes in under the lock and the thread is signalled; the thread takes it, runs it
/// without the lock, puts the output in under the lock and signals back. A job's captures
/// (ids, boxes of accounts that the applying thread leaves alone until the job has ended) and
/// its output so cross threads only through the lock.
///
/// ``close()`` (and `deinit`) lets the job under way finish, ends the thread and joins it:
/// a worker never leaves a thread behind, and never hangs on an idle one. Should the system
/// give no thread, jobs run on the owner's thread in ``start(_:)``.
final class Worker<Output: Sendable> {
    private struct State {
        /// The job started and not yet taken by the thread.
        var job: (@Sendable () -> Output)?
        /// Whether the output of the last job started is in.
        var finished = false
        var output: Output?
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
    /// Whether a job was started and its output not yet taken.
    private(set) var isPending = false

    /// Starts the worker's thread, named `name` (what `top -H` shows).
    init(name: String) {
        let shared = shared, jobIn = jobIn, outputIn = outputIn
        thread = OwnedThread.start(name: name) {
            while true {
                let job = shared.withLock(waitingOn: jobIn, until: { $0.job != nil || $0.closing }) { state in
                    defer { state.job = nil }
                    return state.job
                }
                guard let job else { break }
                let output = job()
                shared.withLock {
                    $0.output = output
                    $0.finished = true
                }
                shared.broadcast(outputIn)
            }
            shared.withLock { $0.exited = true }
        }
        hasThread = thread != nil
    }

    /// Starts `job` on the worker's thread; the previous job's output must have been taken
    /// (``wait()``), and the worker not closed.
    func start(_ job: @escaping @Sendable () -> Output) {
        precondition(!isPending, "Worker: wait() for the previous job first")
        precondition(!closed, "Worker: start() after close()")
        isPending = true
        guard thread != nil else {
            let output = job()
            shared.withLock {
                $0.output = output
                $0.finished = true
            }
            return
        }
        shared.withLock {
            $0.finished = false
            $0.job = job
        }
        shared.signal(jobIn)
    }

    /// Waits for the job started last and takes its output; nil when none is pending.
    func wait() -> Output? {
        guard isPending else { return nil }
        isPending = false
        return shared.withLock(waitingOn: outputIn, until: { $0.finished }) { state in
            defer {
                state.output = nil
                state.finished = false
            }
            return state.output
        }
    }

    /// Lets the job under way finish (its output is dropped), ends the thread and joins it.
    /// Later calls do nothing.
    func close() {
        guard !closed else { return }
        closed = true
        isPending = false
        shared.withLock { $0.closing = true }
        shared.signal(jobIn)
        thread?.join()
        thread = nil
        shared.withLock { $0.output = nil }
    }

    /// Whether the worker's thread has ended (or never started), read from a value that
    /// outlives the worker: for tests that a closed or released worker leaves no thread.
    var threadEnded: @Sendable () -> Bool {
        let shared = shared, started = hasThread
        return { !started || shared.withLock { $0.exited } }
    }

    deinit { close() }
}
