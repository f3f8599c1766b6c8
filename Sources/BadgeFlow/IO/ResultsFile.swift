#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command's results go: stdout, or `-o FILE` (`filter`, `validate`, `report`);
/// a filter run's is owned by its ``FilterPipeline``.
///
/// A regular FILE (or a new one) is replaced atomically: results go to a temporary file in
/// the same folder, which `commit()` fsyncs and renames over FILE; until then, and whenever
/// `discard()` is called instead, FILE keeps its old content. Anything else (`/dev/null`, a
/// FIFO, a terminal) is written in place.
package final class ResultsFile {
    /// What failed, with the path and the OS's reason.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The descriptor to write results to.
    package let fd: Int32
    /// The target as given (`nil`: stdout).
    package let path: String?
    /// The temporary file renamed over `path` by `commit()`, when writing atomically.
    private var temp: String?
    /// Set by ``commit()`` or ``discard()``: the descriptor is closed.
    private var closed = false

    /// Stdout.
    package init() {
        fd = 1
        path = nil
    }

    /// Opens `path` for results (`-` is stdout).
    package init(_ path: String) throws(Failure) {
        if path == "-" {
            fd = 1
            self.path = nil
            return
        }
        self.path = path
        // The same rule as FileIO.AtomicWriter (the state file, --junit, batch --out).
        if FileIO.isWrittenInPlace(path) {
            fd = open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 { throw Failure(description: "\(path): cannot open: \(ResultsFile.reason())") }
            return
        }
        var st = stat()
        let exists = stat(path, &st) == 0
        let temp = path + ".tmp.\(getpid())"
        // A new file gets 0666 less the umask, as with `>`; a replaced one keeps its mode.
        let created = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        if created < 0 { throw Failure(description: "\(path): cannot create \(temp): \(ResultsFile.reason())") }
        if exists { fchmod(created, st.st_mode & 0o7777) }
        fd = created
        self.temp = temp
    }

    deinit { discard() }

    /// True until ``commit()`` or ``discard()`` when the results go to a temporary file
    /// renamed over `path` at the end (a regular or new `-o FILE`): none is delivered before.
    package var replacesAtomically: Bool { temp != nil }

    /// `strerror(errno)`.
    package static func reason() -> String { String(cString: strerror(errno)) }

    /// Makes the results the content of `path` (fsync, rename, fsync of the folder); stdout
    /// and non-regular targets need nothing.
    package func commit() throws(Failure) {
        guard !closed else { return }
        closed = true
        guard let temp, let path else {
            if fd > 2 { close(fd) }
            return
        }
        self.temp = nil
        defer { close(fd) }
        if fsync(fd) != 0 {
            let f = Failure(description: "\(path): cannot fsync \(temp): \(ResultsFile.reason())")
            unlink(temp)
            throw f
        }
        if rename(temp, path) != 0 {
            let f = Failure(description: "\(path): cannot rename \(temp) over it: \(ResultsFile.reason())")
            unlink(temp)
            throw f
        }
        FileIO.syncFolder(of: path)
    }

    /// The results file as the state's last save sees it (``StateSession/Results``), named
    /// `name` in messages; `isFile`: `-o` was given.
    package func results(name: String, isFile: Bool) -> StateSession.Results {
        StateSession.Results(
            name: name, isFile: isFile, replacesAtomically: replacesAtomically,
            commit: {
                do throws(Failure) { try self.commit() } catch { return error.description }
                return nil
            }, discard: discard)
    }

    /// Drops the results: the temporary file goes, `path` keeps its old content (a target
    /// written in place is closed). Once committed or discarded, later calls do nothing.
    package func discard() {
        guard !closed else { return }
        closed = true
        guard let temp else {
            if fd > 2 { close(fd) }
            return
        }
        self.temp = nil
        close(fd)
        unlink(temp)
    }
}
