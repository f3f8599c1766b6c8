import BadgeFlowTestSupport
import Foundation
import Testing

/// Targets and walked entries that are not regular files: FIFOs, folder links, names that are
/// not UTF-8.
@Suite struct FileKindsTests {
    private let payload = "{\"aps\":{\"badge\":3}}\n"

    /// A FIFO at `path` with its read end open (non-blocking), so a writer's open does not wait.
    private func fifoReader(_ path: String) throws -> Int32 {
        try #require(mkfifo(path, 0o644) == 0)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(fd >= 0)
        return fd
    }

    /// Everything a FIFO's read end holds now.
    private func drain(_ fd: Int32) -> String {
        var data = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { break }
            data += buf[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }

    private func isFIFO(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO
    }

    @Test(arguments: ["validate", "batch"])
    func junitToAFIFOWritesIntoItAndLeavesItAFIFO(_ command: String) async throws {
        try await TemporaryFolder.with { dir in
            try payload.write(toFile: dir + "/a.json", atomically: false, encoding: .utf8)
            let junit = dir + "/report.xml"
            let reader = try fifoReader(junit)
            defer { close(reader) }
            let r = try await CLI.run([command, "--junit", junit, dir + "/a.json"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(isFIFO(junit), "the FIFO was replaced")
            #expect(drain(reader).hasPrefix("<?xml"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a.json", "report.xml"])
        }
    }

    /// Runs `badgeflow ARGS` while a watchdog, after a few seconds, opens `fifo` for writing
    /// and closes it: a run blocked reading the FIFO then ends (and the test fails) instead of
    /// hanging. Returns the run and whether the watchdog had to step in.
    private func runUnblocking(_ arguments: [String], fifo: String) throws -> (CLI.Run, Bool) {
        let done = Guarded(false)
        let unblocked = Guarded(false)
        let watchdog = Thread {
            // A run not done within 3 s: the FIFO is opened (as soon as it can be) to unblock it.
            if waitUntil(deadline: 3, { done.get() }) { return }
            _ = waitUntil(deadline: 600, poll: 0.02) {
                if done.get() { return true }
                let fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else { return false }
                close(fd)
                unblocked.set(true)
                return true
            }
        }
        watchdog.start()
        let r = try CLI.run(arguments)
        done.set(true)
        #expect(waitUntil(deadline: 60) { watchdog.isFinished })
        return (r, unblocked.get())
    }

    @Test(arguments: ["validate", "batch"])
    func aFIFOInAWalkedFolderIsSkippedWithAWarning(_ command: String) throws {
        try TemporaryFolder.with { dir in
            let folder = dir + "/in"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try payload.write(toFile: folder + "/a.json", atomically: false, encoding: .utf8)
            try #require(mkfifo(folder + "/f.json", 0o644) == 0)
            let (r, unblocked) = try runUnblocking([command, folder], fifo: folder + "/f.json")
            #expect(!unblocked, "the run blocked reading the FIFO")
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
            #expect(r.stderr.contains("warning: \(folder)/f.json: skipped: a FIFO, not a regular file"), "\(r.stderr)")
            // validate's summary is on stderr, batch's on stdout.
            #expect((r.stdout + r.stderr).contains(command == "batch" ? "1 file:" : "1 payload: 1 valid"), "\(r.stdout)")
            #expect(!r.stdout.contains("f.json"), "\(r.stdout)")
        }
    }

    @Test func aLinkToAFolderInsideAWalkedFolderIsNotFollowed() async throws {
        try await TemporaryFolder.with { dir in
            let folder = dir + "/in"
            try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
            try payload.write(toFile: folder + "/sub/a.json", atomically: false, encoding: .utf8)
            try #require(symlink("..", folder + "/sub/loop") == 0)
            try #require(symlink("sub", folder + "/alias") == 0)
            // A link to a regular file is an input.
            try #require(symlink("sub/a.json", folder + "/b.json") == 0)
            let r = try await CLI.run(["batch", folder])
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
            #expect(r.stdout.contains("2 files"), "\(r.stdout)")
            #expect(r.stdout.contains("\(folder)/sub/a.json"))
            #expect(r.stdout.contains("\(folder)/b.json"))
            #expect(!r.stdout.contains("loop/") && !r.stdout.contains("alias/"), "\(r.stdout)")
            // A folder link named on the command line is walked.
            let viaLink = try await CLI.run(["validate", folder + "/alias"])
            #expect(viaLink.status == 0 && viaLink.stderr.contains("1 payload: 1 valid"), "\(viaLink.stderr)")
        }
    }

    @Test(arguments: ["validate", "batch"])
    func aNameThatIsNotUTF8IsReportedByItsBytes(_ command: String) async throws {
        try await TemporaryFolder.with { dir in
            let folder = dir + "/in"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let name = Array((folder + "/a").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF)] + Array(".json".utf8CString)
            let fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            try #require(fd >= 0)
            _ = payload.withCString { write(fd, $0, strlen($0)) }
            close(fd)
            let r = try await CLI.run([command, folder])
            #expect(r.status == 4, "\(r.stdout)\(r.stderr)")
            #expect(r.stderr.contains("\(folder)/a\\xFF.json: the file name is not valid UTF-8"), "\(r.stderr)")
            #expect(!r.stderr.contains("No such file"), "\(r.stderr)")
        }
    }
}
