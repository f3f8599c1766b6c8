import BadgeFlowTestSupport
import Foundation
import Testing
@testable import BadgeFlowCLI

/// `filter` on a gzip/zstd/bzip2/xz INPUT says so (exit 4) instead of an error line a line.
@Suite struct CompressedInputTests {
    @Test func aGzipInputIsRefusedAndTheOthersAreRead() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let a = dir + "/a.ndjson", b = dir + "/b.ndjson", gz = dir + "/x.ndjson.gz"
        try "{\"op\":\"tick\"}\n".write(toFile: a, atomically: false, encoding: .utf8)
        try "{\"op\":\"tick\"}\n".write(toFile: b, atomically: false, encoding: .utf8)
        // A real gzip file, made by gzip(1).
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "printf '{\"op\":\"tick\"}\\n{\"op\":\"tick\"}\\n' | gzip -c > \"$0\"", gz]
        try gzip.run()
        await gzip.exited()
        #expect(gzip.terminationStatus == 0)
        let r = try await CLI.run(["filter", a, gz, b])
        #expect(r.status == 4)
        #expect(r.stderr == "badgeflow: \(gz): gzip-compressed input; pipe it through zcat\n")
        // No error lines for it: it adds no lines, as a file that cannot be read.
        #expect(r.lines.count == 2)
        #expect(r.lines.allSatisfy { !$0.contains("\"error\"") })
        #expect(r.lines.last?.hasPrefix("{\"seq\":2,") == true)
    }

    @Test func aZstdInputNamesZstdcat() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let zst = dir + "/x.ndjson.zst"
        try Data([0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x05, 0x29, 0x00]).write(to: URL(fileURLWithPath: zst))
        let r = try await CLI.run(["filter", zst])
        #expect(r.status == 4)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "badgeflow: \(zst): zstd-compressed input; pipe it through zstdcat\n")
    }
}
