import Foundation

/// What a child process exited with and wrote.
public struct ProcessResult: Sendable {
    /// The exit status (or the number of the signal that ended it).
    public let status: Int32
    /// Everything it wrote to stdout.
    public let stdout: String
    /// Everything it wrote to stderr.
    public let stderr: String

    /// A result as read elsewhere (from files a running process wrote, say).
    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// The lines of stdout.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs programs as a user would, for the end-to-end tests.
public enum ChildProcess {
    /// Runs `executable ARGS` with `input` on stdin, in `cwd`, with this process's
    /// environment changed by `environment` (nil: removed); waits for its exit.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", cwd: String? = nil,
        environment: [String: String?] = [:]
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        if !environment.isEmpty { process.environment = merged(environment) }
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            // A command that exits before reading all of its input (an error at start) makes
            // this write fail: SIGPIPE is blocked on this thread only (children are spawned
            // from others, with their usual signals), so it fails with EPIPE, and the
            // throwing write reports it instead of trapping.
            var pipe = sigset_t()
            sigemptyset(&pipe)
            sigaddset(&pipe, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipe, nil)
            try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errData = Guarded(Data())
        let errDone = DispatchSemaphore(value: 0)
        let errReader = Thread {
            errData.set(stderr.fileHandleForReading.readDataToEndOfFile())
            errDone.signal()
        }
        errReader.start()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errDone.wait()
        return ProcessResult(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: errData.get(), as: UTF8.self))
    }

    /// Runs `executable ARGS` as ``run(_:_:input:cwd:environment:)`` does, its blocking waits
    /// (the reads to the end of its output, its exit) on a thread of their own: the awaiting
    /// test holds no thread of Swift concurrency's cooperative pool meanwhile.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", cwd: String? = nil,
        environment: [String: String?] = [:]
    ) async throws -> ProcessResult {
        try await offThePool {
            try run(executable, arguments, input: input, cwd: cwd, environment: environment) as ProcessResult
        }
    }

    /// This process's environment with `changes` applied (nil: removed).
    public static func merged(_ changes: [String: String?]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in changes { env[k] = v }
        return env
    }

    /// Waits up to `seconds` for `process` to exit; false when it had not, and it is then
    /// killed (SIGKILL) and reaped, so a hang fails the test instead of the whole run.
    public static func exits(_ process: Process, within seconds: TimeInterval) -> Bool {
        if waitUntil(deadline: seconds, { !process.isRunning }) {
            process.waitUntilExit()
            return true
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return false
    }
}

/// Runs `body`, which blocks (waits for a child's exit, reads a pipe to its end), on a thread
/// of its own and awaits its result. Swift Testing runs tests on the cooperative pool, one
/// thread a core: a test that blocked on it would hold a thread other tests (and their time
/// limits) need; awaiting this holds none.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

extension Process {
    /// Waits for the exit (`waitUntilExit()`) on a thread of its own, holding no thread of the
    /// cooperative pool.
    public func exited() async {
        let process = UncheckedBox(self)
        _ = try? await offThePool { process.value.waitUntilExit() }
    }
}

/// A value handed to another thread that the test does not touch meanwhile.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
