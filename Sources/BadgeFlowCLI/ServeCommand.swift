import ArgumentParser
import BadgeFlow

/// `badgeflow serve`: HTTP reads of a live state, by `badgeflow-serve` (the package in
/// `Integrations/serve`), which this command finds and runs in its place with the same
/// arguments. The server's dependencies (SwiftNIO, Hummingbird) stay out of `badgeflow` and
/// of every app that depends on the library.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve reads of a live \(StateFormat.titles(StateFormat.liveReadable)) state over HTTP (runs badgeflow-serve).",
        discussion: """
            Runs badgeflow-serve, found beside this executable or on PATH, with the same \
            arguments: badgeflow serve --state FILE [--listen HOST:PORT] [--refresh SECONDS]. \
            GET /v1/accounts/ID, GET /v1/accounts/ID/devices/DEVICE, GET /metrics and GET /healthz \
            answer while a filter writes the state. badgeflow-serve is built from Integrations/serve \
            (make install-serve); without it, exit 4.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "badgeflow-serve's arguments (--state FILE, --listen HOST:PORT, ...).")
    var arguments: [String] = []

    /// The executable's name.
    static let server = "badgeflow-serve"

    func run() throws {
        guard let path = Self.locate() else {
            Console.error(
                "badgeflow: serve: \(Self.server) was not found beside this badgeflow or on PATH; build and install it from Integrations/serve (make install-serve)"
            )
            throw Exit.io
        }
        // Replaces this process: signals, exit code and stdio are the server's own.
        let argv = [path] + arguments
        let reason = System.execute(path, argv)
        Console.error("badgeflow: serve: cannot run \(path): \(reason)")
        throw Exit.io
    }

    /// `badgeflow-serve` beside the running executable (an install puts both in one
    /// folder), else the first on PATH; nil when there is none.
    static func locate() -> String? {
        var candidates: [String] = []
        if let exe = executablePath(), let slash = exe.lastIndex(of: "/") {
            candidates.append(String(exe[..<slash]) + "/" + server)
        }
        if let path = System.environment("PATH") {
            for dir in path.split(separator: ":", omittingEmptySubsequences: true) { candidates.append("\(dir)/\(server)") }
        }
        return candidates.first { path in
            System.status(path)?.isRegular == true && System.isExecutable(path)
        }
    }

    /// The running executable's path (Linux: /proc/self/exe), nil when unknown.
    private static func executablePath() -> String? {
        #if os(Linux)
        System.linkTarget("/proc/self/exe")
        #else
        return CommandLine.arguments.first.flatMap { $0.contains("/") ? $0 : nil }
        #endif
    }
}
