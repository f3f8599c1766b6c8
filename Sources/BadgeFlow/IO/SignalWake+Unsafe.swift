#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// poll(2) over two descriptors, handed to it as a C array of two `pollfd`s (a tuple's storage).

extension SignalWake {
    /// One poll(2) of `fd` and `wake` (-1: none) for up to `timeout` ms (negative: no limit).
    package static func wait(for fd: Int32, wake: Int32, timeout: Int32) -> Wait {
        var fds = (pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
        let r = withUnsafeMutablePointer(to: &fds) {
            $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, timeout) }
        }
        if r > 0 { return fds.1.revents == 0 ? .ready : .woken }
        if r == 0 { return .timedOut }
        return errno == EINTR ? .interrupted : .ready
    }
}
