import BadgeFlowTestSupport
import Foundation
import Testing

/// A fleet-wide `{"op":"reconcile"}` over a state with checkpoints walks the store and
/// keeps only the numbers it sent (not the accounts), which the next checkpoint writes with
/// the line's seq: its line is byte-identical to the one built in memory (a JSON state),
/// lines after it see the numbers sent, a second reconcile lists nobody, a kill -9 leaves
/// the line either wholly committed or not at all, and settings make the state version 3.
@Suite(.serialized) struct StoredFleetReconcileTests {
    private func write(_ text: String, _ path: String) throws { try text.write(toFile: path, atomically: true, encoding: .utf8) }

    /// A day over `accounts` accounts, with one to three devices each: chats for all, friend
    /// requests for every third (whose totals the muted rules lower).
    private func day(_ accounts: Int) -> String {
        var day = ""
        for i in 0..<accounts {
            for d in 0...(i % 3) {
                day +=
                    #"{"op":"push","account":"u\#(i)","device":"d\#(d)","payload":{"aps":{"alert":"m"},"type":"chat","thread":"t"}}"# + "\n"
            }
            if i % 3 == 0 {
                day += #"{"op":"push","account":"u\#(i)","device":"d0","payload":{"aps":{"alert":"f"},"type":"friend"}}"# + "\n"
            }
        }
        return day
    }

    /// The reconcile, then lines on accounts it repaired and on others, then a second
    /// reconcile: what memory and the store must answer alike.
    private static let after =
        #"{"op":"reconcile"}"# + "\n"
        + #"{"op":"push","account":"u3","device":"d1","payload":{"aps":{"alert":"m"},"type":"chat","thread":"t"}}"# + "\n"
        + #"{"op":"push","account":"u30","device":"d0","payload":{"aps":{"alert":"m"},"type":"chat","thread":"t"}}"# + "\n"
        + #"{"op":"clear","account":"u6","path":"root.chat.t"}"# + "\n"
        + #"{"op":"reconcile"}"# + "\n"
        + #"{"op":"push","account":"u9","device":"d2","payload":{"aps":{"alert":"f"},"type":"friend"}}"# + "\n"
        + #"{"op":"reconcile"}"# + "\n"

    @Test(arguments: Formats.checkpointing)
    func theStoredWalkAnswersAsMemoryDoes(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try write(FleetReconcileStateTests.rules, dir + "/rules.json")
        try write(FleetReconcileStateTests.muted, dir + "/muted.json")
        let fleet = day(120)
        let json = dir + "/s.json", stored = dir + "/s." + format
        #expect(try await CLI.run(["filter", "--state", json, "--rules", dir + "/rules.json"], input: fleet).status == 0)
        let bounded = ["--max-resident", "4", "--checkpoint", "0.001"]
        let first = try await CLI.run(["filter", "--state", stored, "--rules", dir + "/rules.json"] + bounded, input: fleet)
        #expect(first.status == 0, "\(first.stderr)")
        let inMemory = try await CLI.run(["filter", "--state", json, "--rules", dir + "/muted.json"], input: Self.after)
        #expect(inMemory.status == 0, "\(inMemory.stderr)")
        // Each account whose total dropped is listed (every third), and nothing is owed at the end.
        #expect(inMemory.stdout.components(separatedBy: #"{"account":""#).count - 1 >= 40)
        for (jobs, resident) in [("1", "4"), ("2", "4"), ("2", "50")] {
            let copy = dir + "/c\(jobs)-\(resident)." + format
            try FileManager.default.copyItem(atPath: stored, toPath: copy)
            let walked = try await CLI.run(
                [
                    "filter", "--state", copy, "--rules", dir + "/muted.json", "--jobs", jobs, "--max-resident", resident,
                    "--checkpoint", "0.001",
                ], input: Self.after)
            #expect(walked.status == 0, "\(walked.stderr)")
            #expect(walked.stdout == inMemory.stdout, "--jobs \(jobs) --max-resident \(resident)")
            // What was committed: the stored numbers, as memory had them.
            for id in ["u0", "u3", "u6", "u9", "u30", "u119"] {
                let a = try await CLI.run(["state", "get", copy, id, "--json"])
                let b = try await CLI.run(["state", "get", json, id, "--json"])
                #expect(a.stdout == b.stdout, "\(id)")
            }
            let again = try await CLI.run(["filter", "--state", copy] + bounded, input: #"{"op":"reconcile"}"# + "\n")
            #expect(again.stdout == #"{"seq":1,"op":"reconcile","accounts":[]}"# + "\n", "\(again.stderr)")
        }
    }

    /// kill -9 at random moments of a run that reconciles a fleet and goes on: the state
    /// either holds every number the line sent (a reconcile then lists nobody) or none (it
    /// lists exactly what the line listed), and `--resume` finishes the job.
    @Test(arguments: Formats.checkpointing)
    func aKillDuringTheReconcileLeavesAllOrNothing(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try write(FleetReconcileStateTests.rules, dir + "/rules.json")
        try write(FleetReconcileStateTests.muted, dir + "/muted.json")
        let base = dir + "/base." + format
        let made = try await CLI.run(
            ["filter", "--state", base, "--rules", dir + "/rules.json", "--max-resident", "100"], input: day(3000))
        #expect(made.status == 0, "\(made.stderr)")
        var input = #"{"op":"reconcile"}"# + "\n"
        for i in 0..<3000 {
            input += #"{"op":"push","account":"u\#(i)","device":"d0","payload":{"aps":{"alert":"m"},"type":"chat","thread":"t"}}"# + "\n"
        }
        try write(input, dir + "/in.ndjson")
        // The line a run that is not killed writes, on a copy.
        let whole = dir + "/whole." + format
        try FileManager.default.copyItem(atPath: base, toPath: whole)
        let expected = try await CLI.run(
            ["filter", "--state", whole, "--rules", dir + "/muted.json", "--max-resident", "100"], input: #"{"op":"reconcile"}"# + "\n")
        #expect(expected.status == 0, "\(expected.stderr)")
        #expect(expected.stdout.count > 10_000)
        var rng = SystemRandomNumberGenerator()
        var seen: Set<Bool> = []
        for round in 0..<8 {
            let state = dir + "/r\(round)." + format
            try FileManager.default.copyItem(atPath: base, toPath: state)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CLI.executable)
            p.arguments = [
                "filter", "--state", state, "--rules", dir + "/muted.json", "--max-resident", "100", "--checkpoint", "0.001",
                dir + "/in.ndjson",
            ]
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32.random(in: 0...(round == 0 ? 0 : 400_000), using: &rng))
            kill(p.processIdentifier, SIGKILL)
            await p.exited()
            // Asked on a copy: the killed state as it is.
            let probe = dir + "/p\(round)." + format
            try FileManager.default.copyItem(atPath: state, toPath: probe)
            let now = try await CLI.run(
                ["filter", "--state", probe, "--no-resume", "--rules", dir + "/muted.json", "--max-resident", "100"],
                input: #"{"op":"reconcile"}"# + "\n")
            #expect(now.status == 0, "round \(round): \(now.stderr)")
            let none = now.stdout == expected.stdout
            let all = now.stdout == #"{"seq":1,"op":"reconcile","accounts":[]}"# + "\n"
            #expect(none || all, "round \(round): a part of the line's numbers was committed: \(now.stdout.prefix(300))")
            seen.insert(all)
            // --resume goes on from the line's checkpoint; before it, the input is applied again.
            let resumed = try await CLI.run(
                [
                    "filter", "--state", state, all ? "--resume" : "--no-resume", "--rules", dir + "/muted.json", "--max-resident", "100",
                    dir + "/in.ndjson",
                ])
            #expect(resumed.status == 0, "round \(round): \(resumed.stderr)")
            let end = try await CLI.run(
                ["filter", "--state", state, "--no-resume", "--max-resident", "100"], input: #"{"op":"reconcile"}"# + "\n")
            #expect(end.stdout == #"{"seq":1,"op":"reconcile","accounts":[]}"# + "\n", "round \(round)")
        }
    }

    /// Settings per account make a state with checkpoints version 3, which builds that read
    /// only version 2 refuse at open (they would drop the settings); a state without settings
    /// stays version 2; this build reads both, and refuses a later version by name.
    @Test(arguments: Formats.checkpointing)
    func settingsMakeTheStateVersion3(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try write(FleetReconcileStateTests.rules, dir + "/rules.json")
        let state = dir + "/s." + format
        let plain = try await CLI.run(["filter", "--state", state, "--rules", dir + "/rules.json"], input: day(3))
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try await CLI.run(["state", "info", state]).stdout.contains("version: 2 "))
        let set = try await CLI.run(
            ["filter", "--state", state], input: #"{"op":"contribute","account":"u1","path":"root.chat.t","mode":"none"}"# + "\n")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try await CLI.run(["state", "info", state]).stdout.contains("version: 3 "))
        #expect(try await CLI.run(["state", "get", state, "u1"]).stdout.contains("root.chat.t  contribute none"))
        // Split and merged, it stays version 3.
        #expect(try await CLI.run(["state", "split", state, "--parts", "2", dir + "/parts"]).status == 0)
        let parts = try FileManager.default.contentsOfDirectory(atPath: dir + "/parts").sorted().map { dir + "/parts/" + $0 }
        let merged = dir + "/m." + format
        #expect(try await CLI.run(["state", "merge", merged] + parts).status == 0)
        #expect(try await CLI.run(["state", "info", merged]).stdout.contains("version: 3 "))
    }
}
