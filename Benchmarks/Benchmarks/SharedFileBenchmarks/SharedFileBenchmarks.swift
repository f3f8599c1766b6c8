// What one change through the shared file costs (the Notification Service Extension adding
// a push's increment under the lock) with 200, 2,000 and 20,000 chats in the file. Each
// iteration is one `withSharedFile` call in a process that has changed the file before (an
// extension or app that stays alive between pushes).
//
// The suite uses only API that BadgeCenter has had from the start, so the same file measures
// the whole-file rewrite it replaced. `scripts/shared_file_bench.sh` measures both builds
// side by side without the benchmark package (release, p50/p99 per change); issue 44's
// figures came from it, on the 2-core machine under a load average near 30 (other builds):
//   whole-file rewrite (a3b8162): 200 chats p50 12.1 ms p99 47.8 ms; 2,000: 252 / 602 ms;
//     20,000: 2,468 / 4,901 ms
//   journal (this suite's withSharedFile, warm process): 200 chats p50 0.023 ms p99 0.24 ms;
//     2,000: 0.025 / 0.16 ms; 20,000: 0.081 / 32 ms (300 samples: p99 is the third slowest)
//   the first change of a new process reads the whole file: p50 6.8 / 117 / 452 ms.
import BadgeFlow
import Benchmark
import BenchmarkInputs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = BenchmarkInputs.configuration

    for chats in [200, 2_000, 20_000] {
        Benchmark("withSharedFile increment at \(chats) chats") { benchmark, file in
            for i in benchmark.scaledIterations {
                blackHole(
                    try BadgeCenter.withSharedFile(file.path) { center in
                        try center.increment("root.chat.c\(i % chats)")
                        return center.total
                    })
            }
        } setup: {
            try SharedFile(chats: chats)
        }
    }
}

/// A shared file holding `chats` chats with one unread each, in a directory of its own.
final class SharedFile: Sendable {
    let path: String

    init(chats: Int) throws {
        var template = Array("/tmp/badgetree-bench-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { b in mkdtemp(b.baseAddress).map { String(cString: $0) } }
        path = (dir ?? "/tmp") + "/badges.dat"
        try BadgeCenter.withSharedFile(path) { center in
            for i in 0..<chats { try center.increment("root.chat.c\(i)") }
        }
    }
}
