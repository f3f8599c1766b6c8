import BadgeFlowTestSupport
import Foundation
import Testing

/// The parallel filter's output does not depend on the number of threads.
@Suite struct JobsTests {
    @Test func outputIsByteIdenticalToJobsOne() async throws {
        var lines: [String] = []
        for i in 0..<20_000 {
            let t = (i * 7919) % 300
            switch i % 11 {
            case 0: lines.append("")
            case 1: lines.append("{\"aps\":{\"badge\":\"x\"}}")
            case 2: lines.append("{\"op\":\"clear\",\"path\":\"root.chat.t\(t)\",\"device\":\"d\(i % 3)\"}")
            case 3: lines.append("{\"aps\":{\"alert\":\"p\"},\"promo\":{\"campaign\":\"c\(t % 7)\"}}")
            case 4: lines.append("{\"op\":\"snapshot\",\"device\":\"d\(i % 3)\"}")
            case 5: lines.append("{\"aps\":{\"content-available\":1},\"type\":\"unread\",\"unread\":\(t)}")
            case 6: lines.append("{\"op\":\"tick\",\"at\":\(i)}")
            default:
                lines.append(
                    "{\"op\":\"push\",\"device\":\"d\(i % 3)\",\"payload\":{\"aps\":{\"alert\":\"m\(i)\",\"thread-id\":\"t\(t)\"}}}")
            }
        }
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let path = dir + "/in.ndjson"
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let one = try await CLI.run(["filter", "--jobs", "1", path])
        let two = try await CLI.run(["filter", "--jobs", "2", path])
        let four = try await CLI.run(["filter", "--jobs", "4", path])
        #expect(one.lines.count == lines.filter { !$0.isEmpty }.count)
        #expect(one.stdout == two.stdout)
        #expect(one.stdout == four.stdout)
        let lineBuffered = try await CLI.run(["filter", "--line-buffered", path])
        #expect(one.stdout == lineBuffered.stdout)
    }
}
