import BadgeFlow

/// The filter's progress bar on stderr: input bytes read of the total, lines/s and ETA.
///
/// `FilterRun`'s line loop counts lines down from `FilterRun.progressLines` and calls
/// `check(lines:)` at zero and at each new file; only then is the clock read (and the current file's offset, at a redraw),
/// and the bar is redrawn at most every 100 ms. So the hot path pays one decrement and one
/// compare a line, and no system call.
final class Progress: FilterProgress {
    /// Seconds between two redraws.
    static let interval = 0.1

    private let total: Int
    private let start: Double
    private var lastDraw = -Double.infinity
    /// Input bytes of the files already read to their end.
    private var finishedBytes = 0
    /// The file being read (its offset is how far it is read), or -1.
    private var fd: Int32 = -1
    private var drawn = false

    /// A bar over `total` bytes of input.
    init(totalBytes: Int) {
        total = max(totalBytes, 0)
        start = Progress.now()
    }

    /// Seconds on the monotonic clock.
    static func now() -> Double {
        System.monotonicClock()
    }

    /// The sum of the sizes of the regular files among `paths` (`-`: stdin when it is one).
    static func totalBytes(of paths: [String]) -> Int {
        var sum = 0
        for p in paths {
            if let size = System.regularFileSize(p) { sum += size }
        }
        return sum
    }

    /// A file starts: `fd` is read from now on; `lines` were read before it.
    func begin(fd: Int32, lines: Int) {
        self.fd = fd
        check(lines: lines)
    }

    /// The current file is read as far as it will be.
    func end() {
        finishedBytes += offset()
        fd = -1
    }

    /// Bytes read from the current file so far.
    func offset() -> Int {
        guard fd >= 0 else { return 0 }
        let o = System.currentOffset(fd)
        return o < 0 ? 0 : o
    }

    /// Looks at the clock (`lines` read so far); redraws when the last drawing is
    /// `interval` old.
    func check(lines: Int) {
        let t = Progress.now()
        guard t - lastDraw >= Progress.interval else { return }
        lastDraw = t
        draw(at: t, lines: lines)
    }

    private func draw(at t: Double, lines: Int) {
        let done = finishedBytes + offset()
        let elapsed = max(t - start, 1e-3)
        let width = 24
        let fraction = total > 0 ? min(Double(done) / Double(total), 1) : 0
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let rate = Double(lines) / elapsed
        var eta = "--:--"
        if done > 0 && total > done {
            eta = Progress.clock((Double(total - done) / Double(done)) * elapsed)
        } else if total > 0 && done >= total {
            eta = "0:00"
        }
        let percent = Int(fraction * 100)
        let text =
            "\r[\(bar)] \(percent)%  \(Progress.size(done)) / \(Progress.size(total))  \(Progress.count(Int(rate))) lines/s  ETA \(eta)\u{1B}[K"
        Console.write(Array(text.utf8), to: 2)
        drawn = true
    }

    /// Removes the bar (the cursor goes back to the start of an empty line).
    func clear() {
        if drawn { Console.write(Array("\r\u{1B}[K".utf8), to: 2) }
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 3600 { return "\(s / 3600):" + two(s / 60 % 60) + ":" + two(s % 60) }
        return "\(s / 60):" + two(s % 60)
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    static func size(_ bytes: Int) -> String {
        let b = Double(bytes)
        if b >= 1_073_741_824 { return tenths(b / Double(1 << 30)) + " GiB" }
        if b >= 1_048_576 { return tenths(b / Double(1 << 20)) + " MiB" }
        if b >= 1024 { return tenths(b / Double(1 << 10)) + " KiB" }
        return "\(bytes) B"
    }

    private static func tenths(_ v: Double) -> String {
        let t = Int((v * 10).rounded())
        return "\(t / 10).\(t % 10)"
    }

    static func count(_ n: Int) -> String {
        var s = String(n)
        var i = s.count - 3
        while i > 0 {
            s.insert(",", at: s.index(s.startIndex, offsetBy: i))
            i -= 3
        }
        return s
    }
}
