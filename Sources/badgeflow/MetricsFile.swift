#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BadgeFlow

/// `filter --metrics FILE`: the run's ``FilterMetrics`` in Prometheus's text format, replaced
/// atomically (``FileIO/writeAtomically(_:to:synced:)``: a temporary file in the same folder,
/// then a rename; not fsynced, so a write does not pause the filter for the disk) at the
/// start, at least every `period` seconds while the filter runs, idle or not, and at the end.
///
/// The first write is made before any line is read, so an unwritable FILE is found at once
/// (`filter` exits 4). A later write that fails is reported once on stderr and tried again
/// at the next period: metrics never stop the stream. The last one's failure makes the exit
/// status 4.
final class MetricsFile {
    let path: String
    let period: Double
    /// When the file was last written (monotonic seconds), or attempted.
    private var lastWrite = -Double.infinity
    /// Set while writes fail, so a failure is reported once, not every period.
    private var failing = false

    init(path: String, period: Double) {
        self.path = path
        self.period = period
    }

    /// Writes `metrics` now.
    ///
    /// - Throws: `FileIO.Failure` when the file cannot be written; it keeps its content.
    func write(_ metrics: FilterMetrics, now: Double) throws(FileIO.Failure) {
        lastWrite = now
        try FileIO.writeAtomically(metrics.prometheusText.bytes, to: path, synced: false)
        failing = false
    }

    /// Writes the metrics `gather` makes when a period has passed since the last write.
    func writeIfDue(now: Double, _ gather: () -> FilterMetrics) {
        guard now - lastWrite >= period else { return }
        do { try write(gather(), now: now) } catch {
            if !failing {
                failing = true
                Console.error("badgeflow: warning: --metrics: cannot write \(error.description); trying again every \(period) s")
            }
        }
    }

    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Milliseconds until the next write is due (for the input's idle wait), at least 1.
    func millisecondsUntilDue(now: Double) -> Int32 {
        let wait = period - (now - lastWrite)
        return Int32(max(1, min(wait * 1000 + 1, 60_000)))
    }
}
