// The `badgeflow` command's thin wrappers over the C library, for the files that need a few
// of its calls. The files built on the system calls (signals, the folder walk, the output
// file, `serve`'s exec) import the C library themselves.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BadgeFlow

extension System {
    /// unlink(2), its failure ignored.
    static func removeFile(_ path: String) { _ = unlink(path) }

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

    /// The file offset of `fd` (lseek(2)), negative on failure.
    static func currentOffset(_ fd: Int32) -> Int { Int(lseek(fd, 0, SEEK_CUR)) }
}
