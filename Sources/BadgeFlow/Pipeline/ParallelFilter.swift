/// The filter's line loop over several threads, with results in strict input order.
///
/// Reading a line into an `Event` (parse, validate, route) depends only on the line and the
/// rules, so worker threads do it for batches of lines; the calling thread applies the
/// events to the devices and writes the result lines, batch after batch, in input order.
/// At most `2 × jobs + 2` batches (of at most `linesPerBatch` lines or 1 MiB) are in flight,
/// and applied batches are reused, so memory stays flat however long the stream is, and a
/// slow consumer holds the reader back (back-pressure). Worker threads start only once a
/// second batch is needed, so a small input runs on one thread. A filter made with
/// ``init(stream:jobs:maxLineBytes:linesPerBatch:stamp:numbered:)`` owns its threads and
/// joins them when it goes; `badgeflow filter`'s run owns them instead, and joins them
/// with everything else it closes.
///
/// The output is byte-identical to `FilterSession` on the same lines, whatever `jobs` is.
///
/// With `numbered`, every line is `N<TAB>JSON` (`LineNumber`) and its result's `seq` is N;
/// the prefix is read on the calling thread, in place, before the line is copied into its
/// batch. A non-blank line without a valid prefix gets an `invalid-line-number` error whose
/// `seq` is the line's physical number (its position in the input, blank lines counted).
public final class ParallelFilter {
    /// The devices and their state.
    public private(set) var stream: BadgeStream
    /// Lines seen so far (blank lines counted): the last `seq`, unless `numbered`.
    public private(set) var seq = 0
    /// Worker threads used when the input is large enough.
    public let jobs: Int
    /// The longest line kept (with `numbered`: not counting the `N<TAB>` prefix).
    public let maxLineBytes: Int
    /// Whether lines carry their number (`N<TAB>JSON`, `badgeflow filter --numbered`).
    public let numbered: Bool

    private let linesPerBatch: Int
    /// The analysing threads and their queue.
    private let scans: ScanPool
    /// Whether ``scans`` is this filter's own (closed in `deinit`) or its pipeline's.
    private let ownsScans: Bool
    private var inFlight: [Batch] = []
    private var current: Batch
    private var workersStarted = false
    /// Whether batches go to the pool's threads: set with the second batch, false when the
    /// system gave none (every batch is then analysed on this thread).
    private var threaded = false
    /// Applied batches, kept with their buffers for reuse (this thread only). At most as
    /// many as were ever in flight, so memory reaches its steady state within the first few
    /// batches and no batch-sized buffer goes back to the allocator from another thread.
    private var spare: [Batch] = []
    private let inline: LineAnalyzer
    /// Result bytes of the batch being applied; reused, so no batch allocates its own.
    private var out = JSONWriter(capacity: 1 << 20)
    /// Reads the stored accounts a batch needs while the batches before it are applied (a
    /// database state's reader threads); only with worker threads, which analyse batches ahead.
    public var prefetcher: (any AccountPrefetcher)? {
        didSet {
            stream.table.recordsEvictions = prefetcher != nil
            stream.table.deferredRelease = prefetcher is any PartedAccountPrefetcher
            if !stream.table.deferredRelease { _ = stream.table.takeReleased() }
        }
    }
    /// Where the stream's accounts are when it does not hold them (a database state): each
    /// batch's accounts not in memory or read ahead are loaded from it, on this thread,
    /// before the batch is applied, and it is read for each fleet-wide line just before that
    /// line (``AccountLoader``). Setting it makes the stream store-backed
    /// (``BadgeStream/isStoreBacked``), which setting nil later does not undo; the stream
    /// itself reads nothing.
    public var source: (any AccountSource)? {
        get { loader?.source }
        set {
            loader = newValue.map(AccountLoader.init)
            if newValue != nil { stream.isStoreBacked = true }
        }
    }
    private var loader: AccountLoader?
    /// The batches whose accounts were asked of the prefetcher and not yet installed, oldest
    /// first: always the first batches of `inFlight`, in order (a batch that needed no read
    /// has an entry too, with no request behind it).
    private var requested: [ReadAhead] = []
    /// A batch's read-ahead: whether a request went to the prefetcher, and the eviction mark
    /// when it did (``AccountTable/evictionMark``).
    private struct ReadAhead {
        let batch: Batch
        let asked: Bool
        let evictionMark: Int
    }
    /// The ids of the request being made, by hash (``readAhead(_:before:)``); kept for its buckets.
    private var requestIndex = IDIndex()
    /// Set by ``stop()``: batches are no longer applied.
    private var stopped = false
    /// With a value, every result applied is counted into it (``FilterMetrics/count(_:)``);
    /// nil (the default): nothing is counted, and the line loop does not look at the results.
    public var metrics: FilterMetrics?

    /// Whether the batch last applied can be taken back (``undoLastBatch()``).
    package var keepsUndo: Bool {
        get { stream.keepsUndo }
        set { stream.keepsUndo = newValue }
    }

    /// Takes back the batch last applied (with ``keepsUndo``): called from `output` when its
    /// results could not be written.
    package func undoLastBatch() { stream.undoBatch() }

    /// Applies no further batch (the output is closed: their results could not be written).
    package func stop() { stopped = true }

    /// Creates a filter over `stream` with `jobs` worker threads (1: everything on the caller's thread);
    /// with `stamp`, push results carry the stamped payload (`--stamp`).
    ///
    /// With `numbered`, give the `LineReader` a limit of `maxLineBytes + LineNumber.maxPrefixBytes`,
    /// so that a line is overlong exactly when its text after the prefix is.
    public convenience init(
        stream: BadgeStream, jobs: Int, maxLineBytes: Int = 1 << 20, linesPerBatch: Int = 2048,
        stamp: Bool = false, numbered: Bool = false
    ) {
        self.init(
            stream: stream, scans: ScanPool(jobs: jobs), ownsScans: true, maxLineBytes: maxLineBytes, linesPerBatch: linesPerBatch,
            stamp: stamp, numbered: numbered)
    }

    /// Creates a filter over `stream` whose batches are analysed by `scans` (the pipeline's,
    /// which closes it after the last batch: ``ScanPool/close()``).
    package convenience init(
        stream: BadgeStream, scans: ScanPool, maxLineBytes: Int = 1 << 20, linesPerBatch: Int = 2048,
        stamp: Bool = false, numbered: Bool = false
    ) {
        self.init(
            stream: stream, scans: scans, ownsScans: false, maxLineBytes: maxLineBytes, linesPerBatch: linesPerBatch, stamp: stamp,
            numbered: numbered)
    }

    private init(
        stream: BadgeStream, scans: ScanPool, ownsScans: Bool, maxLineBytes: Int, linesPerBatch: Int, stamp: Bool, numbered: Bool
    ) {
        self.stream = stream
        self.scans = scans
        self.ownsScans = ownsScans
        jobs = scans.jobs
        self.maxLineBytes = maxLineBytes
        self.numbered = numbered
        self.linesPerBatch = linesPerBatch
        current = Batch(capacity: linesPerBatch)
        inline = LineAnalyzer(rules: stream.rules, stamp: stamp)
    }

    deinit {
        if ownsScans { scans.close() }
    }

    /// With `numbered`: the largest N of a line applied so far (or skipped by
    /// ``skip(numbersThrough:)``); 0 before any. What a checkpoint records as its seq.
    public private(set) var lastNumber = 0
    /// With `numbered`: lines whose N is at or below it are skipped (``skip(numbersThrough:)``).
    private var skipThrough = 0

    /// The seq of the last result written: the last N with `numbered` (``lastNumber``),
    /// else the lines seen (``seq``). What a checkpoint records and `--resume` goes on from.
    public var resumeSeq: Int { numbered ? lastNumber : seq }

    /// With `numbered` (`--resume`): a line whose N is at or below `n` gets no result,
    /// wherever it stands in the input; every other line is applied as it comes.
    public func skip(numbersThrough n: Int) {
        skipThrough = n
        lastNumber = max(lastNumber, n)
    }

    /// Counts `n` lines as already seen without reading them (`--resume`): the next line
    /// fed is line `seq + n + 1`. Call before feeding any line.
    public func skip(lines n: Int) { seq += n }

    /// Gives `body` the stream to work on between batches (a checkpoint, an eviction).
    public func withStream<R>(_ body: (inout BadgeStream) throws -> R) rethrows -> R {
        try body(&stream)
    }

    /// Takes one line from a `LineReader`. Results are produced in order through `output`.
    ///
    /// - Parameters:
    ///   - line: the line, or the length of an overlong one.
    ///   - output: receives the result bytes of each applied batch, in input order.
    public func feed(_ line: LineReader.Line, output: (inout JSONWriter) -> Void) {
        if numbered { appendNumbered(line, overlongHead: []) } else { current.append(line) }
        if current.count >= linesPerBatch || current.byteCount >= Batch.maxBytes { submit(output: output) }
    }

    /// Takes one line from `reader`, which has just handed it out: for an overlong numbered
    /// line, its number is read from `reader.overlongHead`.
    public func feed(_ line: LineReader.Line, from reader: LineReader, output: (inout JSONWriter) -> Void) {
        guard numbered, case .overlong = line else { return feed(line, output: output) }
        appendNumbered(line, overlongHead: reader.overlongHead)
        if current.count >= linesPerBatch || current.byteCount >= Batch.maxBytes { submit(output: output) }
    }

    private func appendNumbered(_ line: LineReader.Line, overlongHead: [UInt8]) {
        switch line {
        case .text(let bytes):
            if let (n, rest) = LineNumber.split(bytes) {
                if n <= skipThrough {
                    // Answered before the checkpoint: as a blank line, it counts and writes nothing.
                    current.append(.empty, number: 0)
                } else if rest.count > maxLineBytes {
                    current.append(.overlong(rest.count), number: n)
                } else {
                    current.append(.text(rest), number: n)
                }
            } else {
                // Blank: nothing is written. Otherwise the error takes the physical number.
                current.append(
                    .empty,
                    number: LineNumber.isBlank(bytes) ? 0 : Batch.invalidNumber)
            }
        case .overlong(let count):
            let prefix = LineNumber.split(head: overlongHead)
            if let (n, _) = prefix, n <= skipThrough {
                current.append(.empty, number: 0)
            } else if let (n, prefixBytes) = prefix {
                current.append(.overlong(count - prefixBytes), number: n)
            } else {
                current.append(.overlong(count), number: 0)
            }
        }
    }

    /// Processes every line fed so far and writes the results.
    public func finish(output: (inout JSONWriter) -> Void) {
        if current.count > 0 { submit(output: output) }
        while !inFlight.isEmpty { applyOldest(output: output) }
    }

    private func submit(output: (inout JSONWriter) -> Void) {
        let batch = current
        current = spare.popLast() ?? Batch(capacity: linesPerBatch)
        if !workersStarted && jobs > 1 {
            workersStarted = true
            threaded = scans.start(rules: stream.rules, maxLineBytes: maxLineBytes, stamp: inline.stamp)
        }
        // A closed pool (the pipeline ended) takes no batch: it would wait for ever. Its
        // threads analysed every batch queued before they ended; those go out first.
        batch.collectsAccountIDs = prefetcher != nil || loader != nil
        if !threaded || scans.isClosed {
            while !inFlight.isEmpty { applyOldest(output: output) }
            batch.analyze(with: inline, maxLineBytes: maxLineBytes)
            apply(batch, output: output)
            return
        }
        inFlight.append(batch)
        scans.queue.put(batch)
        while inFlight.count > 2 * jobs + 2 { applyOldest(output: output) }
        // Apply whatever is already done without waiting, to keep output flowing; with a
        // prefetcher, keep back the batches whose accounts are read while this one is applied
        // (``PartedAccountPrefetcher/requestsAhead``, else one), and one more, whose analysis
        // the next request needs. With none more, 40% of batches found the next one's
        // analysis not done and the readers idled while the applying thread waited for it
        // (fleet bench: 0.73-0.80 s of waits in a 13 s run; with one more, 4-11 ms).
        let lookahead = prefetcher.map { Self.requestsAhead($0) + 1 } ?? 0
        while inFlight.count > lookahead, let first = inFlight.first, scans.queue.isDone(first) {
            inFlight.removeFirst()
            apply(first, output: output)
        }
    }

    private func applyOldest(output: (inout JSONWriter) -> Void) {
        let batch = inFlight.removeFirst()
        scans.queue.waitDone(batch)
        apply(batch, output: output)
    }

    private func apply(_ batch: Batch, output: (inout JSONWriter) -> Void) {
        if stopped {
            batch.recycle()
            spare.append(batch)
            return
        }
        if let prefetcher {
            readAhead(prefetcher, before: batch)
        } else if loader != nil {
            stream.clearProvided()
        }
        // The batch's accounts neither in memory nor read ahead, loaded here: the stream
        // reads no store.
        if let loader { loader.load(batch.accountIDs, hashes: batch.accountHashes, into: &stream) }
        // A fleet-wide line reads the store just before it is applied.
        let scanning = batch.hasFleetLines ? loader : nil
        if stream.keepsUndo { stream.beginBatch() }
        // Work on locals: touching the class's stored properties once per line would cost a
        // dynamic exclusivity check each time. Swapping moves them without copying a tree.
        var local = BadgeStream(rules: stream.rules)
        swap(&local, &stream)
        var w = JSONWriter(capacity: 0)
        swap(&w, &out)
        w.removeAll()
        var n = seq
        var last = lastNumber
        if var counts = metrics {
            // Counted as they are written, from what applying each did (no result values).
            metrics = nil
            batch.takeEachResult { result, number, hash in
                n += 1
                if number > last { last = number }
                if let scanning { Self.scan(result, with: scanning, for: &local) }
                local.apply(result, seq: number > 0 ? number : n, accountHash: hash, into: &w, counting: &counts)
            }
            metrics = counts
        } else {
            batch.takeEachResult { result, number, hash in
                n += 1
                if number > last { last = number }
                if let scanning { Self.scan(result, with: scanning, for: &local) }
                local.apply(result, seq: number > 0 ? number : n, accountHash: hash, into: &w)
            }
        }
        seq = n
        lastNumber = last
        swap(&local, &stream)
        output(&w)
        // A buffer grown for one huge line (a fleet-wide reconcile: ~100 bytes an account
        // listed) is let go once written, not kept for lines of a few hundred bytes: its
        // pages would stay resident beside the checkpoint that commits the line.
        if w.capacity > 16 << 20 { w = JSONWriter(capacity: 1 << 20) }
        swap(&w, &out)
        batch.recycle()
        spare.append(batch)
    }
}

extension ParallelFilter {
    /// Reads the store for `result` when it is a fleet-wide line that needs it
    /// (``BadgeStream/needsStoreScan(_:)``), just before it is applied to `stream`.
    private static func scan(_ result: borrowing LineResult, with loader: AccountLoader, for stream: inout BadgeStream) {
        switch result {
        case .event(let event):
            if stream.needsStoreScan(event) { loader.scan(event, for: &stream, values: false) }
        case .blank, .rejected:
            return
        }
    }

    /// How many requests `prefetcher` may have outstanding.
    private static func requestsAhead(_ prefetcher: any AccountPrefetcher) -> Int {
        max(1, (prefetcher as? any PartedAccountPrefetcher)?.requestsAhead ?? 1)
    }

    /// Installs the accounts read ahead for `batch`, if it had a request, and asks for those
    /// of the batches after it (once analysed), up to the prefetcher's ``requestsAhead(_:)``:
    /// reading them overlaps applying `batch`, and a reader that ends one request goes on
    /// with the next.
    private func readAhead(_ prefetcher: any AccountPrefetcher, before batch: Batch) {
        let parted = prefetcher as? any PartedAccountPrefetcher
        // Requests for batches before this one (none when every batch is applied through
        // here, in order) are collected and dropped: nothing read for another batch is used.
        while let r = requested.first, r.batch !== batch, !inFlight.contains(where: { $0 === r.batch }) {
            requested.removeFirst()
            if r.asked { _ = parted?.collectParts() ?? [ReadAccounts(prefetcher.collect())] }
        }
        // The readers' parts as they are (merging them would hash half the ids again), moved
        // in: a copy left here would make taking each account out of them copy the parts.
        var parts: [ReadAccounts] = []
        var mark = stream.table.evictionMark
        if let r = requested.first, r.batch === batch {
            requested.removeFirst()
            if r.asked {
                parts = parted?.collectParts() ?? [ReadAccounts(prefetcher.collect())]
                mark = r.evictionMark
            }
        }
        stream.installPrefetched(parts: consume parts, evictedSince: mark)
        // Evictions before the oldest request outstanding cannot matter.
        stream.table.forgetEvictions(before: requested.first(where: \.asked)?.evictionMark ?? stream.table.evictionMark)
        // Accounts that left memory since the last request: freed by the readers with the
        // next one, or here when there is none.
        var released = stream.table.takeReleased()
        let depth = Self.requestsAhead(prefetcher)
        // The batches after this one not yet asked for are those past the requested ones.
        while requested.count < depth, requested.count < inFlight.count {
            let next = inFlight[requested.count]
            // Waiting for the batch's analysis (a few ms of the workers) costs less than
            // loading its accounts here, one by one, when it is applied.
            scans.queue.waitDone(next)
            let ids = idsToRead(next)
            guard !ids.isEmpty else {
                requested.append(ReadAhead(batch: next, asked: false, evictionMark: 0))
                continue
            }
            requested.append(ReadAhead(batch: next, asked: true, evictionMark: stream.table.evictionMark))
            if let parted {
                var mine: [AccountBox] = []
                swap(&mine, &released)
                parted.request(ids, releasing: consume mine)
            } else {
                prefetcher.request(ids)
            }
        }
    }

    /// The account ids of `batch` to read ahead: those not in memory, each once.
    private func idsToRead(_ batch: Batch) -> [String] {
        var ids: [String] = []
        // The ids taken so far, by the hashes the analysing thread computed (no id is
        // hashed here); kept across batches for its buckets.
        var seen = IDIndex()
        swap(&seen, &requestIndex)
        seen.removeAll()
        withStream { stream in
            let hashes = batch.accountHashes
            for (k, id) in batch.accountIDs.enumerated() {
                let hash = hashes[k]
                guard stream.table.slot(of: id, hash: hash) == nil, seen.find(hash, where: { ids[$0] == id }) == nil else { continue }
                seen.insert(hash, position: ids.count)
                ids.append(id)
            }
        }
        swap(&seen, &requestIndex)
        return ids
    }
}

/// The threads that parse and route batches of lines for a ``ParallelFilter`` (`bf-scanN`,
/// as `top -H` shows them), and the queue that hands batches to them.
///
/// Made by the run's owner (``FilterPipeline``) and started by the filter when its second
/// batch is cut (``start(rules:maxLineBytes:stamp:)``: a small input stays on one thread);
/// ``close()`` lets the threads end once the queue is empty and joins them. Used by the
/// applying thread alone.
package final class ScanPool {
    /// The threads the pool runs once started.
    package let jobs: Int
    let queue = BatchQueue()
    private var threads: [OwnedThread] = []
    /// The threads whose body has not returned (for ``threadsEnded``).
    private let alive = Locked(0)
    private var started = false
    /// Set by ``close()``: no thread runs, and none starts.
    package private(set) var isClosed = false

    /// A pool of `jobs` threads (at least 1; 1: none is started, batches are analysed on the
    /// applying thread).
    package init(jobs: Int) { self.jobs = max(1, jobs) }

    /// Starts the threads (once; not after ``close()``), each with its own copy of `rules`;
    /// whether any runs (false: the system gave none, or `jobs` is 1).
    func start(rules: RuleSet, maxLineBytes: Int, stamp: Bool) -> Bool {
        if !started && !isClosed && jobs > 1 {
            started = true
            let q = queue, alive = alive
            threads = (0..<jobs).compactMap { n in
                alive.withLock { $0 += 1 }
                let thread = OwnedThread.start(name: "bf-scan\(n + 1)") {
                    defer { alive.withLock { $0 -= 1 } }
                    JSONThread.useCLocale()
                    let analyzer = LineAnalyzer(rules: rules.independentCopy(), stamp: stamp)
                    while let b = q.take() {
                        b.analyze(with: analyzer, maxLineBytes: maxLineBytes)
                        q.markDone(b)
                    }
                }
                if thread == nil { alive.withLock { $0 -= 1 } }
                return thread
            }
        }
        return !threads.isEmpty
    }

    /// Whether every thread the pool started has ended, read from a value that outlives the
    /// pool: for tests that a closed pool leaves no thread.
    package var threadsEnded: @Sendable () -> Bool {
        let alive = alive
        return { alive.withLock { $0 } == 0 }
    }

    /// Lets the threads end once the batches queued are analysed, and joins them. Later
    /// calls do nothing.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        queue.finish()
        for thread in threads { thread.join() }
        threads = []
    }

    deinit { close() }
}

/// A run of lines copied out of the reader's buffer, and, once analysed, their results.
///
/// One thread at a time owns a batch: the reading thread fills it, one worker analyses it,
/// the applying thread reads its results. Each hand-over goes through `BatchQueue`'s mutex,
/// which orders the accesses, so the per-access exclusivity checks Swift would make on
/// these arrays (about 400 instructions a line, measured) are turned off.
///
/// Unchecked Sendable: the hand-over of a batch between threads goes through `BatchQueue`'s
/// lock (put/take, markDone/waitDone), and only the thread that holds it touches it.
final class Batch: @unchecked Sendable {
    @exclusivity(unchecked) var data: [UInt8] = []
    @exclusivity(unchecked) var ends: [Int] = []
    /// Per line: -1 for a kept line, else the byte length of an overlong one.
    @exclusivity(unchecked) var overlong: [Int] = []
    /// Numbered input only (else empty), per line: its given number; 0 when it has none
    /// (the physical number is used); `invalidNumber` for a line whose prefix is invalid.
    @exclusivity(unchecked) var numbers: [Int] = []
    @exclusivity(unchecked) var results: [LineResult] = []
    /// With ``collectsAccountIDs``: the account id of each event line, for reading ahead.
    @exclusivity(unchecked) var accountIDs: [String] = []
    /// The hash of each of ``accountIDs`` (``IDIndex/hash(_:)``), computed by the analysing thread.
    @exclusivity(unchecked) var accountHashes: [Int] = []
    var collectsAccountIDs = false
    /// With ``collectsAccountIDs``: whether an event line is a fleet-wide `expire` or
    /// `reconcile` (whose store scan is read just before it is applied).
    var hasFleetLines = false
    var done = false
    private let capacity: Int

    /// A batch is cut at this many bytes of lines even before it has its lines: a stream of
    /// long lines then still keeps a few MiB in flight, not `linesPerBatch` × the longest line.
    static let maxBytes = 1 << 20

    /// The mark of a non-blank numbered line without a valid prefix.
    static let invalidNumber = -1

    init(capacity: Int) {
        self.capacity = capacity
        ends.reserveCapacity(capacity)
        overlong.reserveCapacity(capacity)
        data.reserveCapacity(min(capacity * 320, Self.maxBytes))
    }

    var count: Int { ends.count }

    /// Bytes of line text held.
    var byteCount: Int { data.count }

    /// Empties the batch for reuse, keeping its buffers unless a very long line grew them.
    func recycle() {
        if data.capacity > 2 * Self.maxBytes {
            data = []
            data.reserveCapacity(min(capacity * 320, Self.maxBytes))
        } else {
            data.removeAll(keepingCapacity: true)
        }
        ends.removeAll(keepingCapacity: true)
        overlong.removeAll(keepingCapacity: true)
        numbers.removeAll(keepingCapacity: true)
        results.removeAll(keepingCapacity: true)
        accountIDs.removeAll(keepingCapacity: true)
        accountHashes.removeAll(keepingCapacity: true)
        hasFleetLines = false
        done = false
    }

    func append(_ line: LineReader.Line) {
        switch line {
        case .text(let bytes):
            data.append(contentsOf: bytes)
            overlong.append(-1)
        case .overlong(let n):
            overlong.append(n)
        }
        ends.append(data.count)
    }

    /// Appends a line of numbered input with its number (see `numbers`).
    func append(_ line: LineReader.Line, number: Int) {
        if numbers.isEmpty { numbers.reserveCapacity(capacity) }
        append(line)
        numbers.append(number)
    }
}

/// The work queue between the applying thread and the workers: a ``Locked`` list of
/// batches to analyse, with two conditions (work available, work done).
///
/// `pending`, `finished` and each batch's `done` are read and written only under the lock,
/// which orders the hand-overs of a batch (reader → worker → applier).
final class BatchQueue: Sendable {
    private struct State {
        var pending: [Batch] = []
        var finished = false
    }
    private let state = Locked(State(), conditions: 2)
    private static let workAvailable = Locked<State>.Condition(0)
    private static let workDone = Locked<State>.Condition(1)

    func put(_ b: Batch) {
        state.withLock { $0.pending.append(b) }
        state.signal(Self.workAvailable)
    }

    /// The next batch to analyse, or nil once finished.
    func take() -> Batch? {
        state.withLock(waitingOn: Self.workAvailable, until: { !$0.pending.isEmpty || $0.finished }) { state in
            if state.pending.isEmpty { return nil }
            // At most 2 × jobs + 2 batches wait here, so removing the first is cheap; holding
            // no reference to a taken batch keeps memory flat.
            return state.pending.removeFirst()
        }
    }

    func markDone(_ b: Batch) {
        state.withLock { _ in b.done = true }
        state.broadcast(Self.workDone)
    }

    func isDone(_ b: Batch) -> Bool {
        state.withLock { _ in b.done }
    }

    func waitDone(_ b: Batch) {
        state.withLock(waitingOn: Self.workDone, until: { _ in b.done }) { _ in }
    }

    /// Lets the workers exit once the queue is empty.
    func finish() {
        state.withLock { $0.finished = true }
        state.broadcast(Self.workAvailable)
    }
}
