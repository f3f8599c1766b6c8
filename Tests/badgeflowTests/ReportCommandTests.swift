import Foundation
import Testing

@Suite struct ReportCommandTests {
    private func metric(_ name: String, in page: String) -> Int? {
        guard let r = page.range(of: #"<td data-metric="\#(name)">"#) else { return nil }
        return Int(page[r.upperBound...].prefix { $0.isNumber })
    }

    @Test func writesThePageWithTheFiltersFigures() throws {
        let dir = try CLI.temporaryDirectory()
        defer { CLI.removeTemporaryDirectory(dir) }
        let input = CLI.fixture("scenarios/account-day.ndjson")
        let filter = try CLI.run(["filter", input])
        let r = try CLI.run(["report", "-o", dir + "/r.html", "--account", "alice", input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let page = try String(contentsOfFile: dir + "/r.html", encoding: .utf8)
        #expect(metric("results", in: page) == filter.lines.count)
        #expect(metric("errors", in: page) == filter.lines.filter { $0.contains(#""error":"#) }.count)
        #expect(metric("decrements", in: page) == filter.lines.filter { $0.contains(#""decrement":"#) }.count)
        #expect(page.contains(#"data-account="alice""#))
        #expect(page.hasPrefix("<!DOCTYPE html>"))
    }

    @Test func readsStdinTwiceAndWritesStdoutWithDash() throws {
        let input = try String(contentsOfFile: CLI.fixture("scenarios/demo.ndjson"), encoding: .utf8)
        let r = try CLI.run(["report", "-o", "-"], input: input)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(metric("results", in: r.stdout) == 11)
        // The detail pass read the copy of stdin: the account's rows are there.
        #expect(r.stdout.contains(#"<span data-final="results">11</span>"#))
    }

    @Test func replacesTheOutputAtomicallyAndKeepsItOnFailure() throws {
        let dir = try CLI.temporaryDirectory()
        defer { CLI.removeTemporaryDirectory(dir) }
        let out = dir + "/r.html"
        try "old".write(toFile: out, atomically: true, encoding: .utf8)
        let bad = try CLI.run(["report", "--rules", dir + "/missing.json", "-o", out, CLI.fixture("scenarios/demo.ndjson")])
        #expect(bad.status == 2)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old")
        let good = try CLI.run(["report", "-o", out, CLI.fixture("scenarios/demo.ndjson")])
        #expect(good.status == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["r.html"])
    }

    @Test func anUnreadableInputIsExit4AndNamed() throws {
        let dir = try CLI.temporaryDirectory()
        defer { CLI.removeTemporaryDirectory(dir) }
        let r = try CLI.run(["report", "-o", dir + "/r.html", dir + "/nope.ndjson", CLI.fixture("scenarios/demo.ndjson")])
        #expect(r.status == 4)
        #expect(r.stderr.contains("nope.ndjson"))
    }
}
