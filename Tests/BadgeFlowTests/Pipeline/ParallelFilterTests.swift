import Testing
@testable import BadgeFlow

/// A deterministic mixed stream: pushes over many threads and devices, envelopes, bad lines.
private func mixedStream(_ n: Int) -> [String] {
    var lines: [String] = []
    var x: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Int {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17
        return Int(x % 1_000_003)
    }
    for i in 0..<n {
        let r = next(), t = r % 97, d = "d\(r % 3)"
        switch r % 11 {
        case 0, 1, 2: lines.append(#"{"aps":{"alert":{"title":"T","body":"m\#(i) \u00e9"},"thread-id":"t\#(t)","badge":\#(r % 50)}}"#)
        case 3: lines.append(#"{"op":"push","device":"\#(d)","at":\#(i),"payload":{"aps":{"alert":"x","thread-id":"t\#(t)"}}}"#)
        case 4: lines.append(#"{"op":"clear","device":"\#(d)","path":"root.chat.t\#(t)"}"#)
        case 5: lines.append(#"{"aps":{"content-available":1},"type":"read","thread":"t\#(t)"}"#)
        case 6: lines.append(#"{"aps":{"content-available":1},"type":"unread","unread":\#(r % 9)}"#)
        case 7: lines.append(["", "not json", #"{"op":"nope"}"#, #"{"aps":{"badge":-1}}"#][r % 4])
        case 8: lines.append(#"{"op":"\#(["login", "logout", "foreground", "background", "tick"][r % 5])","device":"\#(d)","at":\#(i)}"#)
        case 9: lines.append(#"{"op":"\#(r % 2 == 0 ? "appear" : "disappear")","page":"home","device":"\#(d)"}"#)
        default: lines.append(#"{"promo":{"campaign":"c\#(r % 5)"},"aps":{"alert":"sale"}}"#)
        }
    }
    return lines
}

private func sequential(_ lines: [String], maxLineBytes: Int) -> [UInt8] {
    var session = FilterSession(rules: .builtIn)
    for line in lines {
        if line.utf8.count > maxLineBytes {
            session.feed(.overlong(line.utf8.count), maxLineBytes: maxLineBytes)
        } else {
            session.feed(line)
        }
    }
    return session.output.bytes
}

private func parallel(_ lines: [String], jobs: Int, batch: Int, maxLineBytes: Int) -> (bytes: [UInt8], filter: ParallelFilter) {
    let filter = ParallelFilter(
        stream: BadgeStream(rules: .builtIn), jobs: jobs, maxLineBytes: maxLineBytes,
        linesPerBatch: batch)
    var out: [UInt8] = []
    for line in lines {
        if line.utf8.count > maxLineBytes {
            filter.feed(.overlong(line.utf8.count)) { out += $0.bytes }
        } else {
            var line = line
            line.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { out += $0.bytes } }
        }
    }
    filter.finish { out += $0.bytes }
    return (out, filter)
}

@Suite struct ParallelFilterTests {
    @Test(arguments: [(1, 7), (2, 1), (2, 13), (2, 2048), (4, 64)])
    func outputIsByteIdenticalToTheSequentialLoop(_ jobs: Int, _ batch: Int) {
        var lines = mixedStream(6_000)
        lines[100] = String(repeating: "x", count: 3000)  // overlong for a 2000-byte limit
        let expected = sequential(lines, maxLineBytes: 2000)
        let (got, filter) = parallel(lines, jobs: jobs, batch: batch, maxLineBytes: 2000)
        #expect(got == expected)
        #expect(filter.seq == lines.count)
        #expect(String(decoding: got, as: UTF8.self).contains(#""code":"line-too-long""#))
    }

    @Test func theFinalStateIsTheSequentialState() throws {
        let lines = mixedStream(3_000)
        var session = FilterSession(rules: .builtIn)
        for line in lines { session.feed(line) }
        let (_, filter) = parallel(lines, jobs: 2, batch: 50, maxLineBytes: 1 << 20)
        #expect(try StateFile.text(filter.stream) == StateFile.text(session.stream))
        #expect(filter.stream.rejected == session.rejected)
    }

    @Test func nothingIsWrittenBeforeABatchIsApplied() {
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: 2, linesPerBatch: 10)
        var calls = 0
        var line = #"{"op":"tick"}"#
        for _ in 0..<9 { line.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { _ in calls += 1 } } }
        #expect(calls == 0)
        var lines = 0
        filter.finish { w in
            calls += 1; lines += w.bytes.filter { $0 == 0x0A }.count
        }
        #expect(lines == 9)
    }

    @Test func aBatchIsCutAtAMebibyteOfLinesBeforeItIsFull() {
        // 100 KB lines: the eleventh passes 1 MiB, so its batch is applied long before 2048 lines.
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: 1, linesPerBatch: 2048)
        let long = #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "p", count: 100_000) + #""}"#
        var written = 0
        for _ in 0..<11 {
            var line = long
            line.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { written += $0.bytes.filter { $0 == 0x0A }.count } }
        }
        #expect(written == 11)
        #expect(filter.seq == 11)
    }

    @Test func longLinesAndRecycledBatchesGiveTheSequentialOutput() {
        // Long lines cut batches by bytes, short ones by count; batches are reused throughout.
        var lines = mixedStream(3_000)
        let pad = String(repeating: "q", count: 60_000)
        for i in stride(from: 5, to: lines.count, by: 37) {
            lines[i] = #"{"aps":{"alert":"long","thread-id":"t\#(i % 7)"},"pad":"\#(pad)"}"#
        }
        let expected = sequential(lines, maxLineBytes: 1 << 20)
        for jobs in [1, 2] {
            let (got, filter) = parallel(lines, jobs: jobs, batch: 2048, maxLineBytes: 1 << 20)
            #expect(got == expected, "jobs \(jobs)")
            #expect(filter.seq == lines.count)
        }
    }

    @Test func anEmptyInputWritesNothing() {
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: 2)
        var bytes = 0
        filter.finish { bytes += $0.bytes.count }
        #expect(bytes == 0)
        #expect(filter.seq == 0)
    }

    /// `--resume --numbered`: lines whose N is at or below the committed seq get no result,
    /// wherever they stand; the others are applied as they come, and the checkpoint seq is
    /// the highest N applied.
    @Test(arguments: [1, 2])
    func skippingByNumberDropsEveryLineAtOrBelowIt(jobs: Int) {
        let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: jobs, linesPerBatch: 2, numbered: true)
        filter.skip(numbersThrough: 100)
        #expect(filter.resumeSeq == 100)
        var out: [UInt8] = []
        for n in [99, 100, 104, 50, 102, 101] {
            var line = "\(n)\t{\"op\":\"tick\"}"
            line.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { out += $0.bytes } }
        }
        filter.finish { out += $0.bytes }
        let seqs = String(decoding: out, as: UTF8.self).split(separator: "\n").map { $0.prefix(13) }
        #expect(seqs == [#"{"seq":104,"o"#, #"{"seq":102,"o"#, #"{"seq":101,"o"#])
        #expect(filter.lastNumber == 104 && filter.resumeSeq == 104)
    }
}

extension ParallelFilter {
    /// Feeds `lines` (each without its newline), finishes, and returns every result byte
    /// written.
    func results(of lines: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for var line in lines { line.withUTF8 { feed(.text(UnsafeRawBufferPointer($0))) { out += $0.bytes } } }
        finish { out += $0.bytes }
        return out
    }
}
