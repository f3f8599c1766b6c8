/// What a filter run has done so far, as counters and gauges: the content of
/// `badgeflow filter --metrics FILE`.
///
/// The result counters (``results``, ``errors``, ``decrements``, ``badgeUpdates``,
/// ``duplicates``) are counted from the result values the stream hands back
/// (``count(_:)``; ``ParallelFilter/metrics`` does it for each line it applies), never by
/// reading the result lines again. The others are filled in by whoever runs the filter:
/// lines read, and for a state its checkpoints, accounts and committed seq.
/// ``prometheusText`` renders them in Prometheus's text exposition format, always the same
/// families in the same order (errors by code in byte order of code).
///
/// ```swift
/// var metrics = FilterMetrics()
/// var stream = BadgeStream(rules: .builtIn)
/// let analyzer = LineAnalyzer(rules: .builtIn)
/// if let result = stream.apply(analyzer.analyze(#"{"op":"clear"}"#), seq: 1) { metrics.count(result) }
/// print(metrics.errors)   // ["missing-field": 1]
/// ```
public struct FilterMetrics: Sendable, Equatable {
    /// Input lines read (blank lines and lines skipped by `--resume` included).
    public var linesRead = 0
    /// Result lines written (one per non-blank line read and not skipped).
    public var results = 0
    /// Error lines by their code (`invalid-json`, `missing-field`, …).
    public var errors: [String: Int] = [:]
    /// Results with a `decrement` (one per account in a fleet-wide `expire` line).
    public var decrements = 0
    /// The sum of those decrements' `by`: how far icon numbers dropped.
    public var decrementTotal = 0
    /// Entries of `badgeUpdates`: badge-only pushes owed to devices.
    public var badgeUpdates = 0
    /// Results of duplicate events (`"duplicate":true`).
    public var duplicates = 0
    /// Checkpoints begun (a state with checkpoints).
    public var checkpoints = 0
    /// The longest pause of the applying thread for a checkpoint or an eviction, in seconds.
    public var longestCheckpointPause = 0.0
    /// All those pauses added up, in seconds.
    public var checkpointPauses = 0.0
    /// Accounts in memory (expanded or compact).
    public var accountsInMemory = 0
    /// Accounts the state holds as of its last finished commit or save (0 without a state).
    public var accountsStored = 0
    /// The seq of the state's last finished commit (a format with checkpoints: the last checkpoint
    /// whose commit was waited for; 0 without one).
    public var committedSeq = 0

    /// All zero.
    public init() {}

    /// The number of error lines, whatever their code.
    public var errorTotal: Int { errors.values.reduce(0, +) }

    /// Counts one result: a result line, and its error code, decrements, badge updates and
    /// whether it was a duplicate.
    public mutating func count(_ result: borrowing StreamResult) {
        switch result.body {
        case .rejected(let d): countRejected(d)
        case .applied(let a): countApplied(a.effects)
        }
    }

    /// Counts a rejected line's result.
    mutating func countRejected(_ diagnostic: borrowing Diagnostic) {
        results += 1
        errors[diagnostic.code.rawValue, default: 0] += 1
    }

    /// Counts an applied event's result from what applying it did: its decrement, badge
    /// updates (those of a fleet-wide `expire`'s accounts too) and whether it was a duplicate.
    mutating func countApplied(_ effects: borrowing StreamResult.Effects) {
        results += 1
        if effects.duplicate { duplicates += 1 }
        if let d = effects.outcome.decrement {
            decrements += 1
            decrementTotal += d.by
        }
        badgeUpdates += effects.badgeUpdates.count
        if let fleet = effects.fleet {
            for entry in fleet {
                if let d = entry.outcome.decrement {
                    decrements += 1
                    decrementTotal += d.by
                }
                badgeUpdates += entry.badgeUpdates.count
            }
        }
    }

    /// Counts `n` badge updates not counted by ``countApplied(_:)`` (a fleet-wide
    /// `reconcile` written as the store was walked).
    mutating func countBadgeUpdates(_ n: Int) { badgeUpdates += n }

    /// The metric names, in the order ``prometheusText`` writes them.
    public static let names = [
        "badgeflow_lines_read_total", "badgeflow_results_total", "badgeflow_errors_total", "badgeflow_decrements_total",
        "badgeflow_decrement_by_total", "badgeflow_badge_updates_total", "badgeflow_duplicates_total",
        "badgeflow_checkpoints_total", "badgeflow_checkpoint_pause_seconds_total", "badgeflow_checkpoint_longest_pause_seconds",
        "badgeflow_accounts_in_memory", "badgeflow_accounts_stored", "badgeflow_committed_seq",
    ]

    /// The metrics in Prometheus's text exposition format (``PrometheusText``): counters
    /// named `…_total`, gauges without; errors as one sample per code, labelled `code`.
    public var prometheusText: PrometheusText {
        var t = PrometheusText()
        t.family(
            "badgeflow_lines_read_total", help: "Input lines read (blank lines and lines skipped by --resume included).",
            type: .counter, samples: [.init(value: linesRead)])
        t.family(
            "badgeflow_results_total", help: "Result lines written, error lines included.", type: .counter,
            samples: [.init(value: results)])
        t.family(
            "badgeflow_errors_total", help: "Error lines written, by error code.", type: .counter,
            samples: errors.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                .init(labels: [("code", $0.key)], value: $0.value)
            })
        t.family(
            "badgeflow_decrements_total",
            help: "Results with a decrement (each account of a fleet-wide expire line counts).", type: .counter,
            samples: [.init(value: decrements)])
        t.family(
            "badgeflow_decrement_by_total", help: "The sum of the decrements' by: how far icon numbers dropped.",
            type: .counter, samples: [.init(value: decrementTotal)])
        t.family(
            "badgeflow_badge_updates_total", help: "badgeUpdates entries: badge-only pushes owed to devices.",
            type: .counter, samples: [.init(value: badgeUpdates)])
        t.family(
            "badgeflow_duplicates_total", help: "Results of duplicate events (an id the account already applied).",
            type: .counter, samples: [.init(value: duplicates)])
        t.family(
            "badgeflow_checkpoints_total", help: "Checkpoints of an SQLite state begun.", type: .counter,
            samples: [.init(value: checkpoints)])
        t.family(
            "badgeflow_checkpoint_pause_seconds_total",
            help: "Time the applying thread paused for checkpoints and evictions, in seconds.", type: .counter,
            samples: [.init(value: checkpointPauses)])
        t.family(
            "badgeflow_checkpoint_longest_pause_seconds",
            help: "The longest pause of the applying thread for a checkpoint or an eviction, in seconds.", type: .gauge,
            samples: [.init(value: longestCheckpointPause)])
        t.family(
            "badgeflow_accounts_in_memory", help: "Accounts in memory (expanded or compact).", type: .gauge,
            samples: [.init(value: accountsInMemory)])
        t.family(
            "badgeflow_accounts_stored", help: "Accounts the state holds as last committed or saved (0 without a state).",
            type: .gauge, samples: [.init(value: accountsStored)])
        t.family(
            "badgeflow_committed_seq",
            help: "The seq of the last committed checkpoint (0 without \(StateFormat.titlesWithArticle(StateFormat.checkpointing)) state).",
            type: .gauge, samples: [.init(value: committedSeq)])
        return t
    }
}

/// What counts the results of ``BadgeStream/apply(_:seq:into:counting:)`` (`--metrics`:
/// ``FilterMetrics``); a plain run counts nothing (``NotCounted``, specialised away).
protocol ResultCounter {
    /// Counts a rejected line's result.
    mutating func countRejected(_ diagnostic: borrowing Diagnostic)
    /// Counts an applied event's result.
    mutating func countApplied(_ effects: borrowing StreamResult.Effects)
    /// Counts `n` badge updates of a result written as it was worked out (a fleet-wide
    /// `reconcile` over a store), not counted by ``countApplied(_:)``.
    mutating func countBadgeUpdates(_ n: Int)
}

extension FilterMetrics: ResultCounter {}

/// Counts nothing: the plain run's ``ResultCounter``.
///
/// It holds one byte it never reads: an empty value has no storage, and a ThreadSanitizer
/// build instruments each `inout` access to it at an address it does not have (two
/// filters on two threads were reported as racing on it, or the access crashed). A
/// release build specialises the counting away, byte and all.
struct NotCounted: ResultCounter {
    private var storage: UInt8 = 0
    init() {}
    func countRejected(_ diagnostic: borrowing Diagnostic) {}
    func countApplied(_ effects: borrowing StreamResult.Effects) {}
    func countBadgeUpdates(_ n: Int) {}
}
