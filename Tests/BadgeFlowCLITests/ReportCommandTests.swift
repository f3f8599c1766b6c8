import BadgeFlowTestSupport
import Foundation
import Testing

@Suite struct ReportCommandTests {
    private func metric(_ name: String, in page: String) -> Int? {
        guard let r = page.range(of: #"<td data-metric="\#(name)">"#) else { return nil }
        return Int(page[r.upperBound...].prefix { $0.isNumber })
    }

    @Test func writesThePageWithTheFiltersFigures() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let input = CLI.fixture("scenarios/account-day.ndjson")
        let filter = try await CLI.run(["filter", input])
        let r = try await CLI.run(["report", "-o", dir + "/r.html", "--account", "alice", input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let page = try String(contentsOfFile: dir + "/r.html", encoding: .utf8)
        #expect(metric("results", in: page) == filter.lines.count)
        #expect(metric("errors", in: page) == filter.lines.filter { $0.contains(#""error":"#) }.count)
        #expect(metric("decrements", in: page) == filter.lines.filter { $0.contains(#""decrement":"#) }.count)
        #expect(page.contains(#"data-account="alice""#))
        #expect(page.hasPrefix("<!DOCTYPE html>"))
    }

    @Test func fleetWideExpireLinesCountForTheAccountsTheyList() async throws {
        let input = CLI.fixture("scenarios/report-expire.ndjson")
        let filter = try await CLI.run(["filter", input])
        // The filter's figures, an expire's `accounts` entries counted one by one.
        var decrements = 0, total = 0, updates = 0
        for line in filter.lines {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["error"] == nil
            else { continue }
            let parts = object["op"] as? String == "expire" ? (object["accounts"] as? [[String: Any]] ?? []) : [object]
            for part in parts {
                if let d = part["decrement"] as? [String: Any], let by = d["by"] as? Int {
                    decrements += 1
                    total += by
                }
                updates += (part["badgeUpdates"] as? [Any])?.count ?? 0
            }
        }
        #expect(total == 4)
        let r = try await CLI.run(["report", "-o", "-", input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(metric("decrements", in: r.stdout) == decrements)
        #expect(metric("decrement-total", in: r.stdout) == total)
        #expect(metric("badge-updates", in: r.stdout) == updates)
        // ann's section holds her expire row (seq 8, −3); "" is the default device's own account.
        let row =
            #"<tr><td>8</td><td>2026-11-24 09:30:00Z</td><td>expire</td><td></td><td></td><td><code></code></td><td></td>"#
            + #"<td>2 nodes changed; expired root.inbox</td><td>−3</td><td>ipad→0 phone→0</td><td>0</td></tr>"#
        #expect(r.stdout.contains(row))
        #expect(r.stdout.contains(#"<span data-final="results">1</span>"#))
    }

    @Test func readsStdinTwiceAndWritesStdoutWithDash() async throws {
        let input = try String(contentsOfFile: CLI.fixture("scenarios/demo.ndjson"), encoding: .utf8)
        let r = try await CLI.run(["report", "-o", "-"], input: input)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(metric("results", in: r.stdout) == 11)
        // The detail pass read the copy of stdin: the account's rows are there.
        #expect(r.stdout.contains(#"<span data-final="results">11</span>"#))
    }

    /// `report -` copies stdin before it reads it twice. Ctrl-C (here SIGINT) on a pipe that
    /// stays open stops that copy at once, exit 130 and no page; the copy went on
    /// reading after the signal before, until the input ended.
    @Test func aSignalWhileCopyingStdinStopsTheReport() throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.executable)
        p.arguments = ["report", "-o", dir + "/r.html", "-"]
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        input.fileHandleForWriting.write(Data("{\"op\":\"push\",\"device\":\"d\",\"payload\":{\"aps\":{\"badge\":1}}}\n".utf8))
        // Once the copy has its temporary file open, the handlers are installed (a signal
        // before that would kill the report outright).
        func copying() -> Bool {
            let fds = "/proc/\(p.processIdentifier)/fd"
            return ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).contains { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + fd))?.contains("badgeflow-report-") == true
            }
        }
        #expect(waitUntil(deadline: 30, copying), "the copy of stdin did not start")
        kill(p.processIdentifier, SIGINT)
        let stopped = ChildProcess.exits(p, within: 30)
        try? input.fileHandleForWriting.close()
        #expect(stopped, "SIGINT did not stop the copy of stdin")
        #expect(p.terminationStatus == 128 + SIGINT)
        #expect(!FileManager.default.fileExists(atPath: dir + "/r.html"))
    }

    @Test func replacesTheOutputAtomicallyAndKeepsItOnFailure() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let out = dir + "/r.html"
        try "old".write(toFile: out, atomically: true, encoding: .utf8)
        let bad = try await CLI.run(["report", "--rules", dir + "/missing.json", "-o", out, CLI.fixture("scenarios/demo.ndjson")])
        #expect(bad.status == 2)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old")
        let good = try await CLI.run(["report", "-o", out, CLI.fixture("scenarios/demo.ndjson")])
        #expect(good.status == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["r.html"])
    }

    @Test func anUnreadableInputIsExit4AndNamed() async throws {
        let dir = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(dir) }
        let r = try await CLI.run(["report", "-o", dir + "/r.html", dir + "/nope.ndjson", CLI.fixture("scenarios/demo.ndjson")])
        #expect(r.status == 4)
        #expect(r.stderr.contains("nope.ndjson"))
    }

    @Test func numberedOverlongLinesTakeTheirNumberAsInFilter() async throws {
        let long = #"{"aps":{"alert":""# + String(repeating: "x", count: 3000) + #""}}"#
        // The second line is longer than the reader keeps (its number is read from its head);
        // the third is within it but its JSON is over the limit.
        let input =
            "5\t" + #"{"aps":{"alert":"hi","thread-id":"a"}}"# + "\n" + "6\t" + long + "\n"
            + "9\t" + String(long.prefix(1030)) + "\n"
        let filter = try await CLI.run(["filter", "--numbered", "--max-line-bytes", "1024"], input: input)
        #expect(filter.lines.count == 3)
        #expect(filter.lines[1].hasPrefix(#"{"seq":6,"error":{"code":"line-too-long""#), "\(filter.lines)")
        #expect(filter.lines[2].hasPrefix(#"{"seq":9,"error":{"code":"line-too-long""#), "\(filter.lines)")
        let r = try await CLI.run(["report", "--numbered", "--max-line-bytes", "1024", "-o", "-"], input: input)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(metric("errors", in: r.stdout) == 2)
        #expect(r.stdout.contains("<tr><td>line-too-long</td><td>2</td><td>6</td></tr>"))
        #expect(r.stdout.contains("<tr><td>chat</td><td>1</td><td>5</td></tr>"))
    }

    /// Issue 46: `report --account ID --text` answers for one account in a terminal: its
    /// devices (the one that left, with what it showed), the lines that changed a number, and
    /// the marks that make the total.
    @Test func textAnswersForOneAccount() async throws {
        let input = CLI.fixture("scenarios/devices-join-leave.ndjson")
        let r = try await CLI.run(["report", "--account", "u", "--text", input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("account u: icon "), "\(r.stdout)")
        #expect(r.stdout.contains("left by unregister at seq 11 (2026-11-24 10:00:00Z)"), "\(r.stdout)")
        #expect(r.stdout.contains("left by logout at seq 13"), "\(r.stdout)")
        #expect(r.stdout.contains("marks that make the total at the end"))
        #expect(!r.stdout.contains("<html"))
        let none = try await CLI.run(["report", "--account", "nobody", "--text", input])
        #expect(none.status == 1)
        #expect(none.stdout.contains("account nobody: no line of the input names it"))
        #expect(try await CLI.run(["report", "--text", input]).status == 2)
    }

    /// The page names the command that shows an account not in detail: this run's options and inputs.
    @Test func thePageNamesTheCommandForAnyAccount() async throws {
        let input = CLI.fixture("scenarios/wechat-tab.ndjson")
        let rules = CLI.fixture("scenarios/wechat-tab.rules.json")
        let r = try await CLI.run(["report", "--rules", rules, "--stamp", "-o", "-", input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#"data-command-before="badgeflow report --rules \#(rules) --stamp --account""#))
        #expect(r.stdout.contains(#"data-command-after="\#(input)""#))
        #expect(r.stdout.contains(#"<script type="text/plain" id="account-index" data-accounts=""#))
    }
}
