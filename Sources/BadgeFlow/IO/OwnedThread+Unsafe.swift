// OwnedThread's start through pthreads: the body handed to the new thread as an opaque,
// retained pointer (Unmanaged), and the thread's name written from a C string. Relies on
// exactly one release of that retain: by the thread when it runs the body, or here when no
// thread was started.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension OwnedThread {
    /// What the new thread runs; handed to it retained, released by it.
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a thread named `name` that runs `body` (with a stack of `stackSize` bytes; nil:
    /// the system's default); nil when the system gives no thread (the caller then does the
    /// work itself).
    ///
    /// The name is what `top -H`, `ps -L`, `perf` and debuggers show for the thread; Linux
    /// keeps its first 15 bytes.
    static func start(
        name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void
    ) -> OwnedThread? {
        let thread = OwnedThread()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let context = Unmanaged.passRetained(
            Body {
                setName(name)
                body()
            }
        ).toOpaque()
        let started = pthread_create(
            &thread.handle, &attributes,
            { raw in
                let context: UnsafeMutableRawPointer? = raw
                if let context { Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run() }
                return nil
            }, context)
        guard started == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            // No thread to join: the handle is not one (joining it would be undefined).
            thread.joined = true
            return nil
        }
        return thread
    }

    /// Names the calling thread (its first 15 bytes, Linux's limit).
    private static func setName(_ name: String) {
        let short = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        #if canImport(Darwin)
        _ = pthread_setname_np(short)
        #else
        // Glibc's pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc module lacks; the
        // kernel takes the name from the thread's `comm` file as well. A name is a courtesy:
        // a failure is ignored.
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = short.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        #endif
    }
}
