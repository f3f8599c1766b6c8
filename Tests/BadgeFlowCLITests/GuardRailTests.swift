import BadgeFlowTestSupport
import Foundation
import Testing

extension CLI {
    /// A JSON state's text without its records (StateFileFormat): `inputs` (the inputs it applied,
    /// each named with when it was applied) and `offset` (written by `--numbered` runs).
    static func withoutInputRecords(_ text: String) -> String {
        let text = text.replacingOccurrences(of: "\n  \"offset\": \"numbered\",", with: "")
        guard let start = text.range(of: "\n  \"inputs\": [\n"),
            let end = text.range(of: "\n  ],", range: start.upperBound..<text.endIndex)
        else { return text }
        return String(text[..<start.lowerBound] + text[end.upperBound...])
    }
}

/// StateFileFormat, "Inputs applied and queue offsets": each mistake
/// of issue 43 that went through with exit 0, refused.
@Suite struct GuardRailTests {
    static let day1 = """
        {"account":"a","device":"d1","aps":{"alert":"x","thread-id":"mail"}}
        {"account":"b","device":"d2","aps":{"alert":"y","thread-id":"mail"}}

        """
    static let day2 = """
        {"account":"a","device":"d1","aps":{"alert":"z","thread-id":"chat"}}

        """

    static func write(_ text: String, _ path: String) throws { try text.write(toFile: path, atomically: true, encoding: .utf8) }

    /// Runs `command` with sh (`$0` = `argument`), expecting success.
    static func sh(_ command: String, _ argument: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command, argument]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(command)")
    }

    // MARK: Item 3: an empty or truncated state is not a new state

    @Test(arguments: ["json", "sqlite", "db"])
    func aZeroByteStateFileIsExit3AndLeftAsItIs(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s." + format
            #expect(FileManager.default.createFile(atPath: state, contents: Data()))
            let run = try await CLI.run(["filter", "--state", state], input: Self.day1)
            #expect(run.status == 3 && run.stdout.isEmpty)
            #expect(run.stderr.contains("not a BadgeFlow state: empty file"), "\(run.stderr)")
            #expect(try await CLI.run(["state", "info", state]).status == 3)
            #expect(try FileManager.default.attributesOfItem(atPath: state)[.size] as? Int == 0)
            // A missing path is still a new state.
            try FileManager.default.removeItem(atPath: state)
            #expect(try await CLI.run(["filter", "--state", state], input: Self.day1).status == 0)
        }
    }

    @Test(arguments: ["json", "sqlite"])
    func aTruncatedStateFileIsExit3(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s." + format
            #expect(try await CLI.run(["filter", "--state", state], input: Self.day1).status == 0)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: state)[.size] as? Int)
            try Self.sh("truncate -s \(size / 2) \"$0\"", state)
            let run = try await CLI.run(["filter", "--state", state, "--no-resume"], input: Self.day2)
            #expect(run.status == 3 && run.stdout.isEmpty, "\(run.stderr)")
        }
    }

    /// A RocksDB folder whose CURRENT is empty or missing (beside table files), whose
    /// manifest is missing, or with an empty table file: exit 3, never made again.
    @Test(arguments: ["empty CURRENT", "no CURRENT", "no MANIFEST", "empty sst"])
    func aRocksDBFolderWithEmptyOrMissingFilesIsExit3(_ damage: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s.rocksdb"
            #expect(try await CLI.run(["filter", "--state", state], input: Self.day1).status == 0)
            let files = try FileManager.default.contentsOfDirectory(atPath: state)
            switch damage {
            case "empty CURRENT": try Self.write("", state + "/CURRENT")
            case "no CURRENT": try FileManager.default.removeItem(atPath: state + "/CURRENT")
            case "no MANIFEST":
                for f in files where f.hasPrefix("MANIFEST-") { try FileManager.default.removeItem(atPath: state + "/" + f) }
            default:
                let sst = try #require(files.first { $0.hasSuffix(".sst") })
                try Self.write("", state + "/" + sst)
            }
            let before = try FileManager.default.contentsOfDirectory(atPath: state).sorted()
            let run = try await CLI.run(["filter", "--state", state, "--no-resume"], input: Self.day2)
            #expect(run.status == 3 && run.stdout.isEmpty, "\(run.stderr)")
            #expect(run.stderr.contains("not a BadgeFlow state"), "\(run.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == before)
        }
    }

    /// An empty table file that the manifest does not name is what a filter killed during a
    /// flush leaves: the state opens, reads and goes on (RocksDB removes the file), while the
    /// same empty file in the manifest's place is refused (above).
    @Test func anEmptyTableFileOutsideTheManifestIsNoReasonToRefuse() async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s.rocksdb"
            #expect(try await CLI.run(["filter", "--state", state], input: Self.day1).status == 0)
            let orphan = state + "/999999.sst"
            try Self.write("", orphan)
            let info = try await CLI.run(["state", "info", state])
            #expect(info.status == 0, "\(info.stderr)")
            let run = try await CLI.run(["filter", "--state", state, "--no-resume"], input: Self.day2)
            #expect(run.status == 0 && run.lines.count == 1, "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: orphan))
        }
    }

    // MARK: Item 2: a queue offset never moves backwards

    @Test(arguments: Formats.checkpointing)
    func aQueueOffsetRefusesARunWithoutNumbered(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/q." + format
            let queue = Self.day1.split(separator: "\n").enumerated().map { "\($0.offset == 0 ? 578_794 : 578_795)\t\($0.element)\n" }
            #expect(try await CLI.run(["filter", "--numbered", "--state", state], input: queue.joined()).status == 0)
            #expect(try await CLI.run(["state", "info", state]).stdout.contains("last seq: 578795\n"))
            // A one-off fix piped in without --numbered: refused, the offset stays.
            let fix = try await CLI.run(["filter", "--state", state], input: Self.day2)
            #expect(fix.status == 2 && fix.stdout.isEmpty)
            #expect(
                fix.stderr.contains("queue offset") && fix.stderr.contains("578795") && fix.stderr.contains("--no-resume"), "\(fix.stderr)")
            // On purpose: applied, and the offset left as it was.
            let applied = try await CLI.run(["filter", "--state", state, "--no-resume"], input: Self.day2)
            #expect(applied.status == 0 && applied.lines.count == 1, "\(applied.stderr)")
            let info = try await CLI.run(["state", "info", state])
            #expect(info.stdout.contains("last seq: 578795\n") && info.stdout.contains("offset: numbered"), "\(info.stdout)")
            // A numbered run with smaller numbers does not move it back either.
            let low = try await CLI.run(["filter", "--numbered", "--state", state], input: "3\t" + Self.day2)
            #expect(low.status == 0 && low.lines.first?.hasPrefix("{\"seq\":3,") == true)
            #expect(try await CLI.run(["state", "info", state]).stdout.contains("last seq: 578795\n"))
            let json = try await CLI.run(["state", "info", "--json", state])
            #expect(json.stdout.contains("\"offset\":true"), "\(json.stdout)")
        }
    }

    // MARK: Item 1: nothing applied twice

    @Test(arguments: Formats.all)
    func anInputAppliedBeforeIsRefusedWhateverItsName(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s." + format
            let input = dir + "/day1.ndjson", copy = dir + "/renamed.ndjson"
            try Self.write(Self.day1, input)
            try Self.write(Self.day1, copy)
            let first = try await CLI.run(["filter", "--state", state, input])
            #expect(first.status == 0 && first.lines.count == 2)
            for again in [input, copy] {
                let run = try await CLI.run(["filter", "--state", state, again])
                #expect(run.status == 2 && run.stdout.isEmpty, "\(run.stderr)")
                #expect(run.stderr.contains("already applied") && run.stderr.contains("(seq 1-2)"), "\(run.stderr)")
                #expect(run.stderr.contains("as \(input)") && run.stderr.contains("--no-resume"), "\(run.stderr)")
            }
            // Another day goes through; on purpose, the same one too.
            try Self.write(Self.day2, dir + "/day2.ndjson")
            #expect(try await CLI.run(["filter", "--state", state, dir + "/day2.ndjson"]).status == 0)
            let reapplied = try await CLI.run(["filter", "--state", state, "--no-resume", copy])
            #expect(reapplied.status == 0 && reapplied.lines.count == 2, "\(reapplied.stderr)")
            // What the Spark driver reads: every digest recorded, with its seq range.
            let info = try await CLI.run(["state", "info", "--json", state])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
            let inputs = try #require(object["inputs"] as? [[String: Any]])
            #expect(inputs.count == 2, "\(info.stdout)")
            #expect(
                inputs.last?["name"] as? String == copy && inputs.last?["first_seq"] as? Int == 1 && inputs.last?["last_seq"] as? Int == 2)
            let digest = try #require(inputs.last?["digest"] as? String)
            // size:sha256(first MiB):sha256(last MiB), as sha256sum computes it.
            let sum = Process()
            sum.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
            sum.arguments = [input]
            let out = Pipe()
            sum.standardOutput = out
            try sum.run()
            await sum.exited()
            let hex = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64)
            #expect(digest == "\(Self.day1.utf8.count):\(hex):\(hex)")
        }
    }

    /// The Spark driver reads a split state's records from its parts, and a merged state
    /// still refuses a day its parts applied.
    @Test(arguments: Formats.all)
    func splitAndMergeKeepTheInputsApplied(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s." + format, input = dir + "/day1.ndjson"
            try Self.write(Self.day1, input)
            #expect(try await CLI.run(["filter", "--state", state, input]).status == 0)
            #expect(try await CLI.run(["state", "split", state, "--parts", "2", dir + "/parts"]).status == 0)
            let parts = try FileManager.default.contentsOfDirectory(atPath: dir + "/parts").sorted().map { dir + "/parts/" + $0 }
            #expect(parts.count == 2)
            for part in parts {
                #expect(try await CLI.run(["state", "info", "--json", part]).stdout.contains("\"name\":\"\(input)\""), "\(part)")
            }
            let merged = dir + "/m." + format
            #expect(try await CLI.run(["state", "merge", merged] + parts).status == 0)
            let again = try await CLI.run(["filter", "--state", merged, input])
            #expect(again.status == 2 && again.stderr.contains("already applied"), "\(again.stderr)")
        }
    }

    @Test(arguments: ["json", "sqlite"])
    func aDigestPassedForStdinIsRecordedAndRefused(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s." + format
            let digest = "123:" + String(repeating: "ab", count: 32) + ":" + String(repeating: "cd", count: 32)
            #expect(try await CLI.run(["filter", "--state", state, "--input-digest", digest], input: Self.day1).status == 0)
            let again = try await CLI.run(["filter", "--state", state, "--input-digest", digest], input: Self.day1)
            #expect(again.status == 2 && again.stderr.contains("already applied") && again.stderr.contains("as stdin"), "\(again.stderr)")
            #expect(try await CLI.run(["filter", "--state", state, "--input-digest", "nonsense"], input: "").status == 2)
            #expect(try await CLI.run(["state", "info", "--json", state]).stdout.contains(digest))
        }
    }

    /// stdin through a pipe is digested as it is read and recorded as `stdin`: the same
    /// day given later as a file is refused; a pipe itself is never refused (its digest is
    /// known only once it is read: the queue offset protects a queue).
    @Test(arguments: Formats.all)
    func aPipedDayIsRecordedAndTheSameDayAsAFileIsRefused(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s." + format, input = dir + "/day1.ndjson"
            try Self.write(Self.day1, input)
            let piped = try await CLI.run(["filter", "--state", state], input: Self.day1)
            #expect(piped.status == 0 && piped.lines.count == 2, "\(piped.stderr)")
            let info = try await CLI.run(["state", "info", "--json", state])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
            let inputs = try #require(object["inputs"] as? [[String: Any]])
            #expect(inputs.count == 1 && inputs.first?["name"] as? String == "stdin", "\(info.stdout)")
            #expect(inputs.first?["first_seq"] as? Int == 1 && inputs.first?["last_seq"] as? Int == 2)
            let file = try await CLI.run(["filter", "--state", state, input])
            #expect(file.status == 2 && file.stdout.isEmpty, "\(file.stderr)")
            #expect(file.stderr.contains("already applied") && file.stderr.contains("as stdin (seq 1-2)"), "\(file.stderr)")
            // A pipe is read before its digest is known: applied again (its record replaces
            // the first: one record a content). An empty pipe records nothing; another day does.
            let again = try await CLI.run(["filter", "--state", state], input: Self.day1)
            #expect(again.status == 0 && again.lines.count == 2, "\(again.stderr)")
            #expect(try await CLI.run(["filter", "--state", state], input: "").status == 0)
            #expect(try await CLI.run(["filter", "--state", state], input: Self.day2).status == 0)
            let after = try await CLI.run(["state", "info", "--json", state])
            let names = try #require(
                (try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])?["inputs"] as? [[String: Any]]
            ).map { "\($0["name"] ?? "")" }
            #expect(names == ["stdin", "stdin"], "\(after.stdout)")
            #expect(after.stdout.contains("\"digest\":\"\(Self.day2.utf8.count):"), "\(after.stdout)")
            // A queue (--numbered on a pipe) is protected by its offset: its stdin is not recorded.
            let queue = dir + "/q." + format
            let numbered = Self.day1.split(separator: "\n").enumerated().map { "\($0.offset + 1)\t\($0.element)\n" }.joined()
            let consumed = try await CLI.run(["filter", "--numbered", "--state", queue], input: numbered)
            #expect(consumed.status == 0 && consumed.lines.count == 2, "\(consumed.stderr)")
            #expect(try await CLI.run(["state", "info", "--json", queue]).stdout.contains("\"inputs\":[]"))
        }
    }

    /// stdin redirected from a file is a file: digested before it is read, refused the
    /// second time; with --input-digest the caller's name is recorded, not stdin's.
    @Test(arguments: ["json", "sqlite"])
    func stdinFromAFileIsRefusedLikeTheFile(_ format: String) async throws {
        try await TemporaryFolder.with { dir in
            let state = dir + "/s." + format, input = dir + "/day1.ndjson"
            try Self.write(Self.day1, input)
            let bin = CLI.executable
            try Self.sh("\"$0\" filter --state '\(state)' < '\(input)' > /dev/null", bin)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", "\"$0\" filter --state '\(state)' < '\(input)' > /dev/null 2> '\(dir)/err'", bin]
            try p.run()
            await p.exited()
            let err = try String(contentsOfFile: dir + "/err", encoding: .utf8)
            #expect(p.terminationStatus == 2 && err.contains("already applied") && err.contains("as stdin"), "\(err)")
            #expect(try await CLI.run(["filter", "--state", state, input]).status == 2)
            // The Spark job names what it pipes: only that name is recorded.
            let named = dir + "/n." + format
            let digest = "123:" + String(repeating: "ab", count: 32) + ":" + String(repeating: "cd", count: 32)
            #expect(
                try await CLI.run(["filter", "--state", named, "--input-digest", digest + "=day1.ndjson"], input: Self.day1).status == 0)
            let info = try await CLI.run(["state", "info", "--json", named]).stdout
            #expect(info.contains("\"name\":\"day1.ndjson\"") && !info.contains("\"name\":\"stdin\""), "\(info)")
        }
    }

    // MARK: Item 5: compressed input, whatever its name

    @Test(arguments: [
        ("gzip -c", "gzip", "zcat"), ("bzip2 -c", "bzip2", "bzcat"), ("xz -c", "xz", "xzcat"), ("zstd -q -c", "zstd", "zstdcat"),
    ])
    func compressedInputIsExit4NamingItsFormat(_ tool: String, _ name: String, _ cat: String) async throws {
        try await TemporaryFolder.with { dir in
            let plain = dir + "/plain.ndjson", packed = dir + "/day.ndjson"
            try Self.write(Self.day1, plain)
            try Self.sh("\(tool) \"$0\" > \"$0.packed\" && mv \"$0.packed\" \"\(packed)\"", plain)
            let says = "\(name)-compressed input; pipe it through \(cat)"
            // A file, and the same bytes through a pipe.
            let filter = try await CLI.run(["filter", packed])
            #expect(filter.status == 4 && filter.stdout.isEmpty && filter.stderr == "badgeflow: \(packed): \(says)\n", "\(filter.stderr)")
            let piped = Process()
            piped.executableURL = URL(fileURLWithPath: "/bin/sh")
            piped.arguments = ["-c", "cat \"$0\" | \"$1\" filter", packed, CLI.executable]
            let out = Pipe(), err = Pipe()
            piped.standardOutput = out
            piped.standardError = err
            try piped.run()
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            await piped.exited()
            #expect(piped.terminationStatus == 4 && stdout.isEmpty && stderr == "badgeflow: <stdin>: \(says)\n", "\(stderr)")
            let report = try await CLI.run(["report", "-o", dir + "/r.html", packed])
            #expect(report.status == 4 && report.stderr.contains(says), "\(report.stderr)")
            let folder = dir + "/batch"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: packed, toPath: folder + "/day.ndjson")
            let batch = try await CLI.run(["batch", folder])
            #expect(batch.status == 4 && batch.stdout.contains(says), "\(batch.stdout)\(batch.stderr)")
        }
    }
}
