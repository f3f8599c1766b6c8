#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one-writer lock of a state (either format): `FILE.lock`, holding the writer's pid,
/// locked with `flock(2)`. `FILE` is the state's real path (``FileIO/resolved(_:)``), so a
/// symbolic link to a state and the state itself share one lock.
///
/// The kernel releases the lock when its process dies, however it dies, so a lock left by
/// a dead process is taken over; the file is removed when the lock is released.
package final class StateLock {
    /// The lock file's path (`STATE.lock`, beside the file `STATE` resolves to).
    package let path: String
    private var fd: Int32

    /// Why a lock could not be taken.
    package enum Failure: Error, Sendable, CustomStringConvertible {
        /// Another live process holds it.
        case inUse(pid: Int32?)
        /// The lock file cannot be created (e.g. the folder is not writable).
        case io(String)

        /// As the CLI prints it.
        package var description: String {
            switch self {
            case .inUse(let pid): return "in use by " + (pid.map { "pid \($0)" } ?? "another process")
            case .io(let m): return m
            }
        }
    }

    /// Takes the lock of `state`, without waiting.
    ///
    /// - Throws: `Failure.inUse` with the holder's pid when another process holds it;
    ///   `Failure.io` when the lock file cannot be created.
    package init(state: String) throws(Failure) {
        path = FileIO.resolved(state) + ".lock"
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            if fd < 0 { throw .io("\(path): cannot create the lock file: \(String(cString: strerror(errno)))") }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                var buf = [UInt8](repeating: 0, count: 32)
                let n = pread(fd, &buf, buf.count, 0)
                close(fd)
                let text = n > 0 ? String(decoding: buf[0..<n], as: UTF8.self) : ""
                throw .inUse(pid: Int32(text.split(separator: "\n").first ?? ""))
            }
            // The holder may have removed the file between our open and flock: then we
            // locked an unlinked file, and must try again with the one at the path.
            var mine = stat(), there = stat()
            if fstat(fd, &mine) == 0, stat(path, &there) == 0, mine.st_ino == there.st_ino, mine.st_dev == there.st_dev {
                // The pid only names the holder in a second writer's message: when it cannot
                // be written (a full disk), the lock still holds and that writer is refused
                // as "another process".
                let text = Array("\(getpid())\n".utf8)
                _ = ftruncate(fd, 0)
                _ = pwrite(fd, text, text.count, 0)
                self.fd = fd
                return
            }
            close(fd)
        }
    }

    /// Removes the lock file and releases the lock (also done on deinit).
    package func release() {
        guard fd >= 0 else { return }
        unlink(path)
        close(fd)
        fd = -1
    }

    deinit { release() }
}
