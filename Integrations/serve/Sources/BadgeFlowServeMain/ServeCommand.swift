import ArgumentParser
import BadgeFlow
import BadgeFlowServe
import Dispatch
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry point: Swift concurrency's jobs go to SwiftNIO's event loops before anything
/// runs, then ``ServeCommand`` runs. A request's handler (a task) then runs on the event loop
/// that reads and writes its socket, with no hop to the concurrency pool's threads and back:
/// two thread wake-ups a request fewer, which is most of a read's latency on a busy machine.
@main
enum ServeEntry {
    static func main() {
        if !NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
            // Still correct, one thread hop a request slower (e.g. a compiler NIO does not know).
            ServeCommand.stderr("badgeflow-serve: note: Swift concurrency keeps its own threads (SwiftNIO could not take them over)\n")
        }
        Task {
            // As `badgeflow` does: a usage error (a missing --state, a bad --listen, an
            // unknown option) is exit 2, not ArgumentParser's 64; help and --version exit 0.
            do {
                let parsed = try ServeCommand.parseAsRoot(Array(CommandLine.arguments.dropFirst()))
                if let command = parsed as? ServeCommand {
                    try await command.run()
                } else {
                    // `--help` and the like: ArgumentParser's own command, which prints.
                    var other = parsed
                    try other.run()
                }
                exit(0)
            } catch let code as ExitCode {
                ServeCommand.exit(withError: code)
            } catch {
                if ServeCommand.exitCode(for: error) == .success { ServeCommand.exit(withError: error) }
                ServeCommand.stderr(ServeCommand.fullMessage(for: error) + "\n")
                exit(2)
            }
        }
        dispatchMain()
    }
}

/// `badgeflow-serve` (also run as `badgeflow serve`): HTTP reads of a live state.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badgeflow-serve",
        abstract: "Answer HTTP reads of an SQLite or RocksDB state while a filter writes it.",
        discussion: """
            GET /v1/accounts/{id} (what `badgeflow state get FILE ID --json` prints), \
            GET /v1/accounts/{id}/devices/{device} ({"account","device","delivered","total","stale"}), \
            GET /metrics (Prometheus text), GET /healthz. Reads never block the filter; they are \
            at most one checkpoint (plus --refresh) behind it. Stops gracefully on SIGTERM or SIGINT.
            Exit codes: 0 stopped by a signal, 2 usage, 3 the state cannot be read (a JSON state \
            is refused: it is saved only at the end of a run), 4 cannot listen.
            """
    )

    @Option(help: ArgumentHelp("The state: FILE.sqlite, FILE.db or FILE.rocksdb (a folder).", valueName: "FILE"))
    var state: String

    @Option(help: ArgumentHelp("Where to listen (loopback unless told otherwise; [::1]:PORT for IPv6).", valueName: "HOST:PORT"))
    var listen = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("Seconds between looks at the state for a new checkpoint.", valueName: "SECONDS"))
    var refresh = 1.0

    func validate() throws {
        guard Self.address(listen) != nil else {
            throw ValidationError("--listen takes HOST:PORT (127.0.0.1:8080, [::1]:8080, 0.0.0.0:8080), got \"\(listen)\"")
        }
        guard refresh > 0, refresh <= 3600 else { throw ValidationError("--refresh takes seconds above 0, at most 3600") }
    }

    /// `HOST:PORT` split (`[v6]:PORT` too); nil when malformed.
    static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "badgeflow-serve")
        logger.logLevel = .notice
        guard let (host, port) = Self.address(listen) else { throw ExitCode(2) }
        let app: ServeApp
        do {
            app = try ServeApp(options: ServeOptions(state: state, host: host, port: port, refresh: refresh))
        } catch {
            Self.stderr("badgeflow-serve: error: state file \(error.description)\n")
            throw ExitCode(3)
        }
        let shown = host.contains(":") ? "[\(host)]" : host
        do {
            try await app.run(logger: logger) { bound in
                Self.stderr("badgeflow-serve: listening on http://\(shown):\(bound) (state \(state))\n")
            }
        } catch {
            Self.stderr("badgeflow-serve: error: cannot serve on \(listen): \(error)\n")
            throw ExitCode(4)
        }
    }

    static func stderr(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
