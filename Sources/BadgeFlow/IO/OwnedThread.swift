#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread started with a body and joined by its owner (``join()``, or `deinit`): no thread
/// outlives the object that started it. The owner makes the body end before it joins.
final class OwnedThread {
    #if canImport(Darwin)
    var handle: pthread_t?
    #else
    var handle = pthread_t()
    #endif
    var joined = false

    /// Waits for the thread to end (once; later calls return at once).
    func join() {
        guard !joined else { return }
        joined = true
        #if canImport(Darwin)
        if let handle { pthread_join(handle, nil) }
        #else
        pthread_join(handle, nil)
        #endif
    }

    deinit { join() }
}
