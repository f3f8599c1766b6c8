// The filter's two halves on one thread: LineAnalyzer (parse, validate, route) and
// BadgeStream (apply to the device's tree, write the result line). Each iteration does
// 1,000 lines (scalingFactor .kilo); the table shows figures per line, marked *.
import BadgeFlow
import Benchmark
import BenchmarkInputs

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = BenchmarkInputs.configuration

    analyze("LineAnalyzer.analyze mixed lines", BenchmarkInputs.mixedLines(1_000))
    // One kind at a time, so a change in mallocs per line points at one path through the code.
    analyze("LineAnalyzer.analyze chat push", [Array(BenchmarkInputs.chatPush(thread: 42, message: 1).utf8)])
    analyze("LineAnalyzer.analyze promotion", [Array(BenchmarkInputs.promotion(campaign: 3).utf8)])
    analyze("LineAnalyzer.analyze silent unread", [Array(BenchmarkInputs.silentUnread(4).utf8)])
    analyze("LineAnalyzer.analyze clear op", [Array(BenchmarkInputs.clearThread(42).utf8)])

    // The lines are analysed once in setup; the stream and the writer live across
    // iterations, as they do in `badgeflow filter`, and the writer is emptied, not freed.
    Benchmark("BadgeStream.apply + write mixed lines") { benchmark, s in
        for result in s.results {
            s.seq += 1
            s.stream.apply(result, seq: s.seq, into: &s.out)
        }
        blackHole(s.out.count)
        s.out.removeAll()
    } setup: {
        Applying(lines: BenchmarkInputs.mixedLines(1_000))
    }
}

/// Registers a benchmark that analyses `lines` in turn, 1,000 per iteration.
func analyze(_ name: String, _ lines: [[UInt8]]) {
    Benchmark(name) { benchmark, analyzer in
        var i = 0
        for _ in benchmark.scaledIterations {
            lines[i].withUnsafeBytes { blackHole(analyzer.analyze($0)) }
            i = i + 1 == lines.count ? 0 : i + 1
        }
    } setup: {
        LineAnalyzer(rules: .builtIn)
    }
}

/// A stream, its output buffer and the analysed lines it applies.
///
/// A class so the closure mutates the one stream and writer in place.
final class Applying {
    var stream = BadgeStream(rules: .builtIn)
    var out = JSONWriter(capacity: 1 << 20)
    let results: [LineResult]
    var seq = 0

    init(lines: [[UInt8]]) {
        let analyzer = LineAnalyzer(rules: .builtIn)
        results = lines.map { line in line.withUnsafeBytes { analyzer.analyze($0) } }
    }
}
