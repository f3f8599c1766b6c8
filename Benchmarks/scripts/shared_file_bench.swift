// One change through the shared file (an extension's increment under the lock), timed per
// call, at 200, 2,000 and 20,000 chats. Compiled together with BadgeTree's sources by
// shared_file_bench.sh (one module, release), so the same file measures any checkout.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

let label = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "build"
let dir = CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : "/tmp"
for chats in [200, 2_000, 20_000] {
    let path = "\(dir)/bench-\(chats).dat"
    unlink(path)
    try BadgeCenter.withSharedFile(path) { center in
        for i in 0..<chats { try center.increment("root.chat.c\(i)") }
    }
    // Warm: a process that changed the file before (an extension between pushes).
    let n = chats >= 20_000 ? 300 : 1_000
    var times: [Double] = []
    for i in 0..<n {
        let t0 = now()
        _ = try BadgeCenter.withSharedFile(path) { center in
            try center.increment("root.chat.c\((i * 7) % chats)")
            return center.total
        }
        times.append(now() - t0)
    }
    times.sort()
    // Cold: the first change of a new process (a path this process has not read).
    var cold: [Double] = []
    for k in 0..<20 {
        let other = "\(dir)/" + String(repeating: "./", count: k + 1) + "bench-\(chats).dat"
        let t0 = now()
        try BadgeCenter.withSharedFile(other) { center in try center.increment("root.chat.c1") }
        cold.append(now() - t0)
    }
    cold.sort()
    var info = stat()
    stat(path, &info)
    print(
        "\(label) chats=\(chats) n=\(n) p50=\(String(format3(percentile(times, 0.5) * 1000)))ms p99=\(format3(percentile(times, 0.99) * 1000))ms"
            + " cold-p50=\(format3(percentile(cold, 0.5) * 1000))ms file=\(info.st_size)B")
    unlink(path)
}

func format3(_ x: Double) -> String {
    let scaled = (x * 1000).rounded() / 1000
    return "\(scaled)"
}
