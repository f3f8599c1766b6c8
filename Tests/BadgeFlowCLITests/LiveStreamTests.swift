import BadgeFlowTestSupport
import Foundation
import Testing

/// `filter` as a long-lived consumer of a queue (a live stream, and resume by N: the RunningTheFilter article):
/// through the built executable, on a real pipe that stays open.
@Suite(.serialized) struct LiveStreamTests {
    static let push = #"{"op":"push","device":"d","payload":{"aps":{"alert":"hi","badge":1}}}"#

    /// A running `badgeflow filter` whose stdin stays open until `close()`; stdout goes to a file.
    final class Running {
        let process = Process()
        let stdin = Pipe()
        let stdoutPath: String

        init(_ arguments: [String], in dir: String) throws {
            stdoutPath = dir + "/stdout.ndjson"
            _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
            process.executableURL = URL(fileURLWithPath: CLI.executable)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: dir)
            process.standardInput = stdin
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        func send(_ lines: [String]) throws {
            try stdin.fileHandleForWriting.write(contentsOf: Data(lines.map { $0 + "\n" }.joined().utf8))
        }

        var output: [String] {
            let text = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }

        func close() async -> Int32 {
            try? stdin.fileHandleForWriting.close()
            await process.exited()
            return process.terminationStatus
        }
    }

    @Test func resultsOfAPartialBatchGoOutWhileThePipeStaysOpen() async throws {
        try await TemporaryFolder.with { dir in
            // Several threads and no --line-buffered: batches of 2,048 lines, of which 3 arrive.
            let filter = try Running(["filter", "--jobs", "2"], in: dir)
            try filter.send([Self.push, Self.push, Self.push])
            let flushed = waitUntil(deadline: 5) { filter.output.count == 3 }
            // More input later is answered too, in order.
            try filter.send([Self.push])
            let more = waitUntil(deadline: 5) { filter.output.count == 4 }
            let status = await filter.close()
            #expect(flushed, "the 3 results were held back while the pipe stayed open")
            #expect(more)
            #expect(filter.output.map { $0.hasPrefix("{\"seq\":") } == [true, true, true, true])
            #expect(filter.output.last?.hasPrefix("{\"seq\":4,") == true)
            #expect(status == 0)
        }
    }

    @Test(arguments: Formats.live)
    func anIdleStateCommitsTheLastWrittenSeq(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let filter = try Running(["filter", "--state", "s." + format, "--checkpoint", "0.2"], in: dir)
            try filter.send([Self.push])
            #expect(waitUntil(deadline: 5) { filter.output.count == 1 })
            try filter.send([Self.push, Self.push])
            #expect(waitUntil(deadline: 5) { filter.output.count == 3 })
            // No line arrives from now on; the checkpoint still comes, with seq 3.
            let committed = try waitUntil(deadline: 5) {
                try CLI.run(["state", "info", dir + "/s." + format]).stdout.contains("last seq: 3\n")
            }
            #expect(committed, "no checkpoint while idle")
            #expect(await filter.close() == 0)
        }
    }

    @Test(arguments: Formats.live)
    func resumeWithNumberedSkipsByNFromALaterOffset(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/q." + format
            let first = (1_000_001...1_000_003).map { "\($0)\t\(Self.push)" }
            #expect(try await CLI.run(["filter", "--numbered", "--state", state], input: first.joined(separator: "\n") + "\n").status == 0)
            // Fed again from an earlier offset, with a gap after it and one line out of place:
            // every N at or below 1,000,003 is skipped wherever it stands, the others applied.
            let again = [1_000_002, 1_000_003, 1_000_010, 1_000_001, 1_000_011].map { "\($0)\t\(Self.push)" }
            let run = try await CLI.run(
                ["filter", "--numbered", "--resume", "--state", state], input: again.joined(separator: "\n") + "\n")
            #expect(run.status == 0)
            #expect(run.lines.map { $0.prefix(15) } == [#"{"seq":1000010,"#, #"{"seq":1000011,"#])
            #expect(run.stderr.contains("1000003"))
            #expect(try await CLI.run(["state", "info", state]).stdout.contains("last seq: 1000011\n"))
        }
    }

    @Test(arguments: Formats.live)
    func theSameInputFileAgainNeedsResumeOrNoResume(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let input = dir + "/in.ndjson"
            try (Self.push + "\n" + Self.push + "\n").write(toFile: input, atomically: true, encoding: .utf8)
            let state = dir + "/s." + format
            #expect(try await CLI.run(["filter", "--state", state, input]).status == 0)
            // The same file, named another way: refused, nothing applied.
            let again = try await CLI.run(["filter", "--state", state, dir + "/./in.ndjson"])
            #expect(again.status == 2)
            #expect(again.stdout.isEmpty)
            #expect(again.stderr.contains("seq 2"))
            #expect(again.stderr.contains("--resume") && again.stderr.contains("--no-resume"))
            let resumed = try await CLI.run(["filter", "--state", state, "--resume", input])
            #expect(resumed.status == 0 && resumed.stdout.isEmpty)
            let reapplied = try await CLI.run(["filter", "--state", state, "--no-resume", input])
            #expect(reapplied.status == 0 && reapplied.lines.count == 2)
            // Another file is not this state's input: no question asked.
            let other = dir + "/other.ndjson"
            try (Self.push + "\n").write(toFile: other, atomically: true, encoding: .utf8)
            #expect(try await CLI.run(["filter", "--state", state, other]).status == 0)
        }
    }

    @Test(arguments: Formats.live)
    func stateGetReadsAnAccountWhileAFilterWritesTheState(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let chat = { (device: String, thread: String) in
                #"{"op":"push","account":"A","device":"\#(device)","payload":{"aps":{"alert":"m","thread-id":"\#(thread)"}}}"#
            }
            let filter = try Running(["filter", "--state", "s." + format, "--checkpoint", "0.2"], in: dir)
            try filter.send([chat("d1", "c1"), chat("d2", "c2")])
            // The filter keeps running (and holds the state's lock) while the account is read.
            var got = CLI.Run(status: -1, stdout: "", stderr: "")
            let read = try waitUntil(deadline: 5) {
                got = try CLI.run(["state", "get", dir + "/s." + format, "A", "--json"])
                return got.stdout.contains(#""total":2"#)
            }
            #expect(read, "\(got)")
            #expect(
                got.stdout.hasSuffix(
                    #""devices":[{"device":"d1","delivered":2,"stale":false},{"device":"d2","delivered":2,"stale":false}]}"# + "\n"))
            #expect(got.stdout.contains(#"{"path":"root.chat.c2","count":1,"show":true,"display":"1"}"#))
            let text = try await CLI.run(["state", "get", dir + "/s." + format, "A"])
            #expect(text.status == 0 && text.stdout.hasPrefix("account: A\ntotal: 2\n"))
            let absent = try await CLI.run(["state", "get", dir + "/s." + format, "nobody"])
            #expect(absent.status == 1 && absent.stdout.isEmpty && absent.stderr.contains("nobody"))
            #expect(await filter.close() == 0)
        }
    }
}
