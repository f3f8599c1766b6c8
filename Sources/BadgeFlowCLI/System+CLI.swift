// The `badgeflow` command's system calls: thin wrappers over the C library for the files
// that need a few of its calls (the folder walk, `serve`'s exec and lookup, the progress
// line, the report's temporary files), and the signal handlers (``Signals``): the only file
// of the module that imports the C library (results go through BadgeFlow's ResultsFile).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BadgeFlow

extension System {
    /// mkstemp(3): makes and opens a new file from `template` (ending in `XXXXXX`, NUL
    /// terminated), which it rewrites to the file's name; negative on failure.
    static func makeTemporaryFile(_ template: UnsafeMutablePointer<CChar>) -> Int32 { mkstemp(template) }

    /// mkstemp(3) on `template` (a NUL-terminated C string), rewritten in place to the
    /// file's name; the open descriptor, negative on failure.
    static func makeTemporaryFile(_ template: inout [CChar]) -> Int32 {
        template.withUnsafeMutableBufferPointer { buf -> Int32 in
            guard let base = buf.baseAddress else { return -1 }
            return makeTemporaryFile(base)
        }
    }

    /// read(2) of stdin into all of `chunk`, retried on `EINTR`: the bytes read, 0 at its
    /// end, negative on failure.
    static func readStandardInput(into chunk: inout [UInt8]) -> Int {
        chunk.withUnsafeMutableBytes { b in retryingOnEINTR { read(0, b.baseAddress, b.count) } }
    }

    /// execv(3): replaces this process with `path` run with `argv`. Returns only when that
    /// fails, with the reason (strerror(3)).
    static func execute(_ path: String, _ argv: [String]) -> String {
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        cArgs.append(nil)
        execv(path, cArgs)
        let reason = String(cString: strerror(errno))
        for p in cArgs { free(p) }
        return reason
    }

    /// True when `fd` is a terminal (isatty(3)).
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) != 0 }

    /// True when the environment variable `name` is set and not empty.
    static func environmentHasValue(_ name: String) -> Bool {
        guard let value = getenv(name) else { return false }
        return value.pointee != 0
    }

    /// True when the last failed write found its reader gone (`EPIPE`).
    static var brokenPipe: Bool { errno == EPIPE }

    /// `SIGPIPE`, the signal a write to a pipe without a reader raises.
    static var brokenPipeSignal: Int32 { SIGPIPE }

    /// fnmatch(3) with no flags: whether `name` matches the shell pattern `pattern`.
    static func matches(_ pattern: String, _ name: String) -> Bool { fnmatch(pattern, name, 0) == 0 }

    /// The working folder (getcwd(3)), nil when it cannot be found.
    static func workingDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The processors online (sysconf(3)), at least 1.
    static var processorsOnline: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The size of the file at `path` (stat(2)), 0 when it cannot be stat'ed.
    static func fileSize(_ path: String) -> Int64 {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : 0
    }

    /// The size of the regular file at `path` (`-`: stdin), nil when it is not one or
    /// cannot be stat'ed.
    static func regularFileSize(_ path: String) -> Int? {
        var st = stat()
        let ok = path == "-" ? fstat(0, &st) == 0 : stat(path, &st) == 0
        return ok && (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : nil
    }

    /// stat(2) of the path `bytes` (links followed; any bytes, not only UTF-8), nil when it
    /// cannot be stat'ed.
    static func status(bytes path: [UInt8]) -> FileStatus? {
        var st = stat()
        return stat(cString(path), &st) == 0 ? FileStatus(st) : nil
    }

    /// lstat(2) of the path `bytes` (a link itself), nil when it cannot be stat'ed.
    static func linkStatus(bytes path: [UInt8]) -> FileStatus? {
        var st = stat()
        return lstat(cString(path), &st) == 0 ? FileStatus(st) : nil
    }

    /// The names in the folder at the path `bytes` as bytes (opendir(3), readdir(3)), in the
    /// order read, `.` and `..` included; nil when it cannot be opened.
    static func folderNames(bytes path: [UInt8]) -> [[UInt8]]? {
        guard let dir = opendir(cString(path)) else { return nil }
        defer { closedir(dir) }
        var names: [[UInt8]] = []
        while let entry = readdir(dir) { names.append(entryName(entry)) }
        return names
    }

    /// `path` as a NUL-terminated C string.
    private static func cString(_ path: [UInt8]) -> [CChar] { path.map { CChar(bitPattern: $0) } + [0] }

    /// Whether this process may execute the file at `path` (access(2) with `X_OK`).
    static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// The value of the environment variable `name` (getenv(3)), nil when it is not set.
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// The target of the symbolic link at `path` (readlink(2)), nil when it cannot be read.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP (a closed terminal) without SA_RESTART, so a blocked read returns and the
/// filter can save its state before exiting (``receivedSignal``, which `FilterRun` reads); the handler also wakes a
/// reader about to wait for input (``SignalWake``). SIGPIPE is ignored: write errors are handled.
enum Signals {
    static func install() {
        SignalWake.open()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { sig in SignalWake.note(sig) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        sigaction(SIGHUP, &action, nil)
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these blocked (the mask is inherited).
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        sigprocmask(SIG_UNBLOCK, &set, nil)
    }

    /// What SIGBUS says. Only a JSON state file is read through a memory mapping, so SIGBUS
    /// means another program truncated it while it was being read (the pages past its new
    /// end are gone); the process stops at once, without writing anything.
    private static let truncatedMapping: StaticString =
        "badgeflow: error: state file: another program truncated it while it was being read (SIGBUS); nothing was written\n"

    /// Turns SIGBUS into exit 3 with a message, instead of a crash. The handler only
    /// writes a constant and exits (both async-signal-safe).
    static func installBusHandler() {
        // Initialized here, not first in the handler.
        _ = truncatedMapping.utf8CodeUnitCount
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            _ = write(2, Signals.truncatedMapping.utf8Start, Signals.truncatedMapping.utf8CodeUnitCount)
            _exit(3)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGBUS, &action, nil)
    }

    /// The exit status a shell reports for death by `sig` (128 + sig).
    static func status(_ sig: Int32) -> Int32 { 128 + sig }
}
