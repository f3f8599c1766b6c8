import Dispatch

/// An SQLite connection used on its own thread, one job at a time: what
/// `SQLitePrefetcher` and `SQLiteCheckpointer` share.
///
/// The hand-off: the store is used only on `queue` (serial: one job at a time, each on one
/// thread from start to end); a job's output is written there and read by ``wait()`` after
/// `done` is signalled, which orders the two; `isPending` is used only by the thread that
/// starts and waits. That is why it is an unchecked Sendable.
///
/// A serial queue rather than a thread of its own: a job is a whole batch's reads or a whole
/// checkpoint (milliseconds to seconds), so a queue's thread costs nothing between jobs, and
/// nothing parks in `pthread_cond_wait` holding a lock of ours. The caller blocks only in
/// ``wait()``, on the semaphore, for the job it started.
final class StoreWorker<Output: Sendable>: @unchecked Sendable {
    private let store: SQLiteStore
    private let queue: DispatchQueue
    private let done = DispatchSemaphore(value: 0)
    private var output: Output?
    /// Whether a job was started and its output not yet taken.
    private(set) var isPending = false

    init(_ store: SQLiteStore, label: String) {
        self.store = store
        queue = DispatchQueue(label: label)
    }

    /// Starts `job` on the connection's thread; the previous job's output must have been
    /// taken (``wait()``).
    func start(_ job: @escaping @Sendable (SQLiteStore) -> Output) {
        precondition(!isPending, "StoreWorker: wait() for the previous job first")
        isPending = true
        queue.async { [self] in
            output = job(store)
            done.signal()
        }
    }

    /// Waits for the job started last and takes its output; nil when none is pending.
    func wait() -> Output? {
        guard isPending else { return nil }
        done.wait()
        isPending = false
        defer { output = nil }
        return output
    }

    /// Closes the connection, after the job under way (whose output is dropped).
    func close() {
        _ = wait()
        queue.sync { store.close() }
    }

    deinit {
        if isPending { done.wait() }
    }
}
