import BadgeFlowTestSupport
import Foundation
import Testing

/// A fleet-wide `expire` reaches accounts that only the state holds: every account of a
/// JSON state, and a SQLite state's stored accounts through its due index.
@Suite struct FleetExpiryStateTests {
    @Test(arguments: Formats.all)
    func storedAccountsExpireWithoutAnEventOfTheirOwn(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let state = dir + "/s." + format
        var marks = ""
        for i in 0..<20 {
            marks += #"{"op":"set","account":"u\#(i)","device":"phone","path":"root.promotion.sale","ttl":\#(100 + i),"at":1000}"# + "\n"
        }
        let bounded = format != "json" ? ["--max-resident", "2", "--checkpoint", "0.01"] : []
        #expect(try await CLI.run(["filter", "--state", state] + bounded, input: marks).status == 0)
        // Due: u0 to u4 (1100 to 1104).
        let first = try await CLI.run(["filter", "--state", state] + bounded, input: #"{"op":"expire","at":1104}"# + "\n")
        #expect(first.status == 0, "\(first.stderr)")
        let listed = first.stdout.components(separatedBy: #"{"account":""#).dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(listed == ["u0", "u1", "u2", "u3", "u4"])
        // Expired once only; the rest later.
        let second = try await CLI.run(["filter", "--state", state], input: #"{"op":"expire","at":1105}"# + "\n")
        #expect(second.stdout.components(separatedBy: #"{"account":""#).count == 2)
        #expect(second.stdout.contains(#"{"account":"u5","expired":["root.promotion.sale"]"#))
        let last = try await CLI.run(["filter", "--state", state], input: #"{"op":"expire","at":5000}"# + "\n")
        #expect(last.stdout.components(separatedBy: #"{"account":""#).count == 15)
        let none = try await CLI.run(["filter", "--state", state], input: #"{"op":"expire","at":9000}"# + "\n")
        #expect(none.stdout == #"{"seq":1,"op":"expire","at":9000,"accounts":[]}"# + "\n")
    }
}
