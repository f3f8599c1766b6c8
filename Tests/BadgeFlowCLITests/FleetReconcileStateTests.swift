import BadgeFlowTestSupport
import Foundation
import Testing

/// A rules change that lowers totals, then one fleet-wide `{"op":"reconcile"}`: every account
/// with a device on an old number is listed, in every state format (SQLite and RocksDB walked
/// with most accounts out of memory); the notice says so; `--strict` refuses the change; a
/// rules file without a rule is refused; settings per account survive split, merge and convert.
@Suite struct FleetReconcileStateTests {
    static let rules = """
        {"version":1,"root":"root","rules":[
          {"name":"chat","match":{"/type":"chat"},"path":"root.chat.{/thread}","action":"increment"},
          {"name":"friend","match":{"/type":"friend"},"path":"root.discover.friends","action":"increment"}]}
        """
    static let muted = rules.replacingOccurrences(
        of: #""root":"root","rules""#, with: #""root":"root","contribute":{"root.discover.friends":"none"},"rules""#)

    private func write(_ text: String, _ path: String) throws { try text.write(toFile: path, atomically: true, encoding: .utf8) }

    @Test(arguments: Formats.all)
    func aRulesChangeThenOneReconcileRepairsEveryDevice(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try write(Self.rules, dir + "/rules.json")
        try write(Self.muted, dir + "/muted.json")
        let state = dir + "/s." + format
        var day = ""
        for i in 0..<30 {
            day += #"{"op":"push","account":"u\#(i)","device":"phone","payload":{"aps":{"alert":"m"},"type":"chat","thread":"t"}}"# + "\n"
            // Every third account also has a friend request: its total drops under the new rules.
            if i % 3 == 0 {
                day += #"{"op":"push","account":"u\#(i)","device":"phone","payload":{"aps":{"alert":"f"},"type":"friend"}}"# + "\n"
            }
        }
        day += #"{"op":"contribute","account":"u1","path":"root.chat.t","mode":"none"}"# + "\n"
        let bounded = format != "json" ? ["--max-resident", "3", "--checkpoint", "0.01"] : []
        let first = try await CLI.run(["filter", "--state", state, "--rules", dir + "/rules.json"] + bounded, input: day)
        #expect(first.status == 0, "\(first.stderr)")
        // Nothing owed yet.
        let quiet = try await CLI.run(["filter", "--state", state] + bounded, input: #"{"op":"reconcile"}"# + "\n")
        #expect(quiet.stdout == #"{"seq":1,"op":"reconcile","accounts":[]}"# + "\n", "\(quiet.stderr)")
        // --strict refuses the change, and says what it is.
        let strict = try await CLI.run(
            ["filter", "--strict", "--state", state, "--rules", dir + "/muted.json"] + bounded, input: #"{"op":"reconcile"}"# + "\n")
        #expect(strict.status == 2)
        #expect(strict.stderr.contains("root.discover.friends count -> none"), "\(strict.stderr)")
        let run = try await CLI.run(
            ["filter", "--state", state, "--rules", dir + "/muted.json"] + bounded, input: #"{"op":"reconcile"}"# + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("badgeflow: notice: "), "\(run.stderr)")
        #expect(run.stderr.contains(#"feed one {"op":"reconcile"} line"#), "\(run.stderr)")
        let listed = run.stdout.components(separatedBy: #"{"account":""#).dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(listed == ["u0", "u12", "u15", "u18", "u21", "u24", "u27", "u3", "u6", "u9"])
        #expect(run.stdout.contains(#"{"account":"u0","icon":1,"badgeUpdates":[{"device":"phone","badge":1}]}"#), "\(run.stdout)")
        // Repaired once: the next one lists nobody, and the setting of u1 is still there.
        let again = try await CLI.run(["filter", "--state", state] + bounded, input: #"{"op":"reconcile"}"# + "\n")
        #expect(again.stdout == #"{"seq":1,"op":"reconcile","accounts":[]}"# + "\n")
        let get = try await CLI.run(["state", "get", state, "u1", "--json"])
        #expect(get.stdout.contains(#""settings":{"contribute":{"root.chat.t":"none"}}"#), "\(get.stdout)")
        #expect(get.stdout.contains(#""total":0"#), "\(get.stdout)")
        let tree = try await CLI.run(["tree", "--state", state, "--account", "u1", "--json"])
        #expect(tree.stdout.contains(#""settings":{"contribute":{"root.chat.t":"none"}}"#), "\(tree.stdout)")
        // Through convert, split and merge the setting stays.
        let other = Formats.checkpointing.first { $0 != format } ?? format
        #expect(try await CLI.run(["state", "convert", state, dir + "/c." + other]).status == 0)
        #expect(try await CLI.run(["state", "get", dir + "/c." + other, "u1"]).stdout.contains("root.chat.t  contribute none"))
        #expect(try await CLI.run(["state", "split", state, "--parts", "3", dir + "/parts"]).status == 0)
        let parts = try FileManager.default.contentsOfDirectory(atPath: dir + "/parts").sorted().map { dir + "/parts/" + $0 }
        let merged = dir + "/m." + format
        let merge = try await CLI.run(["state", "merge", merged] + parts)
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(try await CLI.run(["state", "get", merged, "u1"]).stdout.contains("root.chat.t  contribute none"))
    }

    @Test func aRulesFileWithoutARuleIsExit2() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try write(#"{"version":1,"contribute":{"root.chat":"dot"}}"#, dir + "/none.json")
        try write(#"{"version":1,"rules":[]}"#, dir + "/empty.json")
        for file in ["/none.json", "/empty.json"] {
            let filter = try await CLI.run(["filter", "--rules", dir + file], input: #"{"aps":{"alert":"a"}}"# + "\n")
            #expect(filter.status == 2)
            #expect(filter.stderr.contains("defines no rule"), "\(filter.stderr)")
            #expect(try await CLI.run(["report", "--rules", dir + file, "-o", dir + "/r.html"], input: "").status == 2)
        }
    }

    @Test func aStoredSettingTheNewRulesRejectIsRefusedLikeAMark() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        try write(Self.rules, dir + "/rules.json")
        try write(
            Self.rules.replacingOccurrences(of: #""root":"root""#, with: #""root":"app""#)
                .replacingOccurrences(of: "root.", with: "app."), dir + "/app.json")
        let state = dir + "/s.sqlite"
        let set = try await CLI.run(
            ["filter", "--state", state, "--rules", dir + "/rules.json"],
            input: #"{"op":"contribute","account":"u","path":"root.chat.t","mode":"none"}"# + "\n")
        #expect(set.status == 0, "\(set.stderr)")
        let refused = try await CLI.run(["filter", "--state", state, "--rules", dir + "/app.json"], input: "")
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("settings/contribute/root.chat.t"), "\(refused.stderr)")
    }
}
