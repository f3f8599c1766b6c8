import BadgeFlowTestSupport
import BadgeTree
import Testing

@testable import BadgeFlow

/// One script of events, driven through the app library (`BadgeCenter`, whose
/// `setContribution` a user's mute calls) and through the server (`contribute` event lines):
/// after every step both have the same total.
@Suite struct AppAndServerAgreeTests {
    enum Step {
        case message(String)
        case read(String)
        case contribute(String, Contribution?)
    }

    static func script(seed: UInt64, steps: Int) -> [Step] {
        var g = SplitMix64(seed: seed)
        let chats = ["root.chat.a", "root.chat.b", "root.chat.c", "root.chat", "root.news"]
        let modes: [Contribution?] = [.count, .dot, Contribution.none, nil]
        return (0..<steps).map { _ in
            switch Int.random(in: 0..<10, using: &g) {
            case 0..<5: return .message(["a", "b", "c"].randomElement(using: &g) ?? "a")
            case 5..<7: return .read(chats.randomElement(using: &g) ?? "root.chat.a")
            default: return .contribute(chats.randomElement(using: &g) ?? "root.chat", modes.randomElement(using: &g) ?? nil)
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func theAppAndTheServerCountTheSame(seed: UInt64) throws {
        let rules = RuleSet.builtIn
        let center = BadgeCenter(configuration: rules.tree)
        var session = FilterSession(rules: rules)
        for (i, step) in Self.script(seed: seed, steps: 300).enumerated() {
            switch step {
            case .message(let thread):
                try center.increment("root.chat." + thread)
                session.feed(
                    #"{"op":"push","account":"u","device":"phone","payload":{"aps":{"alert":"m","thread-id":"\#(thread)"}}}"#)
            case .read(let path):
                try center.clear(path)
                session.feed(#"{"op":"clear","account":"u","device":"phone","path":"\#(path)"}"#)
            case .contribute(let path, let mode):
                // "rules": the app goes back to its configuration's mode.
                try center.setContribution(mode ?? rules.tree.contribute[path] ?? .count, of: path)
                session.feed(
                    #"{"op":"contribute","account":"u","device":"phone","path":"\#(path)","mode":"\#(mode?.rawValue ?? "rules")"}"#)
            }
            let server = try #require(try session.stream.account("u"))
            #expect(server.tree.total == center.total, "seed \(seed), step \(i): \(step)")
            for path in ["root.chat.a", "root.chat.b", "root.chat", "root.news"] {
                #expect(server.tree.state(of: path) == center.state(of: path), "seed \(seed), step \(i), \(path)")
            }
        }
        #expect(session.stream.rejected == 0)
        // A setting is never a read: no contribute result carries a decrement.
        for line in String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n")
        where line.contains(#""op":"contribute""#) {
            #expect(!line.contains("decrement"), "\(line)")
        }
    }
}
