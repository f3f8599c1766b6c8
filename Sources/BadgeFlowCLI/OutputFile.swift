import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command's results go: stdout, or `-o FILE`.
///
/// A regular FILE (or a new one) is replaced atomically: results go to a temporary file in
/// the same folder, which `commit()` fsyncs and renames over FILE; until then, and whenever
/// `discard()` is called instead, FILE keeps its old content. Anything else (`/dev/null`, a
/// FIFO, a terminal) is written in place.
final class OutputFile {
    /// What failed, with the path and the OS's reason.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The descriptor to write results to.
    let fd: Int32
    /// The target as given (`nil`: stdout).
    let path: String?
    /// The temporary file renamed over `path` by `commit()`, when writing atomically.
    private var temp: String?

    /// Stdout.
    init() {
        fd = 1
        path = nil
    }

    /// Opens `path` for results (`-` is stdout).
    init(_ path: String) throws(Failure) {
        if path == "-" {
            fd = 1
            self.path = nil
            return
        }
        self.path = path
        // The same rule as FileIO.AtomicWriter (the state file, --junit, batch --out).
        if FileIO.isWrittenInPlace(path) {
            fd = open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 { throw Failure(description: "\(path): cannot open: \(OutputFile.reason())") }
            return
        }
        var st = stat()
        let exists = stat(path, &st) == 0
        let temp = path + ".tmp.\(getpid())"
        // A new file gets 0666 less the umask, as with `>`; a replaced one keeps its mode.
        let created = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        if created < 0 { throw Failure(description: "\(path): cannot create \(temp): \(OutputFile.reason())") }
        if exists { fchmod(created, st.st_mode & 0o7777) }
        fd = created
        self.temp = temp
    }

    deinit { discard() }

    /// True until ``commit()`` or ``discard()`` when the results go to a temporary file
    /// renamed over `path` at the end (a regular or new `-o FILE`): none is delivered before.
    var replacesAtomically: Bool { temp != nil }

    /// `strerror(errno)`.
    static func reason() -> String { String(cString: strerror(errno)) }

    /// Makes the results the content of `path` (fsync, rename, fsync of the folder); stdout
    /// and non-regular targets need nothing.
    func commit() throws(Failure) {
        guard let temp, let path else {
            if fd > 2 { close(fd) }
            return
        }
        self.temp = nil
        defer { close(fd) }
        if fsync(fd) != 0 {
            let f = Failure(description: "\(path): cannot fsync \(temp): \(OutputFile.reason())")
            unlink(temp)
            throw f
        }
        if rename(temp, path) != 0 {
            let f = Failure(description: "\(path): cannot rename \(temp) over it: \(OutputFile.reason())")
            unlink(temp)
            throw f
        }
        FileIO.syncFolder(of: path)
    }

    /// The results file as the state's last save sees it (``StateSession/Results``), named
    /// `name` in messages; `isFile`: `-o` was given.
    func results(name: String, isFile: Bool) -> StateSession.Results {
        StateSession.Results(
            name: name, isFile: isFile, replacesAtomically: replacesAtomically,
            commit: {
                do throws(Failure) { try self.commit() } catch { return error.description }
                return nil
            }, discard: discard)
    }

    /// Drops the results: the temporary file goes, `path` keeps its old content.
    func discard() {
        guard let temp else { return }
        self.temp = nil
        close(fd)
        unlink(temp)
    }
}
