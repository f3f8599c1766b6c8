import BadgeFlow
import BadgeFlowServe
import Foundation
import Testing

/// `badgeflow-serve` on a loopback port, with real HTTP requests on real sockets, over states
/// that the root package's `badgeflow filter` writes (also while it writes them).
@Suite struct ServeTests {
    static let formats = ["sqlite", "rocksdb"]

    @Test(arguments: formats) func answersWhatStateGetPrints(format: String) async throws {
        let dir = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/s." + format
        try Support.makeState(state)
        let expected = try Support.badgeflow(["state", "get", state, "u3", "--json"])
        try await Support.withServer(state: state) { port in
            let account = try await Support.get(port, "/v1/accounts/u3")
            #expect(account.status == 200)
            #expect(account.headers.lowercased().contains("content-type: application/json"))
            #expect(account.body == expected)

            let device = try await Support.get(port, "/v1/accounts/u3/devices/u3-pad")
            #expect(device.status == 200)
            let read = try StoredAccount.read(state: state, account: "u3")
            let found = try #require(read)
            let pad = try #require(found.device("u3-pad"))
            #expect(
                device.body
                    == #"{"account":"u3","device":"u3-pad","delivered":\#(pad.delivered),"total":\#(found.total),"stale":\#(pad.stale)}"#
                    + "\n")

            let health = try await Support.get(port, "/healthz")
            #expect(health.status == 200 && health.body == "ok\n")

            let metrics = try await Support.get(port, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.body.contains("\nbadgeflow_committed_seq 200\n"))
            #expect(metrics.body.contains("\nbadgeflow_accounts_stored 10\n"))
            #expect(metrics.body.contains(#"badgeflow_serve_requests_total{status="200"} 3"#))
        }
    }

    @Test(arguments: formats) func badRequestsGetJSONErrors(format: String) async throws {
        let dir = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/s." + format
        try Support.makeState(state)
        // A file beside the state that no path may reach.
        try "TOP-SECRET-CONTENT".write(toFile: dir + "/secret", atomically: true, encoding: .utf8)
        try await Support.withServer(state: state) { port in
            func check(_ target: [UInt8], _ status: Int, _ code: String, line: Int = #line) async throws {
                let r = try await Support.get(port, target)
                let where_ = SourceLocation(fileID: #fileID, filePath: #filePath, line: line, column: 1)
                #expect(r.status == status, "\(String(decoding: target, as: UTF8.self))", sourceLocation: where_)
                #expect(r.headers.lowercased().contains("content-type: application/json"), sourceLocation: where_)
                #expect(r.body.hasPrefix(#"{"error":{"code":"\#(code)","message":""#), "\(r.body)", sourceLocation: where_)
                #expect(!r.body.contains("TOP-SECRET"), sourceLocation: where_)
            }
            func check(_ target: String, _ status: Int, _ code: String, line: Int = #line) async throws {
                try await check(Array(target.utf8), status, code, line: line)
            }
            try await check("/v1/accounts/nobody", 404, "not-found")
            try await check("/v1/accounts/u3/devices/nothing", 404, "not-found")
            try await check("/v1/accounts/nobody/devices/u3-pad", 404, "not-found")
            try await check("/v1/accounts/u3%ZZ", 400, "bad-request")
            try await check("/v1/accounts/u3%4", 400, "bad-request")
            try await check("/v1/accounts/u%00", 400, "bad-request")
            try await check("/v1/accounts/%FF%FE", 400, "bad-request")
            try await check("/v1/accounts/" + String(repeating: "x", count: 1025), 400, "bad-request")
            // Escapes reach only the state: an id with a slash or dots is a key, never a path.
            try await check("/v1/accounts/..%2F..%2Fsecret", 404, "not-found")
            try await check("/v1/accounts/%2E%2E", 404, "not-found")
            try await check("/v1/accounts/..", 404, "not-found")
            try await check("/v1/accounts/../../secret", 404, "no-route")
            try await check("/../../secret", 404, "no-route")
            try await check("/v1/accounts/u3%2Fdevices%2Fu3-pad", 404, "not-found")
            try await check("/v1/accounts/u3/devices/u3-pad%00", 400, "bad-request")
            try await check("/v1/nothing", 404, "no-route")
            // A NUL byte in the request line itself: refused by the HTTP parser or as a route.
            let raw = try await Support.get(port, Array("/v1/accounts/u".utf8) + [0] + Array("3".utf8))
            #expect(raw.status == 400 || raw.status == 404)
            #expect(!raw.body.contains("TOP-SECRET"))
            // Percent-decoded once: %2533 is the id "%33", not "3".
            try await check("/v1/accounts/u%2533", 404, "not-found")
            #expect(try await Support.get(port, "/v1/accounts/u%33").status == 200)

            for (method, target) in [("POST", "/v1/accounts/u3"), ("DELETE", "/v1/accounts/u3"), ("PUT", "/nothing")] {
                let r = try await Support.get(port, target, method: method)
                #expect(r.status == 405, "\(method) \(target)")
                #expect(r.headers.lowercased().contains("allow: get, head"), "\(r.headers)")
                #expect(r.body.hasPrefix(#"{"error":{"code":"method-not-allowed","#), "\(r.body)")
            }
            #expect(try await Support.get(port, "/v1/accounts/u3").status == 200)
        }
    }

    @Test func slowClientsAndHugeHeadersDoNotStopOtherReads() async throws {
        let dir = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/s.sqlite"
        try Support.makeState(state)
        try await Support.withServer(state: state) { port in
            // 64 clients that send half a request line and then nothing.
            var slow: [Support.Connection] = []
            for _ in 0..<64 {
                let c = try Support.Connection(port: port)
                c.send(Array("GET /v1/acc".utf8))
                slow.append(c)
            }
            // One that sends 1 MiB of headers.
            let huge = try Support.Connection(port: port)
            var request = Array("GET /v1/accounts/u3 HTTP/1.1\r\nHost: x\r\n".utf8)
            for i in 0..<1024 { request += Array("X-Pad-\(i): \(String(repeating: "p", count: 1000))\r\n".utf8) }
            request += Array("\r\n".utf8)
            let bytes = request
            let answer = await Support.blocking {
                huge.send(bytes)
                return huge.readAll()
            }
            // Refused (431/400) or the connection closed: never an account.
            #expect(!String(decoding: answer, as: UTF8.self).contains(#""account":"u3""#))
            let started = Date()
            for _ in 0..<20 { #expect(try await Support.get(port, "/v1/accounts/u3").status == 200) }
            #expect(Date().timeIntervalSince(started) < 5)
            _ = slow
        }
    }

    /// The reads of a state while `badgeflow filter` commits checkpoints to it: every answer is
    /// a whole account (never torn); the writer runs to the end; once it has, the server gives
    /// its last checkpoint within a refresh.
    @Test(arguments: formats) func readsWhileAFilterWrites(format: String) async throws {
        let dir = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/s." + format
        try Support.makeState(state, count: 100, accounts: 20)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: Support.badgeflow)
        writer.arguments = ["filter", "--numbered", "--resume", "--checkpoint", "0.05", "--state", state]
        let input = Pipe()
        writer.standardInput = input
        writer.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try writer.run()
        let total = 6_000
        try await Support.withServer(state: state, refresh: 0.05) { port in
            let feeder = Task.detached {
                // In bursts, so that checkpoints commit between them.
                for burst in 0..<30 {
                    let first = 101 + burst * (total / 30)
                    try input.fileHandleForWriting.write(
                        contentsOf: Data(Support.events(from: first, count: total / 30, accounts: 20).utf8))
                    try await Task.sleep(for: .milliseconds(20))
                }
                try input.fileHandleForWriting.close()
            }
            var reads = 0
            var seqs: [Int] = []
            while !feeder.isCancelled, writer.isRunning || reads < 50 {
                let r = try await Support.get(port, "/v1/accounts/u\(reads % 20)")
                #expect(r.status == 200)
                let object = try #require(try JSONSerialization.jsonObject(with: Data(r.body.utf8)) as? [String: Any])
                let tree = try #require(object["tree"] as? [[String: Any]])
                // Whole: the root's count is the total, and both devices are there.
                #expect((tree.first?["count"] as? Int ?? 0) == object["total"] as? Int)
                #expect((object["devices"] as? [Any])?.count == 2)
                let metrics = try await Support.get(port, "/metrics").body
                if let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix("badgeflow_committed_seq ") }) {
                    seqs.append(Int(line.split(separator: " ")[1]) ?? -1)
                }
                reads += 1
            }
            try await feeder.value
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
            #expect(seqs == seqs.sorted(), "the seq served never goes back")
            // Within a few refreshes of the writer's end, the server shows its last checkpoint.
            let last = 100 + total
            var seen = 0
            for _ in 0..<200 {
                let metrics = try await Support.get(port, "/metrics").body
                seen =
                    metrics.split(separator: "\n").first { $0.hasPrefix("badgeflow_committed_seq ") }
                    .flatMap { Int($0.split(separator: " ")[1]) } ?? 0
                if seen == last { break }
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(seen == last)
            for a in 0..<20 {
                let expected = try Support.badgeflow(["state", "get", state, "u\(a)", "--json"])
                #expect(try await Support.get(port, "/v1/accounts/u\(a)").body == expected)
            }
            #expect(reads >= 50)
        }
    }

    @Test func theExecutableRefusesJSONAndStopsOnSIGTERM() async throws {
        let dir = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A JSON state: exit 3 with the reason.
        try Support.makeState(dir + "/s.json")
        let refused = Process()
        refused.executableURL = URL(fileURLWithPath: Support.serveExecutable)
        refused.arguments = ["--state", dir + "/s.json"]
        let refusedErr = Pipe()
        refused.standardError = refusedErr
        try refused.run()
        let why = String(decoding: refusedErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        refused.waitUntilExit()
        #expect(refused.terminationStatus == 3)
        #expect(why.contains("a JSON state is saved whole at the end of a run"))

        // Loopback unless told otherwise.
        let help = Process()
        help.executableURL = URL(fileURLWithPath: Support.serveExecutable)
        help.arguments = ["--help"]
        let helpOut = Pipe()
        help.standardOutput = helpOut
        try help.run()
        let text = String(decoding: helpOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        help.waitUntilExit()
        #expect(text.contains("default: 127.0.0.1:8080"))

        let state = dir + "/s.rocksdb"
        try Support.makeState(state)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: Support.serveExecutable)
        server.arguments = ["--state", state, "--listen", "127.0.0.1:0"]
        let err = Pipe()
        server.standardError = err
        try server.run()
        // "badgeflow-serve: listening on http://127.0.0.1:PORT (state …)"
        var announced = ""
        let handle = err.fileHandleForReading
        while !announced.contains("\n") {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            announced += String(decoding: chunk, as: UTF8.self)
        }
        let port = try #require(
            announced.range(of: "http://127.0.0.1:").flatMap { Int(announced[$0.upperBound...].prefix { $0.isNumber }) }, "\(announced)")
        #expect(try await Support.get(port, "/v1/accounts/u1").status == 200)
        // A connection held open while SIGTERM comes: the server still stops.
        let held = try Support.Connection(port: port)
        held.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        kill(server.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(20)
        while server.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!server.isRunning)
        if server.isRunning { kill(server.processIdentifier, SIGKILL) }
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
    }
}
