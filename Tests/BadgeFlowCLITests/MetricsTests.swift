import BadgeFlowTestSupport
import Foundation
import Testing

/// `filter --metrics FILE` through the built executable: the file parses as Prometheus text,
/// its counts are what the output says, it is kept fresh while a live stream idles, and an
/// unwritable FILE is refused before any line.
@Suite(.serialized) struct MetricsTests {
    /// The samples of a metrics file by `name{labels}`; fails the test on a line that is
    /// neither a comment nor `name{labels} value`.
    static func samples(_ text: String) -> [String: Double] {
        #expect(text.hasSuffix("\n"), "the last line ends with a line feed")
        let sample =
            /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*\})?) (\S+)$/
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { continue }
            guard let m = try? sample.wholeMatch(in: String(line)), let value = Double(m.output.2) else {
                Issue.record("not a sample line: \(line)")
                continue
            }
            out[String(m.output.1)] = value
        }
        return out
    }

    /// The samples of the file at `path`; none while it is not there yet.
    static func read(_ path: String) -> [String: Double] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty else { return [:] }
        return samples(text)
    }

    @Test func theCountsAreWhatTheOutputSays() async throws {
        try await TemporaryFolder.with { dir in
            // Every scenario, one stream: errors of many codes, decrements, fleet-wide expiry,
            // duplicates, badge updates.
            let folder = CLI.fixture("scenarios")
            let inputs = try FileManager.default.contentsOfDirectory(atPath: folder)
                .filter { $0.hasSuffix(".ndjson") && !$0.hasSuffix(".expected.ndjson") }.sorted().map { folder + "/" + $0 }
            let run = try await CLI.run(["filter", "--metrics", dir + "/m.prom"] + inputs)
            #expect(run.status == 0, "\(run.stderr)")
            let m = Self.read(dir + "/m.prom")
            let results = run.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(results.count == run.lines.count)
            var errors: [String: Double] = [:]
            var decrements = 0.0, decrementBy = 0.0, updates = 0.0, duplicates = 0.0
            for r in results {
                if let e = r["error"] as? [String: Any], let code = e["code"] as? String { errors[code, default: 0] += 1 }
                if r["duplicate"] as? Bool == true { duplicates += 1 }
                for part in [r] + ((r["accounts"] as? [[String: Any]]) ?? []) {
                    if let d = part["decrement"] as? [String: Any], let by = d["by"] as? Int {
                        decrements += 1
                        decrementBy += Double(by)
                    }
                    updates += Double((part["badgeUpdates"] as? [Any])?.count ?? 0)
                }
            }
            #expect(errors.count >= 5, "the fixtures hold errors of several codes")
            let fileErrors = m.filter { $0.key.hasPrefix("badgeflow_errors_total{") }
            #expect(
                fileErrors == Dictionary(uniqueKeysWithValues: errors.map { (#"badgeflow_errors_total{code="\#($0.key)"}"#, $0.value) }))
            #expect(decrements > 0 && m["badgeflow_decrements_total"] == decrements)
            #expect(m["badgeflow_decrement_by_total"] == decrementBy)
            #expect(updates > 0 && m["badgeflow_badge_updates_total"] == updates)
            #expect(duplicates > 0 && m["badgeflow_duplicates_total"] == duplicates)
            #expect(m["badgeflow_results_total"] == Double(run.lines.count))
            let lines = try inputs.map {
                try String(contentsOfFile: $0, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count - 1
            }
            #expect(m["badgeflow_lines_read_total"] == Double(lines.reduce(0, +)))
            #expect(m["badgeflow_committed_seq"] == 0 && m["badgeflow_accounts_stored"] == 0)
            #expect((m["badgeflow_accounts_in_memory"] ?? 0) > 0)
        }
    }

    @Test func anSQLiteStatesFiguresAreWhatStateInfoSays() async throws {
        try await TemporaryFolder.with { dir in
            let input = (1...5).map { #"{"op":"push","account":"a\#($0 % 3)","device":"d","payload":{"aps":{"alert":"x"}}}"# }
            let run = try await CLI.run(
                ["filter", "--state", dir + "/s.sqlite", "--metrics", dir + "/m.prom"], input: input.joined(separator: "\n") + "\n")
            #expect(run.status == 0, "\(run.stderr)")
            let m = Self.read(dir + "/m.prom")
            let info = try await CLI.run(["state", "info", dir + "/s.sqlite"]).stdout
            #expect(info.contains("accounts: 3\n") && info.contains("last seq: 5\n"))
            #expect(m["badgeflow_accounts_stored"] == 3)
            #expect(m["badgeflow_committed_seq"] == 5)
            #expect((m["badgeflow_checkpoints_total"] ?? 0) >= 1)
            #expect(m["badgeflow_lines_read_total"] == 5)
        }
    }

    @Test func aLiveStreamsFileIsWrittenWhileIdleAndAtASignal() throws {
        try TemporaryFolder.with { dir in
            let path = dir + "/m.prom"
            let period = 0.4
            let filter = try LiveStreamTests.Running(["filter", "--checkpoint", String(period), "--metrics", path], in: dir)
            // There before any line.
            #expect(waitUntil(deadline: 5) { FileManager.default.fileExists(atPath: path) })
            try filter.send([LiveStreamTests.push, LiveStreamTests.push, LiveStreamTests.push])
            #expect(waitUntil(deadline: 5) { filter.output.count == 3 })
            // No more lines: the file shows the 3 results within --checkpoint + 0.5 s.
            let seen = Date()
            let fresh = waitUntil(deadline: period + 0.5) { Self.read(path)["badgeflow_results_total"] == 3 }
            #expect(fresh, "not updated within \(period + 0.5) s of the results (\(Date().timeIntervalSince(seen)) s)")
            // And it keeps being replaced while idle (a scraper can tell a live filter by its age).
            let before = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            let replaced = waitUntil(deadline: period + 0.5) {
                let now = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
                return now != nil && now != before
            }
            #expect(replaced, "not rewritten while idle")
            // One more line, then SIGTERM before a period passes: the last write counts it.
            try filter.send([LiveStreamTests.push])
            #expect(waitUntil(deadline: 5) { filter.output.count == 4 })
            filter.process.terminate()
            #expect(ChildProcess.exits(filter.process, within: 60), "SIGTERM while idle did not stop the filter")
            #expect(filter.process.terminationStatus == 128 + SIGTERM)
            #expect(Self.read(path)["badgeflow_results_total"] == 4)
            #expect(Self.read(path)["badgeflow_lines_read_total"] == 4)
        }
    }

    @Test func anIdleSQLiteStatesFiguresAreWhatStateInfoSays() async throws {
        try await TemporaryFolder.with { dir in
            let path = dir + "/m.prom"
            let period = 0.3
            let filter = try LiveStreamTests.Running(
                ["filter", "--state", "s.sqlite", "--checkpoint", String(period), "--metrics", path], in: dir)
            let lines = (1...4).map { #"{"op":"push","account":"a\#($0 % 3)","device":"d","payload":{"aps":{"alert":"x"}}}"# }
            try filter.send(lines)
            #expect(waitUntil(deadline: 5) { filter.output.count == 4 })
            // No line comes now: the checkpoint commits, and the file says what a reader of
            // the state sees, without waiting for the next line or the end.
            let seen = waitUntil(deadline: 2 * period + 1) {
                let m = Self.read(path)
                return m["badgeflow_committed_seq"] == 4 && m["badgeflow_accounts_stored"] == 3
            }
            let info = try await CLI.run(["state", "info", dir + "/s.sqlite"]).stdout
            #expect(seen, "\(Self.read(path).filter { $0.key.hasPrefix("badgeflow_accounts") || $0.key.hasPrefix("badgeflow_committed") })")
            #expect(info.contains("accounts: 3\n") && info.contains("last seq: 4\n"))
            #expect(await filter.close() == 0)
        }
    }

    @Test(.tags(.requiresRoot, .requiresTmpfs), .requires(.tmpfs))
    func aMetricsFolderThatTurnsUnwritableIsOneWarningThenExit4AtTheEnd() async throws {
        // An immutable folder stops root too (see ReadOnlyFolderTests), on a tmpfs of its own.
        let disk = try TmpFS.scratch(size: "8m"), dir = disk.folder
        defer { disk.release() }
        let folder = disk.path + "/metrics", path = folder + "/m.prom"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let period = 0.1
        let run = try FullDiskTests.Running(["filter", "--checkpoint", String(period), "--metrics", path], in: dir)
        run.feed(LiveStreamTests.push + "\n")
        #expect(waitUntil(deadline: 5) { Self.read(path)["badgeflow_results_total"] == 1 })
        try TmpFS.setImmutable(folder, true)
        defer { try? TmpFS.setImmutable(folder, false) }
        run.feed(LiveStreamTests.push + "\n" + LiveStreamTests.push + "\n")
        // The first write that fails is warned of; then several periods pass, idle, with every
        // write failing (time passing is what is tested here: a sleep), and the stream goes on.
        #expect(
            waitUntil(deadline: 60) {
                ((try? String(contentsOfFile: run.stderrPath, encoding: .utf8)) ?? "").contains("badgeflow: warning: --metrics")
            })
        usleep(UInt32(8 * period * 1e6))
        let done = try await run.finish()
        #expect(done.status == 4, "\(done.stderr)")
        #expect(done.stdout.split(separator: "\n").count == 3)
        let messages = done.stderr.split(separator: "\n")
        #expect(messages.filter { $0.hasPrefix("badgeflow: warning: --metrics: cannot write") }.count == 1, "\(done.stderr)")
        #expect(messages.filter { $0.hasPrefix("badgeflow: error: --metrics \(path): cannot write it") }.count == 1, "\(done.stderr)")
        // The file kept its last content, whole.
        #expect(Self.read(path)["badgeflow_results_total"] == 1)
    }

    @Test func anUnwritableMetricsFileIsExit4BeforeAnyLine() async throws {
        try await TemporaryFolder.with { dir in
            let run = try await CLI.run(
                ["filter", "--metrics", dir + "/no-such-folder/m.prom"], input: LiveStreamTests.push + "\n")
            #expect(run.status == 4)
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains("--metrics \(dir)/no-such-folder/m.prom: cannot write it"), "\(run.stderr)")
            #expect(run.stderr.contains("No such file or directory"))
        }
    }
}
