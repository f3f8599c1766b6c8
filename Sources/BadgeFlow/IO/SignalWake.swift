#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last SIGINT, SIGTERM or SIGHUP received; 0 when none. Written only by the signal
/// handler the CLI installs (``SignalWake/note(_:)``); the line loop reads it after each
/// line (a plain load).
nonisolated(unsafe) package var receivedSignal: Int32 = 0

/// The self-pipe that wakes a reader waiting for input when a signal arrives.
///
/// A flag alone loses a signal that lands after the line loop last looked at it and before
/// the reader blocks in `read(2)`: the read then waits for the next line, which on a quiet
/// stream may never come (a service's SIGTERM hung until SIGKILL). The handler also writes
/// a byte here, and ``LineReader`` waits for input and this pipe together
/// (``LineReader/wakeFD``), so a signal before the wait ends it at once.
package enum SignalWake {
    /// The pipe's read end and write end; -1 until ``open()``.
    nonisolated(unsafe) private(set) package static var fds: (read: Int32, write: Int32) = (-1, -1)

    /// Makes the pipe (once), before the handler is installed, on descriptors above 2. Both
    /// ends close on exec; the write end does not block, so a handler never waits on a full
    /// pipe (one byte is enough).
    package static func open() {
        // Touched here, not first inside the handler.
        receivedSignal = 0
        guard fds.read < 0 else { return }
        var p: [Int32] = [-1, -1]
        guard pipe(&p) == 0 else { return }  // no pipe: the flag and EINTR still work
        // Above 2: with stdin closed (`filter <&-`) pipe(2) would hand out fd 0, and the
        // filter would read its own wake pipe as its input and wait on it for ever.
        var moved: [Int32] = [-1, -1]
        for i in 0..<2 {
            moved[i] = fcntl(p[i], F_DUPFD_CLOEXEC, 3)
            close(p[i])
        }
        guard moved[0] >= 0, moved[1] >= 0 else {
            for fd in moved where fd >= 0 { close(fd) }
            return
        }
        _ = fcntl(moved[1], F_SETFL, fcntl(moved[1], F_GETFL) | O_NONBLOCK)
        fds = (moved[0], moved[1])
    }

    /// Records `sig` and wakes the reader. Async-signal-safe: a store, one `write(2)`, and
    /// `errno` put back as it was for the code the signal interrupted.
    package static func note(_ sig: Int32) {
        let saved = errno
        receivedSignal = sig
        if fds.write >= 0 {
            var byte: UInt8 = 1
            _ = write(fds.write, &byte, 1)
        }
        errno = saved
    }

    /// What one wait for input ended with.
    package enum Wait {
        /// `fd` has input, is at its end, or has an error the next `read` reports: that read does not block.
        case ready
        /// The wake descriptor became readable (a signal came).
        case woken
        /// The time asked for passed with nothing ready.
        case timedOut
        /// A signal interrupted the wait (`EINTR`).
        case interrupted
    }

    /// Waits until `fd` has input (or is at its end, or has an error a read reports); false
    /// when a signal came first, before the wait or during it.
    package static func waitForInput(_ fd: Int32) -> Bool {
        while receivedSignal == 0 {
            switch wait(for: fd, wake: fds.read, timeout: -1) {
            case .ready: return true
            case .woken: return false
            case .timedOut, .interrupted: continue
            }
        }
        return false
    }
}
