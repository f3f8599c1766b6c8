import BadgeFlowTestSupport
import Foundation
import Testing

/// An event id is remembered with the state: a message delivered again in a later run, with
/// either state format (and after a conversion), is still a duplicate.
@Suite struct IdempotentStateTests {
    @Test(arguments: Formats.all)
    func aDuplicateInALaterRunChangesNothing(_ format: String) async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let line = #"{"op":"push","account":"u","device":"phone","id":"msg-1","payload":{"aps":{"alert":"m","thread-id":"c"}}}"#
        let other = #"{"op":"push","account":"w","device":"phone","payload":{"aps":{"alert":"m"}}}"#
        let state = dir + "/s." + format
        // SQLite: the account leaves memory and comes back from its row.
        let bounded = format != "json" ? ["--max-resident", "1", "--checkpoint", "0.01"] : []
        let first = try await CLI.run(
            ["filter", "--state", state] + bounded, input: line + "\n" + other + "\n")
        #expect(first.status == 0 && !first.stdout.contains("duplicate"), "\(first.stderr)")
        let again = try await CLI.run(["filter", "--state", state] + bounded, input: line + "\n")
        #expect(
            again.lines == [
                #"{"seq":1,"op":"push","device":"phone","account":"u","kind":"alert","rule":"chat","path":"root.chat.c","duplicate":true,"changes":[],"icon":1}"#
            ])
        let converted = dir + "/c." + (format == "json" ? "sqlite" : "json")
        #expect(try await CLI.run(["state", "convert", state, converted]).status == 0)
        let afterConvert = try await CLI.run(["filter", "--state", converted], input: line + "\n")
        #expect(afterConvert.stdout.contains(#""duplicate":true"#))
    }
}
