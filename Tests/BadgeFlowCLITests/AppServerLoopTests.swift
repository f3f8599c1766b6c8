import BadgeFlowTestSupport
import Foundation
import Testing

/// The whole loop of the EmbeddingTheTree article ("server events"), three real processes: the app
/// (`SharedFileHelper app`: a long-lived BadgeCenter that observes, reads, mutes and
/// unmutes through the shared file), its Notification Service Extension
/// (`SharedFileHelper extension`: each push applied through the shared file), and the server,
/// `badgeflow filter` with the same rules, fed the pushes and the app's server events (sent
/// at random moments, some twice, some again after the app was killed before acknowledging).
@Suite(.serialized) struct AppServerLoopTests {
    /// A child process spoken to one line at a time.
    final class Peer {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var buffer: [UInt8] = []

        init(_ executable: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            var environment = ProcessInfo.processInfo.environment
            environment["ASAN_OPTIONS"] = [environment["ASAN_OPTIONS"], "detect_leaks=0"].compactMap { $0 }.joined(separator: ":")
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        func send(_ line: String) throws {
            try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        }

        /// The next line it writes (nil once it has exited).
        func readLine() -> String? {
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { return nil }
                buffer.append(contentsOf: data)
            }
        }

        /// Sends a line and returns the answer.
        func ask(_ line: String) throws -> String {
            try send(line)
            guard let answer = readLine() else { throw LoopError.exited(line) }
            return answer
        }

        func kill() {
            Darwinless.kill(process.processIdentifier)
            process.waitUntilExit()
        }

        func close() async -> Int32 {
            try? input.fileHandleForWriting.close()
            await process.exited()
            return process.terminationStatus
        }
    }

    enum LoopError: Error {
        case exited(String)
        case unexpected(String)
    }

    enum Darwinless {
        static func kill(_ pid: Int32) { _ = Foundation.kill(pid, SIGKILL) }
    }

    static let rules = """
        {"version":1,"root":"root","icon":"tree","maxDisplay":99,
         "display":{"root.me":"dot"},
         "contribute":{"root.chat.muted":"none"},
         "rules":[{"name":"chat","match":{"/aps/thread-id":{"exists":true}},
                   "path":"root.chat.{/aps/thread-id}","action":"increment"}]}
        """

    /// The helper executable beside `badgeflow`.
    static var helper: String {
        URL(fileURLWithPath: CLI.executable).deletingLastPathComponent().appendingPathComponent("SharedFileHelper").path
    }

    static func json(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    static func total(_ answer: String) throws -> Int {
        guard answer.hasPrefix("total "), let n = Int(answer.dropFirst(6)) else { throw LoopError.unexpected(answer) }
        return n
    }

    struct Figures: CustomStringConvertible {
        var steps = 0, pushes = 0, reads = 0, settings = 0, eventsSent = 0, resent = 0, kills = 0
        var checks = 0, mismatches = 0
        var description: String {
            "steps \(steps), pushes \(pushes), reads \(reads), mutes/unmutes \(settings), events sent \(eventsSent) "
                + "(re-sent \(resent)), app kills \(kills), icon checks \(checks), mismatches \(mismatches)"
        }
    }

    @Test func theServersIconIsTheAppsTotalAfterEveryStep() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.helper) else {
            Issue.record("SharedFileHelper was not built beside \(CLI.executable)")
            return
        }
        try await TemporaryFolder.with { dir in
            try Data(Self.rules.utf8).write(to: URL(fileURLWithPath: dir + "/rules.json"))
            let file = dir + "/badges.dat"
            let filter = try Peer(CLI.executable, ["filter", "--rules", dir + "/rules.json", "--line-buffered"])
            let extensionProcess = try Peer(Self.helper, ["extension", file])
            var app = try Peer(Self.helper, ["app", file])
            _ = try app.ask("login A phone")

            var rng = SplitMix64(seed: 4_404)
            var figures = Figures()
            var serverIcon = 0
            var delivered: [String: Int] = [:]
            var seen = Set<String>()
            var decrementSum = 0
            var measuredDrops = 0

            /// Applies a result line to what the server has delivered to each device.
            func note(_ result: String, device: String?, reporting: Bool) throws {
                let r = Self.json(result)
                if r["error"] != nil { throw LoopError.unexpected(result) }
                guard let icon = r["icon"] as? Int else { return }
                serverIcon = icon
                if r["duplicate"] as? Bool == true { return }
                if let device, reporting || (r["kind"] as? String).map({ ["alert", "badge-only", "none"].contains($0) }) == true {
                    delivered[device] = icon
                }
                for update in r["badgeUpdates"] as? [[String: Any]] ?? [] {
                    if let d = update["device"] as? String, let b = update["badge"] as? Int { delivered[d] = b }
                }
            }

            // Does this filter know `contribute` (the server half of issue 44)?
            let probe = try filter.ask(#"{"op":"contribute","account":"probe","path":"root.x","mode":"none"}"#)
            let contribute = Self.json(probe)["error"] == nil
            try note(try filter.ask(#"{"op":"login","account":"A","device":"ipad"}"#), device: "ipad", reporting: true)

            /// Sends the app's pending events (some twice), then acknowledges them, unless the
            /// app is killed first: its events are then sent again after the restart.
            func flush(killBeforeAck: Bool) throws {
                let count = try Int(app.ask("pending").split(separator: " ").last ?? "") ?? 0
                var last = ""
                for _ in 0..<count {
                    guard let entry = app.readLine() else { throw LoopError.exited("pending") }
                    let parts = entry.split(separator: "\t", maxSplits: 2).map(String.init)
                    let (id, by, line) = (parts[0], Int(parts[1]) ?? -1, parts[2])
                    if seen.contains(id) { figures.resent += 1 } else if by > 0 { decrementSum += by }
                    seen.insert(id)
                    let times = rng.next() % 5 == 0 ? 2 : 1
                    for k in 0..<times {
                        figures.eventsSent += 1
                        if k == 1 { figures.resent += 1 }
                        try note(try filter.ask(line), device: "phone", reporting: true)
                    }
                    last = id
                }
                if killBeforeAck && count > 0 {
                    app.kill()
                    figures.kills += 1
                    app = try Peer(Self.helper, ["app", file])
                } else if count > 0 {
                    _ = try app.ask("ack \(last)")
                }
            }

            let chats = ["c0", "c1", "c2", "c3", "c4", "muted"]
            var mutedNow = Set<String>()
            for _ in 0..<3_000 {
                figures.steps += 1
                let roll = rng.next() % 100
                if roll < 45 {
                    // A push: the server hears it first (after the app's events: EventLines'
                    // clear removes the whole mark, so a read must reach the server before a
                    // later push to the same chat does), then the device's extension.
                    try flush(killBeforeAck: false)
                    let chat = chats[Int(rng.next() % UInt64(chats.count))]
                    let push = #"{"op":"push","account":"A","device":"phone","payload":{"aps":{"alert":"m","thread-id":"\#(chat)"}}}"#
                    try note(try filter.ask(push), device: "phone", reporting: false)
                    _ = try Self.total(try extensionProcess.ask("push root.chat.\(chat)"))
                    figures.pushes += 1
                } else if roll < 75 {
                    let chat = chats[Int(rng.next() % UInt64(chats.count))]
                    let before = try Self.total(try app.ask("reload"))
                    let after = try Self.total(try app.ask("read root.chat.\(chat)"))
                    measuredDrops += before - after
                    figures.reads += 1
                } else if roll < 83 && contribute {
                    let chat = chats[Int(rng.next() % 5)]
                    let mute = !mutedNow.contains(chat)
                    _ = try app.ask((mute ? "mute " : "unmute ") + "root.chat.\(chat)")
                    if mute { mutedNow.insert(chat) } else { mutedNow.remove(chat) }
                    figures.settings += 1
                } else if roll < 85 {
                    // The app is killed between two things it does.
                    app.kill()
                    figures.kills += 1
                    app = try Peer(Self.helper, ["app", file])
                } else {
                    try flush(killBeforeAck: rng.next() % 10 == 0)
                }
                // Whenever the app has nothing left to send, the server's icon is its total.
                let appTotal = try Self.total(try app.ask("reload"))
                let pending = try Int(app.ask("pending").split(separator: " ").last ?? "") ?? 0
                for _ in 0..<pending { _ = app.readLine() }
                if pending == 0 {
                    figures.checks += 1
                    if serverIcon != appTotal { figures.mismatches += 1 }
                }
            }
            try flush(killBeforeAck: false)
            let finalTotal = try Self.total(try app.ask("reload"))
            // The observer heard the same total the center has.
            let state = try app.ask("state")
            #expect(state == "total \(finalTotal) heard \(finalTotal)")
            #expect(serverIcon == finalTotal)
            // Every device the server knows ends with the total (the phone reported it; the
            // iPad got it as badgeUpdates).
            #expect(delivered["phone"] == finalTotal)
            #expect(delivered["ipad"] == finalTotal)
            // A plain-counter server subtracting each read's decrement once subtracts exactly
            // what the reads took off the app's total.
            #expect(decrementSum == measuredDrops)
            #expect(figures.mismatches == 0)
            #expect(figures.checks > 1_000 && figures.kills > 20 && figures.resent > 100)
            print("app-server loop (contribute \(contribute ? "on" : "not in this filter: clears only")): \(figures)")
            #expect(await app.close() == 0)
            #expect(await extensionProcess.close() == 0)
            #expect(await filter.close() == 0)
        }
    }
}
