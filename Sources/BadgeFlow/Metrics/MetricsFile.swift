/// `filter --metrics FILE`: the run's ``FilterMetrics`` in Prometheus's text format, replaced
/// atomically (``FileIO/writeAtomically(_:to:synced:)``: a temporary file in the same folder,
/// then a rename; not fsynced, so a write does not pause the filter for the disk) at the
/// start, at least every `period` seconds while the filter runs, idle or not, and at the end
/// (``FilterRun`` decides when).
///
/// The first write is made before any line is read, so an unwritable FILE is found at once
/// (`filter` exits 4). A later write that fails is reported once (`warning`) and tried again
/// at the next period: metrics never stop the stream. The last one's failure makes the exit
/// status 4.
package final class MetricsFile {
    /// The file.
    package let path: String
    /// Seconds between two writes while the filter runs (`--checkpoint`).
    package let period: Double
    /// When the file was last written, or attempted (on the run's clock).
    private var lastWrite = -Double.infinity
    /// Set while writes fail, so a failure is reported once, not every period.
    private var failing = false
    private let warning: (String) -> Void

    /// Metrics written to `path` every `period` seconds; `warning` receives the line for
    /// stderr when a periodic write starts failing.
    package init(path: String, period: Double, warning: @escaping (String) -> Void) {
        self.path = path
        self.period = period
        self.warning = warning
    }

    /// Writes `metrics` now (`now`: the run's clock, in seconds).
    ///
    /// - Throws: `FileIO.Failure` when the file cannot be written; it keeps its content.
    package func write(_ metrics: FilterMetrics, now: Double) throws(FileIO.Failure) {
        lastWrite = now
        try FileIO.writeAtomically(metrics.prometheusText.bytes, to: path, synced: false)
        failing = false
    }

    /// Writes the metrics `gather` makes when a period has passed since the last write, or
    /// with `force`.
    package func writeIfDue(now: Double, force: Bool = false, _ gather: () -> FilterMetrics) {
        guard force || now - lastWrite >= period else { return }
        do { try write(gather(), now: now) } catch {
            if !failing {
                failing = true
                warning("badgeflow: warning: --metrics: cannot write \(error.description); trying again every \(period) s")
            }
        }
    }

    /// Milliseconds until the next write is due (for the input's idle wait), at least 1.
    package func millisecondsUntilDue(now: Double) -> Int32 {
        let wait = period - (now - lastWrite)
        return Int32(max(1, min(wait * 1000 + 1, 60_000)))
    }
}
