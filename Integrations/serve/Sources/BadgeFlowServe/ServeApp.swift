import BadgeFlow
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `badgeflow serve`: HTTP reads of a live state (RunningAsAService, "Reads over HTTP"), on Hummingbird.
///
/// - `GET /v1/accounts/{id}`: the account, byte for byte what `badgeflow state get FILE ID
///   --json` prints (``StoredAccount/jsonLine``);
/// - `GET /v1/accounts/{id}/devices/{device}`: `{"account","device","delivered","total","stale"}`;
/// - `GET /metrics`: Prometheus text (the state's committed seq and counts, requests by status);
/// - `GET /healthz`: `ok` while the state can be read.
///
/// Ids are path segments, percent-decoded once (`%2F` is a slash inside the id, never a
/// separator); a segment that is empty, badly escaped, not UTF-8, longer than
/// ``maxIdBytes`` or holding a control character (NUL …) is 400. Whatever the path, it only
/// names a key of the state: nothing else (no file) is ever looked up. Errors are JSON:
/// `{"error":{"code","message"}}`.
public struct ServeOptions: Sendable {
    /// The state file or folder (`.sqlite`, `.db`, `.rocksdb`).
    public var state: String
    /// Where to listen: a host (loopback by default) and a port (0: any free port).
    public var host: String
    /// The TCP port (0: one the system picks; ``ServeApp/onListening`` names it).
    public var port: Int
    /// How often the state is looked at and, when a checkpoint was committed, opened again:
    /// a read is at most this much (plus a checkpoint) behind the filter. Seconds.
    public var refresh: Double
    /// Seconds before an idle connection is closed (a client that sends nothing).
    public var idleTimeout: Int64

    /// Options with the defaults: loopback, port 8080, a refresh every second (the filter's
    /// default `--checkpoint`), idle connections closed after 30 s.
    public init(state: String, host: String = "127.0.0.1", port: Int = 8080, refresh: Double = 1, idleTimeout: Int64 = 30) {
        self.state = state
        self.host = host
        self.port = port
        self.refresh = refresh
        self.idleTimeout = idleTimeout
    }
}

/// The server: a ``LiveState`` kept open and refreshed, and the routes over it.
public struct ServeApp: Sendable {
    /// The longest id accepted (bytes, decoded).
    public static let maxIdBytes = 1024

    let options: ServeOptions
    let state: LiveState
    let counters = Counters()

    /// Opens the state (refusing a JSON one, or a missing one).
    ///
    /// - Throws: `StateFile.Failure` naming the state and why.
    public init(options: ServeOptions) throws(StateFile.Failure) {
        self.options = options
        state = try LiveState(path: options.state)
    }

    /// Runs until SIGTERM or SIGINT (then finishes the requests under way and closes the
    /// state); `onListening` gets the bound port.
    public func run(logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let app = application(logger: logger, onListening: onListening)
        defer { state.close() }
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    /// Closes the state (``run(logger:onListening:)`` does at the end).
    public func close() { state.close() }

    /// The Hummingbird application (tests run it in a `ServiceGroup` of their own).
    public func application(
        logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(),
            server: .http1(configuration: .init(idleTimeout: .seconds(options.idleTimeout))),
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "badgeflow-serve"),
            services: [Refresher(state: state, interval: options.refresh, counters: counters, logger: logger)],
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: JSONErrors(counters: counters))
        router.get("/healthz") { _, _ in
            guard state.figures != nil else { throw ServeError.state("the state is closed") }
            return Self.text("ok\n")
        }
        router.get("/metrics") { _, _ in Self.text(metrics(), type: "text/plain; version=0.0.4; charset=utf-8") }
        router.get("/v1/accounts/:id") { _, context in
            let id = try Self.id(context.parameters.get("id"), "account")
            return Self.json(try account(id).jsonLine)
        }
        router.get("/v1/accounts/:id/devices/:device") { _, context in
            let id = try Self.id(context.parameters.get("id"), "account")
            let device = try Self.id(context.parameters.get("device"), "device")
            guard let line = try account(id).deviceJSONLine(device) else {
                throw ServeError.notFound("account \"\(id)\" has no device \"\(device)\"")
            }
            return Self.json(line)
        }
        return router
    }

    /// The account `id`, or a 404.
    func account(_ id: String) throws -> StoredAccount {
        let found: StoredAccount?
        do { found = try state.account(id) } catch { throw ServeError.state(error.description) }
        guard let found else { throw ServeError.notFound("no account \"\(id)\" in the state") }
        return found
    }

    /// The Prometheus text of `GET /metrics`.
    func metrics() -> String {
        var text = PrometheusText()
        let figures = state.figures
        text.family(
            "badgeflow_committed_seq", help: "The seq of the last checkpoint this server reads.", type: .gauge,
            samples: [.init(value: figures?.seq ?? 0)])
        text.family(
            "badgeflow_accounts_stored", help: "Accounts the state holds as of that checkpoint.", type: .gauge,
            samples: [.init(value: figures?.accounts ?? 0)])
        text.family(
            "badgeflow_devices_stored", help: "Devices of those accounts.", type: .gauge, samples: [.init(value: figures?.devices ?? 0)])
        text.family(
            "badgeflow_marks_stored", help: "Marks of those accounts.", type: .gauge, samples: [.init(value: figures?.marks ?? 0)])
        text.family(
            "badgeflow_serve_state_reopens_total", help: "Times the state was opened again after a checkpoint.", type: .counter,
            samples: [.init(value: figures?.reopens ?? 0)])
        let snapshot = counters.snapshot()
        text.family(
            "badgeflow_serve_refresh_errors_total", help: "Refreshes whose open of the state failed (reads went on from the last one).",
            type: .counter, samples: [.init(value: snapshot.refreshErrors)])
        text.family(
            "badgeflow_serve_requests_total", help: "HTTP requests answered, by status.", type: .counter,
            samples: snapshot.requests.sorted { $0.key < $1.key }.map { .init(labels: [("status", String($0.key))], value: $0.value) })
        return text.string
    }

    /// A path segment percent-decoded once, checked (``maxIdBytes``, UTF-8, no control
    /// character); a 400 otherwise.
    static func id(_ raw: String?, _ what: String) throws -> String {
        guard let raw, !raw.isEmpty else { throw ServeError.badRequest("the \(what) id is empty") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.utf8.count)
        var it = raw.utf8.makeIterator()
        while let b = it.next() {
            guard b == UInt8(ascii: "%") else {
                bytes.append(b)
                continue
            }
            guard let h = it.next().flatMap(hex), let l = it.next().flatMap(hex) else {
                throw ServeError.badRequest("the \(what) id has a malformed percent escape (%XX with two hex digits)")
            }
            bytes.append(h << 4 | l)
        }
        guard bytes.count <= maxIdBytes else {
            throw ServeError.badRequest("the \(what) id is longer than \(maxIdBytes) bytes")
        }
        guard let id = String(validating: bytes, as: UTF8.self) else {
            throw ServeError.badRequest("the \(what) id is not UTF-8")
        }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw ServeError.badRequest("the \(what) id holds a control character (NUL, newline …)")
        }
        return id
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func text(_ text: String, type: String = "text/plain; charset=utf-8") -> Response {
        Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

/// What a request failed with, as an HTTP status and an error code.
enum ServeError: Error {
    case badRequest(String)
    case notFound(String)
    case state(String)

    var status: HTTPResponse.Status {
        switch self {
        case .badRequest: .badRequest
        case .notFound: .notFound
        case .state: .internalServerError
        }
    }

    var code: String {
        switch self {
        case .badRequest: "bad-request"
        case .notFound: "not-found"
        case .state: "state-error"
        }
    }

    var message: String {
        switch self {
        case .badRequest(let m), .notFound(let m), .state(let m): m
        }
    }
}

/// Turns every error into a JSON body (`{"error":{"code","message"}}`) and counts the
/// responses by status. Every resource is read-only: a method other than GET or HEAD is 405
/// with `Allow: GET, HEAD`, whatever the path.
struct JSONErrors: RouterMiddleware {
    typealias Context = BasicRequestContext
    let counters: Counters

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if request.method != .get && request.method != .head {
            response = Self.body(.methodNotAllowed, "method-not-allowed", "only GET (and HEAD) are served")
            response.headers[.allow] = "GET, HEAD"
            counters.count(response.status.code)
            return response
        }
        do {
            response = try await next(request, context)
        } catch let error as ServeError {
            response = Self.body(error.status, error.code, error.message)
        } catch let error as HTTPError {
            switch error.status {
            case .notFound:
                response = Self.body(
                    .notFound, "no-route", "no such path; try /v1/accounts/{id}, /v1/accounts/{id}/devices/{device}, /metrics, /healthz")
            default:
                response = Self.body(error.status, "http-error", error.body ?? error.status.reasonPhrase)
            }
        } catch {
            response = Self.body(.internalServerError, "internal", "\(error)")
        }
        counters.count(response.status.code)
        return response
    }

    static func body(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("error")
        w.beginObject()
        w.key("code"); w.string(code)
        w.key("message"); w.string(message)
        w.endObject()
        w.endObject()
        w.newline()
        return ServeApp.json(w.bytes, status: status)
    }
}

/// Requests by status and failed refreshes, for `/metrics`.
final class Counters: Sendable {
    struct Snapshot {
        var requests: [Int: Int] = [:]
        var refreshErrors = 0
    }
    private let values = Mutex(Snapshot())

    func count(_ status: Int) { values.withLock { $0.requests[status, default: 0] += 1 } }
    func refreshFailed() { values.withLock { $0.refreshErrors += 1 } }
    func snapshot() -> Snapshot { values.withLock { $0 } }
}

/// Looks at the state every `interval` seconds and opens it again after a checkpoint, on
/// NIO's thread pool (an open of a large RocksDB state takes tens of milliseconds: never on
/// a thread that answers requests).
struct Refresher: Service {
    let state: LiveState
    let interval: Double
    let counters: Counters
    let logger: Logger

    func run() async throws {
        let state = self.state
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
                do {
                    _ = try await NIOThreadPool.singleton.runIfActive { try state.refresh() }
                } catch is CancellationError {
                    return
                } catch {
                    counters.refreshFailed()
                    logger.warning("cannot open the state again (reads go on from the last open): \(error)")
                }
            }
        }
    }
}
