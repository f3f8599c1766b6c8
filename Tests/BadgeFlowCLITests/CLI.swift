import BadgeFlowTestSupport
import Foundation

/// Runs the built `badgeflow` executable as a user would.
enum CLI {
    /// What a run exited with and wrote.
    typealias Run = ProcessResult

    static let packageRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// The executable beside the test bundle (works with any --scratch-path).
    static let executable: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("badgeflow").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return packageRoot + "/.build/debug/badgeflow"
    }()

    static func fixture(_ relative: String) -> String { packageRoot + "/Fixtures/" + relative }

    /// Runs `badgeflow ARGS` with `input` on stdin.
    @discardableResult
    static func run(
        _ arguments: [String], input: String = "", cwd: String? = nil,
        environment: [String: String?] = [:]
    ) throws -> Run {
        try ChildProcess.run(executable, arguments, input: input, cwd: cwd, environment: environment)
    }

    /// Runs `badgeflow ARGS` with `input` on stdin, holding no thread of the cooperative pool
    /// while it waits (see `offThePool`).
    @discardableResult
    static func run(
        _ arguments: [String], input: String = "", cwd: String? = nil,
        environment: [String: String?] = [:]
    ) async throws -> Run {
        try await ChildProcess.run(executable, arguments, input: input, cwd: cwd, environment: environment)
    }

    /// What a run with a real terminal (a pseudo-terminal) wrote to it.
    struct TerminalRun {
        let status: Int32
        /// Everything written to the terminal.
        let terminal: String
    }

    /// Runs `badgeflow ARGS` with stdin from /dev/null and the streams in `onTerminal`
    /// (1: stdout, 2: stderr) on a new pseudo-terminal; the others go to `stdoutFile`
    /// (stdout) or /dev/null (stderr).
    static func runOnTerminal(
        _ arguments: [String], onTerminal: Set<Int32>, stdoutFile: String? = nil,
        environment: [String: String?] = [:]
    ) throws -> TerminalRun {
        let master = PTY.openpt(O_RDWR | O_NOCTTY)
        guard master >= 0, PTY.grantpt(master) == 0, PTY.unlockpt(master) == 0, let name = PTY.ptsname(master) else {
            throw CocoaError(
                .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no pseudo-terminal: \(String(cString: strerror(errno)))"])
        }
        let slave = open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw CocoaError(.fileReadUnknown) }
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ChildProcess.merged(environment) }
        process.standardInput = FileHandle.nullDevice
        if onTerminal.contains(1) {
            process.standardOutput = terminal
        } else if let stdoutFile {
            _ = FileManager.default.createFile(atPath: stdoutFile, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutFile))
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        process.standardError = onTerminal.contains(2) ? terminal : FileHandle.nullDevice
        // Raw mode: the terminal passes bytes as written (no \n → \r\n).
        var t = termios()
        tcgetattr(slave, &t)
        cfmakeraw(&t)
        tcsetattr(slave, TCSANOW, &t)
        try process.run()
        try terminal.close()  // the child holds its own copies
        var data = Data()
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(master, &buf, buf.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }  // EIO once the child has closed its end
            data.append(contentsOf: buf[0..<n])
        }
        process.waitUntilExit()
        close(master)
        return TerminalRun(status: process.terminationStatus, terminal: String(decoding: data, as: UTF8.self))
    }
}

/// glibc's pseudo-terminal calls, which the Glibc module does not import (they need
/// _XOPEN_SOURCE): looked up in the C library itself.
enum PTY {
    private static func symbol<F>(_ name: String, as: F.Type) -> F {
        guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { fatalError("no \(name) in libc") }
        return unsafeBitCast(p, to: F.self)
    }
    static let openpt = symbol("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
    static let grantpt = symbol("grantpt", as: (@convention(c) (Int32) -> Int32).self)
    static let unlockpt = symbol("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
    static let ptsname = symbol("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
}
