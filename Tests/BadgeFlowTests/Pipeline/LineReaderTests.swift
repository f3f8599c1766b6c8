import BadgeFlowTestSupport
import Dispatch
import Testing
@testable import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a `LineReader` hands out for `input`: lines as text, overlong ones as `<overlong N>`.
private func read(_ input: [UInt8], maxLineBytes: Int = 1 << 20, chunkBytes: Int = 1 << 18) throws -> [String] {
    let folder = try TemporaryFolder()
    let file = try folder.write("input.ndjson", input)
    let fd = open(file, O_RDONLY)
    #expect(fd >= 0)
    defer { close(fd) }
    let reader = LineReader(fd: fd, maxLineBytes: maxLineBytes, chunkBytes: chunkBytes)
    var lines: [String] = []
    try reader.forEachLine(file) { line in
        switch line {
        case .text(let bytes): lines.append(String(decoding: bytes, as: UTF8.self))
        case .overlong(let n): lines.append("<overlong \(n)>")
        }
        return true
    }
    return lines
}

private func read(_ input: String, maxLineBytes: Int = 1 << 20, chunkBytes: Int = 1 << 18) throws -> [String] {
    try read(Array(input.utf8), maxLineBytes: maxLineBytes, chunkBytes: chunkBytes)
}

@Suite struct LineReaderTests {
    @Test func splitsOnNewlinesKeepingBlankLines() throws {
        #expect(try read("a\n\nb\n") == ["a", "", "b"])
    }

    @Test func aLastLineWithoutNewlineCounts() throws {
        #expect(try read("a\nb") == ["a", "b"])
        #expect(try read("only") == ["only"])
        #expect(try read("") == [])
    }

    @Test func crlfEndsAreDropped() throws {
        #expect(try read("a\r\nb\r\n\r\nc\r") == ["a", "b", "", "c"])
        // Only the CR right before the end goes.
        #expect(try read("a\rb\r\n") == ["a\rb"])
    }

    @Test func aByteOrderMarkIsDroppedFromTheFirstLineOnly() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let lines = try read(bom + Array("{}\n".utf8) + bom + Array("{}\n".utf8))
        #expect(lines.count == 2)
        #expect(lines[0] == "{}")
        #expect(Array(lines[1].utf8) == bom + Array("{}".utf8))
    }

    @Test func linesSpanningChunksComeOutWhole() throws {
        // Chunks of 4096 bytes; lines of 1000-3000 bytes cross chunk ends everywhere.
        var input = ""
        var expected: [String] = []
        for i in 0..<200 {
            let line = String(repeating: Character(Unicode.Scalar(UInt8(97 + i % 26))), count: 1000 + (i * 137) % 2000)
            expected.append(line)
            input += line + "\n"
        }
        #expect(try read(input, maxLineBytes: 8192, chunkBytes: 4096) == expected)
    }

    @Test func anOverlongLineIsReportedWithItsLengthAndTheNextLinesGoOn() throws {
        let long = String(repeating: "x", count: 50_000)
        let lines = try read("a\n" + long + "\nb\n" + long + "\n", maxLineBytes: 1000, chunkBytes: 4096)
        #expect(lines == ["a", "<overlong 50000>", "b", "<overlong 50000>"])
    }

    @Test func anOverlongLineInsideOneChunkIsReportedToo() throws {
        let lines = try read("a\n" + String(repeating: "y", count: 3000) + "\nb", maxLineBytes: 1000, chunkBytes: 65536)
        #expect(lines == ["a", "<overlong 3000>", "b"])
    }

    @Test func anOverlongLastLineWithoutNewline() throws {
        let lines = try read("a\n" + String(repeating: "z", count: 20_000), maxLineBytes: 1000, chunkBytes: 4096)
        #expect(lines == ["a", "<overlong 20000>"])
    }

    @Test func aLineOfExactlyTheLimitIsKept() throws {
        let exact = String(repeating: "k", count: 1000)
        #expect(try read(exact + "\n" + exact, maxLineBytes: 1000, chunkBytes: 4096) == [exact, exact])
    }

    @Test func theCallerCanStopEarly() throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("in", Array("1\n2\n3\n".utf8))
        let fd = open(file, O_RDONLY)
        defer { close(fd) }
        var seen: [String] = []
        try LineReader(fd: fd).forEachLine { line in
            if case .text(let b) = line { seen.append(String(decoding: b, as: UTF8.self)) }
            return seen.count < 2
        }
        #expect(seen == ["1", "2"])
    }

    @Test func aReadErrorIsAFailureNamingTheInput() throws {
        let folder = try TemporaryFolder()
        let fd = open(folder.path, O_RDONLY)  // a folder: read() fails with EISDIR
        defer { close(fd) }
        let failure = #expect(throws: FileIO.Failure.self) {
            try LineReader(fd: fd).forEachLine("folder") { _ in true }
        }
        #expect(failure?.path == "folder")
    }

    /// A pipe that stays open: `idle` is called whenever no input is ready (once after the
    /// lines of each write), with the lines before it already handed out, and its timer
    /// calls it again while nothing comes; a regular file never calls it.
    @Test func idleIsCalledWhenAPipeHasNoInputReady() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let reader = LineReader(fd: fds[0])
        var events: [String] = []
        let first = Array("a\nb\n".utf8)
        #expect(write(fds[1], first, first.count) == first.count)
        try reader.forEachLine(
            "pipe",
            idle: {
                events.append("idle")
                let idles = events.filter { $0 == "idle" }.count
                if idles == 3 {
                    // Two timer rounds with nothing: now a last line, and the end.
                    let last = Array("c".utf8)
                    _ = write(fds[1], last, last.count)
                    close(fds[1])
                }
                return idles < 3 ? 1 : -1
            }
        ) { line in
            if case .text(let bytes) = line { events.append(String(decoding: bytes, as: UTF8.self)) }
            return true
        }
        #expect(events == ["a", "b", "idle", "idle", "idle", "c"])
        var fileIdles = 0
        let folder = try TemporaryFolder()
        let file = try folder.write("input.ndjson", Array("x\ny\n".utf8))
        let fd = open(file, O_RDONLY)
        defer { close(fd) }
        reader.restart(fd: fd)
        try reader.forEachLine(
            file,
            idle: {
                fileIdles += 1; return -1
            }
        ) { _ in true }
        #expect(fileIdles == 0)
    }

    /// A signal that lands after the line loop last looked and before the reader blocks
    /// (here: while `idle` runs, which then asks to wait without a limit) makes `wakeFD`
    /// readable, and the wait ends at once. A reader that went on to `read` would block
    /// until the next line, which on a quiet stream never comes: the filter then ignored
    /// SIGTERM (seen in CI under TSan, 10 runs in 100 of a test that signals right away).
    @Test func aWakeDuringIdleEndsTheWaitInsteadOfBlockingInRead() throws {
        var input: [Int32] = [0, 0], wake: [Int32] = [0, 0]
        #expect(pipe(&input) == 0)
        #expect(pipe(&wake) == 0)
        defer { close(input[0]); close(wake[0]); close(wake[1]) }
        nonisolated(unsafe) let reader = LineReader(fd: input[0])
        reader.wakeFD = wake[0]
        let line = Array("a\n".utf8)
        #expect(write(input[1], line, line.count) == line.count)
        nonisolated(unsafe) var seen: [String] = []
        nonisolated(unsafe) var idles = 0
        let wakeWrite = wake[1]
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? reader.forEachLine(
                "pipe",
                idle: {
                    idles += 1
                    var byte: UInt8 = 1
                    _ = write(wakeWrite, &byte, 1)
                    return -1
                }
            ) { line in
                if case .text(let bytes) = line { seen.append(String(decoding: bytes, as: UTF8.self)) }
                return true
            }
            done.signal()
        }
        let returned = done.wait(timeout: .now() + 20) == .success
        // A reader blocked in read gets its way out here (the input ends), so a failure
        // is reported instead of hanging the run.
        close(input[1])
        if !returned { done.wait() }
        #expect(returned, "the reader did not return while its wake was readable")
        #expect(seen == ["a"])
        #expect(idles == 1)
    }
}
