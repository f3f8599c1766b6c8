#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small POSIX file helpers: whole-file reads and atomic writes, without Foundation.
public enum FileIO {
    /// Flushes the folder that holds `path` (after a rename into it), so the new directory
    /// entry survives a crash; best effort, as a folder that cannot be opened cannot be synced.
    public static func syncFolder(of path: String) {
        let folder = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[..<$0]) } ?? "."
        let dfd = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_CLOEXEC)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }

    /// An I/O failure with the OS's reason.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The path involved.
        public let path: String
        /// What failed, and `strerror`'s words.
        public let message: String
        /// `PATH: MESSAGE`, as the CLI prints it.
        public var description: String { "\(path): \(message)" }

        /// Creates a failure.
        ///
        /// - Parameters:
        ///   - path: the path involved.
        ///   - message: what failed and why.
        public init(path: String, message: String) {
            self.path = path
            self.message = message
        }
    }

    static func failure(_ path: String, _ what: String) -> Failure {
        Failure(path: path, message: "\(what): \(String(cString: strerror(errno)))")
    }

    /// Reads a whole file as UTF-8 text.
    public static func readString(_ path: String) throws(Failure) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// The file `given` names, symbolic links followed: its real path when it exists, else
    /// (a file about to be created, or a link to one) the real path of its folder and its
    /// name, else `given`. Two names of one state (a link and its target, `./s.json` and
    /// `/abs/s.json`) give one answer, so their writers share one lock.
    public static func resolved(_ given: String) -> String {
        var path = given
        // A link to a file not there yet is followed by hand (realpath needs the target).
        for _ in 0..<40 {
            if let real = realpath(path, nil) {
                defer { free(real) }
                return String(cString: real)
            }
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK else { break }
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(path, &target, target.count - 1)
            guard n > 0 else { break }
            let link = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if link.hasPrefix("/") {
                path = link
            } else {
                let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
                path = (slash.map { String(path[...$0]) } ?? "") + link
            }
        }
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty, let real = realpath(folder.isEmpty ? "/" : folder, nil) else { return path }
        defer { free(real) }
        let base = String(cString: real)
        return (base == "/" ? "" : base) + "/" + name
    }

    /// Removes `NAME.tmp.PID` files beside `path` (what `writeAtomically` leaves when killed)
    /// whose process is gone. Returns the names removed.
    @discardableResult
    public static func removeStaleTemporaryFiles(of given: String) -> [String] {
        let path = resolved(given)
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let dir = opendir(folder.isEmpty ? "/" : folder) else { return [] }
        defer { closedir(dir) }
        var removed: [String] = []
        let prefix = base + ".tmp."
        while let entry = readdir(dir) {
            let name: String = System.entryName(entry)
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count)), pid > 0 else { continue }
            if pid == getpid() || kill(pid, 0) == 0 || errno == EPERM { continue }
            if unlink((folder.isEmpty ? "" : folder) + "/" + name) == 0 { removed.append(name) }
        }
        return removed
    }

    /// True when `path` exists.
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// True when `path` (through symbolic links) exists and is not a regular file: a device
    /// such as `/dev/null`, a FIFO, a terminal. Such a target is written in place, never
    /// replaced by a rename (which would put a regular file where the device was).
    public static func isWrittenInPlace(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT != S_IFREG
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same folder, fsync,
    /// rename over the target, fsync of the folder. A crash at any moment leaves either the
    /// old file or the new one, never a torn one.
    ///
    /// When `path` is a symbolic link, the file it points to is replaced (the link stays);
    /// an existing file keeps its mode and, when the process may set them, owner and group.
    /// A target that exists and is not a regular file (`/dev/null`, a FIFO, a terminal; see
    /// ``isWrittenInPlace(_:)``) is opened and written in place instead, like `>` does.
    ///
    /// With `synced` false, nothing is fsynced: readers still never see a torn file (the
    /// rename is atomic), but a crash of the machine may lose the last writes. For a file
    /// rewritten every second whose content is soon stale anyway (`filter --metrics`), where
    /// two fsyncs would pause the writer for milliseconds each time.
    public static func writeAtomically(_ bytes: [UInt8], to given: String, synced: Bool = true) throws(Failure) {
        let w = try AtomicWriter(given, synced: synced)
        try w.write(bytes)
        try w.commit()
    }

    /// A file replaced atomically, written piece by piece: ``write(_:)`` as often as needed,
    /// then ``commit()`` (see ``FileIO/writeAtomically(_:to:synced:)``); dropped without a commit,
    /// the temporary file goes and the target keeps its old content. A target that exists and
    /// is not a regular file (a device, a FIFO) is written in place: no temporary file, no
    /// rename, no fsync.
    public final class AtomicWriter {
        let path: String
        /// The temporary file renamed over `path`; `nil` when writing in place.
        let temp: String?
        var fd: Int32
        var buffer: [UInt8] = []
        private var prepared = false
        /// Whether ``prepare()`` fsyncs the file and ``commit()`` its folder.
        private let synced: Bool
        /// The first write or fsync that failed; the file is then never committed.
        var failed: Failure?

        /// Starts replacing `given` (through a symbolic link, keeping mode and owner); with
        /// `synced` false, nothing is fsynced (see ``FileIO/writeAtomically(_:to:synced:)``).
        ///
        /// - Throws: `Failure` when the temporary file cannot be created.
        public init(_ given: String, synced: Bool = true) throws(Failure) {
            self.synced = synced
            // Through a link, to its target (created when missing): the link stays.
            let path = FileIO.resolved(given)
            var old = stat()
            let existed = stat(path, &old) == 0
            self.path = path
            if existed && old.st_mode & S_IFMT != S_IFREG {
                // A device or FIFO: a rename would replace it with a regular file.
                temp = nil
                fd = open(path, O_WRONLY | O_CLOEXEC)
                if fd < 0 { throw FileIO.failure(path, "cannot open") }
                buffer.reserveCapacity(1 << 16)
                return
            }
            let temp = path + ".tmp.\(getpid())"
            self.temp = temp
            fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, existed ? old.st_mode & 0o7777 : 0o644)
            if fd < 0 { throw FileIO.failure(temp, "cannot create") }
            if existed {
                _ = fchmod(fd, old.st_mode & 0o7777)
                _ = fchown(fd, old.st_uid, old.st_gid)
            }
            buffer.reserveCapacity(1 << 20)
        }

        deinit {
            if fd >= 0 {
                close(fd)
                if let temp { unlink(temp) }
            }
        }

        /// Appends `bytes` (buffered, 1 MiB).
        ///
        /// - Throws: `Failure` when writing fails.
        public func write(_ bytes: some Sequence<UInt8>) throws(Failure) {
            // More text after prepare(): commit() writes and syncs again.
            prepared = false
            buffer.append(contentsOf: bytes)
            if buffer.count >= 1 << 20 { try flush() }
        }

        /// Writes what is buffered and fsyncs: the steps that fail on a full disk. Only the
        /// rename of ``commit()`` is left, so another file can be put in place in between
        /// (the filter's `-o FILE` before its state).
        ///
        /// - Throws: `Failure` when a step fails; the target keeps its old content.
        public func prepare() throws(Failure) {
            guard !prepared else { return }
            try flush()
            // In place (a device, a FIFO) there is nothing to sync: fsync fails there (EINVAL).
            if synced, let temp, fsync(fd) != 0 {
                let f = FileIO.failure(temp, "cannot fsync")
                failed = f
                throw f
            }
            prepared = true
        }

        /// Writes what is buffered, fsyncs (unless ``prepare()`` did), renames over the
        /// target and fsyncs the folder; in place, only writes what is buffered.
        ///
        /// - Throws: `Failure` when a step fails; the target then keeps its old content.
        public func commit() throws(Failure) {
            try prepare()
            close(fd)
            fd = -1
            guard let temp else { return }
            if rename(temp, path) != 0 {
                let f = FileIO.failure(path, "cannot rename \(temp) over it")
                unlink(temp)
                throw f
            }
            if synced { FileIO.syncFolder(of: path) }
        }
    }

}
