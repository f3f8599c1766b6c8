import BadgeFlowServe
import Foundation
import Logging
import ServiceLifecycle

/// Paths, processes and a raw HTTP/1.1 client over a loopback socket (every byte of the
/// request as written: no client normalises `..`, `%2F` or NUL away).
enum Support {
    /// The repository's root (this package is Integrations/serve in it).
    static let repositoryRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(5)
        return parts.joined(separator: "/")
    }()

    /// The root package's `badgeflow` (BADGEFLOW_BIN, else the root's debug build, which
    /// `make serve-test` makes first).
    static let badgeflow: String = {
        ProcessInfo.processInfo.environment["BADGEFLOW_BIN"] ?? repositoryRoot + "/.build/debug/badgeflow"
    }()

    /// `badgeflow-serve` built beside this test bundle.
    static let serveExecutable: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("badgeflow-serve").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return repositoryRoot + "/Integrations/serve/.build/debug/badgeflow-serve"
    }()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `badgeflow ARGS` with `input` on stdin; its stdout, or a failure naming its stderr.
    @discardableResult
    static func badgeflow(_ arguments: [String], input: String = "") throws -> String {
        guard FileManager.default.isExecutableFile(atPath: badgeflow) else {
            throw Failure(
                description: "no \(badgeflow): run `swift build --product badgeflow` in the repository root (make serve-test does)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: badgeflow)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errBox = Box()
        let errDone = DispatchSemaphore(value: 0)
        Thread {
            errBox.data = stderr.fileHandleForReading.readDataToEndOfFile()
            errDone.signal()
        }.start()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errDone.wait()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description:
                    "badgeflow \(arguments.joined(separator: " ")): exit \(process.terminationStatus): \(String(decoding: errBox.data, as: UTF8.self))"
            )
        }
        return String(decoding: out, as: UTF8.self)
    }

    final class Box: @unchecked Sendable { var data = Data() }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "badgeflow-serve-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Numbered event lines (`N<TAB>JSON`) from `first` on: pushes, clears and a device change
    /// over `accounts` accounts with two devices each.
    static func events(from first: Int, count: Int, accounts: Int) -> String {
        var out = ""
        for n in first..<(first + count) {
            let a = n % accounts
            let device = (n / accounts) % 2 == 0 ? "phone" : "pad"
            let line: String
            switch n % 5 {
            case 0: line = #"{"op":"clear","account":"u\#(a)","device":"u\#(a)-\#(device)","at":\#(n),"path":"root.chat.t\#(n % 3)"}"#
            default:
                line =
                    #"{"op":"push","account":"u\#(a)","device":"u\#(a)-\#(device)","at":\#(n),"payload":{"aps":{"alert":"m\#(n)","thread-id":"t\#(n % 3)"}}}"#
            }
            out += "\(n)\t\(line)\n"
        }
        return out
    }

    /// A state at `path` (SQLite or RocksDB by name) after `count` events over `accounts` accounts.
    static func makeState(_ path: String, count: Int = 200, accounts: Int = 10) throws {
        try badgeflow(["filter", "--numbered", "--state", path], input: events(from: 1, count: count, accounts: accounts))
    }

    /// Runs the server on a free loopback port around `body` (given the port), then stops it
    /// gracefully.
    static func withServer<T: Sendable>(
        state: String, refresh: Double = 0.05, _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        let app = try ServeApp(options: ServeOptions(state: state, port: 0, refresh: refresh))
        defer { app.close() }
        var logger = Logger(label: "badgeflow-serve-test")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let service = app.application(logger: logger) { continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var it = ports.makeAsyncIterator()
            guard let port = await it.next(), port > 0 else { throw Failure(description: "the server did not start") }
            let result: T
            do { result = try await body(port) } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            for try await _ in tasks {}
            return result
        }
    }

    /// One HTTP response: its status and body.
    struct Response {
        var status: Int
        var headers: String
        var body: String
    }

    /// A connected loopback socket (closed on deinit).
    final class Connection: @unchecked Sendable {
        let fd: Int32

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let ok = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard ok == 0 else {
                close(fd)
                throw Failure(description: "connect: \(errno)")
            }
        }

        deinit { close(fd) }

        /// Sends `bytes`; false when the peer closed.
        @discardableResult
        func send(_ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return false }
                sent += n
            }
            return true
        }

        /// Everything until the peer closes (or 10 s pass).
        func readAll() -> [UInt8] {
            var out: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break }
                out += buffer[0..<n]
            }
            return out
        }
    }

    /// `GET target` (raw bytes of the request target) with `Connection: close`, on a thread
    /// of its own (a blocking socket must not hold a thread of the pool the server answers on).
    static func get(_ port: Int, _ target: [UInt8], method: String = "GET") async throws -> Response {
        let bytes = await blocking {
            guard let connection = try? Connection(port: port) else { return [UInt8]() }
            connection.send(Array("\(method) ".utf8) + target + Array(" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
            return connection.readAll()
        }
        return try parse(bytes)
    }

    static func get(_ port: Int, _ target: String, method: String = "GET") async throws -> Response {
        try await get(port, Array(target.utf8), method: method)
    }

    /// `body` on a new thread, awaited.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> Response {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n"), text.hasPrefix("HTTP/1.1 "),
            let status = Int(text.dropFirst(9).prefix(3))
        else { throw Failure(description: "not an HTTP response: \(text.prefix(200))") }
        let headers = String(text[..<end.lowerBound])
        var body = String(text[end.upperBound...])
        // Chunked bodies (no Content-Length): join the chunks.
        if headers.lowercased().contains("transfer-encoding: chunked") {
            var joined = ""
            var rest = Substring(body)
            while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 {
                let start = line.upperBound
                let stop = rest.utf8.index(start, offsetBy: size)
                joined += rest[start..<stop]
                rest = rest[stop...].dropFirst(2)
            }
            body = joined
        }
        return Response(status: status, headers: headers, body: body)
    }
}
