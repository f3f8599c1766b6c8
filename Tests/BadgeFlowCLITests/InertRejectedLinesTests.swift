import BadgeFlowTestSupport
import Foundation
import Testing

/// A rejected line changes nothing (<doc:EventLines>). Bad lines of every error code the filter has,
/// inserted at random places into random valid streams, leave every other result and the
/// saved state byte-identical, with one thread and several.
@Suite struct InertRejectedLinesTests {
    static let accounts = ["a0", "a1", "a2"]
    static let devices = ["phone", "ipad", "mac"]

    /// One valid event line (account-level ones included).
    static func validLine(_ r: inout SplitMix64, time: inout Int) -> String {
        let account = r.pick(accounts), device = r.pick(devices), thread = "t\(r.below(4))"
        var at = ""
        if r.below(3) > 0 {
            time += r.below(40)
            at = ",\"at\":\(time)"
        }
        let who = "\"account\":\"\(account)\",\"device\":\"\(device)\"\(at)"
        switch r.below(18) {
        case 0, 1, 2:
            return #"{"op":"push",\#(who),"payload":{"aps":{"alert":"m","thread-id":"\#(thread)"}}}"#
        case 3:
            return #"{"op":"push",\#(who),"payload":{"aps":{"content-available":1},"type":"read","thread":"\#(thread)"}}"#
        case 4:
            return #"{"op":"set",\#(who),"path":"root.promotion.p\#(r.below(3))","ttl":\#(r.below(60))}"#
        case 5: return #"{"op":"clear",\#(who),"path":"root.chat.\#(thread)"}"#
        case 6: return #"{"op":"clear","account":"\#(account)"\#(at),"path":"root.chat.\#(thread)"}"#
        case 7: return #"{"op":"login",\#(who)}"#
        case 8: return #"{"op":"logout",\#(who)}"#
        case 9: return #"{"op":"appear",\#(who),"page":"home"}"#
        case 10: return #"{"op":"tick",\#(who)}"#
        case 11: return #"{"op":"reconcile",\#(who),"badge":\#(r.below(4))}"#
        case 12: return #"{"op":"reconcile","account":"\#(account)"\#(at)}"#
        case 13: return #"{"op":"unregister",\#(who)}"#
        case 15:
            let mode = r.pick(["count", "dot", "none", "rules"])
            return #"{"op":"contribute",\#(who),"path":"root.chat.\#(thread)","mode":"\#(mode)"}"#
        case 16: return #"{"op":"contribute","account":"\#(account)"\#(at),"path":"root.chat","mode":"dot"}"#
        case 17: return #"{"op":"reconcile"}"#
        default: return #"{"op":"push","account":"\#(account)"\#(at),"payload":{"aps":{"alert":"m","thread-id":"\#(thread)"}}}"#
        }
    }

    /// Bad lines, each with the code it must get; they name accounts and devices of the
    /// stream (and new ones) and times far ahead, so that applying any part would show.
    static func badLines(_ r: inout SplitMix64) -> [(code: String, bytes: [UInt8], numbered: Bool)] {
        let who = "\"account\":\"\(r.pick(accounts))\",\"device\":\"\(r.pick(devices + ["zz"]))\",\"at\":999999"
        func text(_ code: String, _ s: String) -> (String, [UInt8], Bool) { (code, Array(s.utf8), true) }
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        return [
            text("invalid-json", #"{"op":"clear",\#(who),"#),
            text("not-an-object", "[1,2]"),
            text("missing-aps", #"{"op":"push",\#(who),"payload":{"type":"read"}}"#),
            text("aps-not-an-object", #"{"op":"push",\#(who),"payload":{"aps":3}}"#),
            text("wrong-type", #"{"op":"push",\#(who),"payload":{"aps":{"alert":"x","badge":"9"}}}"#),
            text("out-of-range", #"{"op":"push",\#(who),"payload":{"aps":{"alert":"x","badge":-1}}}"#),
            text("invalid-value", #"{"op":"push",\#(who),"payload":{"aps":{"alert":"x","interruption-level":"loud"}}}"#),
            text("invalid-value", #"{"op":"reconcile",\#(who),"badge":-2}"#),
            text(
                "payload-too-large",
                #"{"op":"push",\#(who),"payload":{"aps":{"alert":"\#(String(repeating: "x", count: 4500))"}}}"#),
            text("too-deep", #"{"op":"push",\#(who),"payload":{"aps":{"alert":"x"},"d":\#(deep)}}"#),
            ("invalid-utf8", Array(#"{"op":"push",\#(who),"payload":{"aps":{"alert":""#.utf8) + [0xFF, 0xFE] + Array(#""}}}"#.utf8), true),
            text("invalid-path", #"{"op":"clear",\#(who),"path":"root.chat.c1."}"#),
            text("invalid-path", #"{"op":"set",\#(who),"path":"elsewhere.x","ttl":5}"#),
            text("invalid-path", #"{"op":"push",\#(who),"payload":{"aps":{"alert":"x","thread-id":""}}}"#),
            text("unknown-op", #"{"op":"jump",\#(who)}"#),
            text("missing-field", #"{"op":"contribute",\#(who),"path":"root.chat.t1"}"#),
            text("invalid-value", #"{"op":"contribute",\#(who),"path":"root.chat.t1","mode":"mute"}"#),
            text("invalid-value", #"{"op":"contribute","device":"zz","at":999999,"path":"root.chat.t1","mode":"none"}"#),
            text("invalid-path", #"{"op":"contribute",\#(who),"path":"elsewhere.t1","mode":"none"}"#),
            text("invalid-value", #"{"op":"reconcile","badge":3}"#),
            text("missing-field", #"{"op":"clear",\#(who)}"#),
            text("line-too-long", #"{"op":"clear",\#(who),"path":"root.\#(String(repeating: "y", count: 7000))"}"#),
            text("invalid-time", #"{"op":"tick","account":"a1","device":"zz","at":"yesterday"}"#),
            ("invalid-line-number", Array(#"{"op":"login",\#(who)}"#.utf8), false),
        ]
    }

    @Test func rejectedLinesChangeNothing() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        var codesSeen = Set<String>()
        for seed in UInt64(1)...12 {
            var r = SplitMix64(seed: seed)
            var time = 1000
            let valid = (0..<60).map { _ in Self.validLine(&r, time: &time) }
            var clean: [UInt8] = []
            for (i, line) in valid.enumerated() { clean += Array("\(i + 1)\t\(line)\n".utf8) }
            // Each kind of bad line once, at a random place among the valid ones.
            var slots = [[(code: String, bytes: [UInt8], numbered: Bool)]](repeating: [], count: valid.count + 1)
            for bad in Self.badLines(&r) { slots[r.below(valid.count)].append(bad) }
            var dirty: [UInt8] = []
            var extra = 900_000
            for i in 0...valid.count {
                for bad in slots[i] {
                    extra += 1
                    dirty += (bad.numbered ? Array("\(extra)\t".utf8) : []) + bad.bytes + [0x0A]
                    codesSeen.insert(bad.code)
                }
                if i < valid.count { dirty += Array("\(i + 1)\t\(valid[i])\n".utf8) }
            }
            try Data(clean).write(to: URL(fileURLWithPath: dir + "/clean.ndjson"))
            try Data(dirty).write(to: URL(fileURLWithPath: dir + "/dirty.ndjson"))
            let options = ["filter", "--numbered", "--stamp", "--max-line-bytes", "6000"]
            try? FileManager.default.removeItem(atPath: dir + "/clean.json")
            let expected = try await CLI.run(options + ["--jobs", "1", "--state", dir + "/clean.json", dir + "/clean.ndjson"])
            #expect(!expected.stdout.contains(#""error":"#), "seed \(seed): the valid stream has an error line")
            #expect(expected.lines.count == valid.count)
            let cleanState = try String(contentsOfFile: dir + "/clean.json", encoding: .utf8)
            for jobs in ["1", "3"] {
                try? FileManager.default.removeItem(atPath: dir + "/dirty.json")
                let got = try await CLI.run(options + ["--jobs", jobs, "--state", dir + "/dirty.json", dir + "/dirty.ndjson"])
                let errors = got.lines.filter { $0.contains(#","error":{"code":"#) }
                let kept = got.lines.filter { !$0.contains(#","error":{"code":"#) }
                #expect(errors.count == slots.joined().count, "seed \(seed), --jobs \(jobs)")
                for bad in slots.joined() {
                    let needle = "\"code\":\"\(bad.code)\""
                    #expect(errors.contains { $0.contains(needle) }, "seed \(seed): no \(bad.code) error")
                }
                #expect(kept == expected.lines, "seed \(seed), --jobs \(jobs): a rejected line changed another result")
                // The inputs applied differ (two files): the rest byte for byte.
                let dirtyText = try String(contentsOfFile: dir + "/dirty.json", encoding: .utf8)
                let dirtyState = CLI.withoutInputRecords(dirtyText)
                let cleanRest = CLI.withoutInputRecords(cleanState)
                #expect(dirtyState == cleanRest, "seed \(seed), --jobs \(jobs): a rejected line changed the state")
            }
        }
        #expect(codesSeen.count == 16)
    }
}
