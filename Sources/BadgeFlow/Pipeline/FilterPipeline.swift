/// One filter run's resources and their one owner: the state's lock, its ``StateStore``, the
/// connections the store hands out for commits and read-ahead, every thread (the
/// ``ScanPool``'s scanners, the read-ahead's readers, the committer), the results' target
/// (``ResultsFile``), and the ``ParallelFilter`` on the state's accounts (whose store reads
/// run on the applying thread, before the lines that need them: ``AccountLoader``). Each
/// input is opened and closed by the run's read loop (`FilterRun`) around its reading. The state policy (``StateSession``) owns
/// none of them: the pipeline hands it the filter on each call.
///
/// Its life is a ``Phase``: ``Phase/opened`` (the lock taken, the state and its commit
/// connection opened, the resume point settled), ``Phase/running`` once
/// ``start(jobs:linesPerBatch:)`` made the filter and the threads' owners,
/// ``Phase/draining`` while ``finish(_:writeError:outputClosed:)`` writes the last save,
/// ``Phase/finished`` once it is written and all but the lock closed, then
/// ``Phase/closed`` once ``close()`` released the lock; ``Phase/failed`` when the start or
/// the last save failed (everything is closed all the same). Every way out goes through
/// ``close()``, once, in one order:
/// 1. the read-ahead: its threads end, then its connections close (an SQLite state's
///    read-only ones before any writing one: the last connection to close removes the WAL
///    files, which a read-only one cannot);
/// 2. the committer: the commit under way is waited for, its thread ends, then its
///    connection closes;
/// 3. the scanners: they end once the batches queued are analysed;
/// 4. the store (RocksDB's one handle only once no thread uses it);
/// 5. the results' target (``own(_:)``) when they were not put in place: the temporary
///    file goes, `-o FILE` keeps its old content;
/// 6. the lock, last, so no other writer opens the state before it is closed.
///
/// Used by one thread (the applying one); ``close()`` also runs from `deinit`.
package final class FilterPipeline {
    /// Where a run is in its life.
    package enum Phase: Sendable, Equatable {
        /// The state is locked, opened and its resume point settled; no thread runs.
        case opened
        /// The filter runs (``start(jobs:linesPerBatch:)``).
        case running
        /// The last save is under way (``finish(_:writeError:outputClosed:)``).
        case draining
        /// The last save is written; threads, connections and the state are closed, the
        /// lock is held until ``close()``.
        case finished
        /// Everything is closed and the lock released.
        case closed
        /// The start or the last save failed; everything is closed once ``close()`` ran.
        case failed
    }

    /// Where the run is.
    package private(set) var phase = Phase.opened
    /// The state policy.
    package let session: StateSession
    /// The state (nil: none).
    package let store: (any StateStore)?
    private var lock: StateLock?
    /// The stream until the filter starts.
    private var attached: BadgeStream?
    private var running: ParallelFilter?
    /// The store's commit connection, opened with the state (a format that cannot give one
    /// fails before any output), until the checkpointer takes it.
    private var commitConnection: StoreConnection?
    private var scans: ScanPool?
    private var checkpointer: StoreCheckpointer?
    private var prefetcher: StorePrefetcher?
    /// Set by ``close()``.
    private var released = false
    /// Where the results go (``own(_:)``): put in place by ``commitResults()``, dropped by
    /// ``discardResults()`` or, when neither was called, by ``close()``.
    package private(set) var results: ResultsFile?

    /// Takes the lock of `state`, opens it, settles the rules and the resume point.
    ///
    /// - Parameters:
    ///   - state: the state's path (nil: none).
    ///   - rules: the rules given, or the built-in ones.
    ///   - rulesGiven: whether they were given (else a state's recorded rules are used).
    ///   - input: what the input is (``StateSession/identity(of:)``).
    ///   - options: how to run.
    ///   - clock: seconds, monotonic (tests pass their own).
    ///   - notice: receives what goes to stderr as a notice (what `--resume` skips).
    /// - Throws: ``StateSession/Failure`` when the state is locked, cannot be opened, does
    ///   not fit the rules, or its resume point does not fit the input; nothing is left open.
    package init(
        state: String?, rules given: RuleSet, rulesGiven: Bool, input: String, options: StateSession.Options,
        clock: @escaping () -> Double = StateSession.monotonic, notice: (String) -> Void = { _ in }
    ) throws(StateSession.Failure) {
        var lock: StateLock?
        var store: (any StateStore)?
        var rules = given
        let stream: BadgeStream
        if let state {
            // Also finds an unwritable folder before any line is read.
            do { lock = try StateLock(state: state) } catch {
                throw StateSession.Failure(message: "state file \(state): \(error.description)", kind: .state)
            }
            do throws(StateSession.Failure) {
                (store, rules, stream) = try StateSession.open(
                    state, rules: rules, rulesGiven: rulesGiven, refusingChange: options.refusesRulesChange, notice: notice)
            } catch {
                lock?.release()
                throw error
            }
        } else {
            stream = BadgeStream(rules: rules)
        }
        do throws(StateSession.Failure) {
            if let bytes = options.blockCacheBytes, store?.setBlockCache(bytes: bytes) != true {
                throw StateSession.Failure(message: StateSession.Options.blockCacheNeeded, kind: .usage)
            }
            session = try StateSession(
                store: store, rules: rules, records: stream.records, rulesGiven: rulesGiven, input: input, options: options,
                clock: clock, notice: notice)
        } catch {
            store?.close()
            lock?.release()
            throw error
        }
        do throws(StateFile.Failure) { commitConnection = try store?.commitConnection() } catch {
            store?.close()
            lock?.release()
            throw StateSession.Failure(message: "state file \(error.description)", kind: .state)
        }
        self.store = store
        self.lock = lock
        attached = consume stream
    }

    deinit { close() }

    /// The filter over the state's accounts (``start(jobs:linesPerBatch:)`` first).
    package var filter: ParallelFilter {
        guard let running else { preconditionFailure("FilterPipeline: start() first") }
        return running
    }

    /// Makes the filter over the state's accounts, with `jobs` scanning threads (started
    /// with its second batch) and batches of `linesPerBatch` lines, the committer on the
    /// store's commit connection, and, with more than one job, the read-ahead on its read
    /// connections. Later calls, while it runs, return the same filter.
    ///
    /// - Throws: ``StateSession/Failure`` when the store's read connections cannot be
    ///   opened (the pipeline is then ``Phase/failed``, its threads and connections
    ///   closed), or the pipeline is past running.
    @discardableResult
    package func start(jobs: Int, linesPerBatch: Int) throws(StateSession.Failure) -> ParallelFilter {
        if phase == .running, let running { return running }
        guard phase == .opened, let stream = attached.take() else {
            throw StateSession.Failure(message: "the filter run was already started and ended", kind: .state)
        }
        let options = session.options
        let rules = stream.rules
        let scans = ScanPool(jobs: jobs)
        self.scans = scans
        // The stream is moved in: a copy left here would share every account with the
        // filter's, and each account's first change would copy its tree and devices while
        // this one kept the old ones (a loaded JSON state took ~2 KB more an account).
        let filter = ParallelFilter(
            stream: consume stream, scans: scans, maxLineBytes: options.maxLineBytes, linesPerBatch: linesPerBatch,
            stamp: options.stamp, numbered: options.numbered)
        running = filter
        phase = .running
        filter.skip(lines: session.skipLines)
        if let skipThrough = session.skipThrough { filter.skip(numbersThrough: skipThrough) }
        guard let store else { return filter }
        // A state saved at the end holds no line of a batch whose results were not written.
        filter.keepsUndo = !type(of: store).checkpoints
        // The stream reads no store: the filter loads what each batch needs before it.
        if let source = store.accountSource { filter.source = source }
        if let connection = commitConnection.take() {
            checkpointer = StoreCheckpointer(connection: connection, worker: Worker(name: "bf-commit"))
            session.checkpointer = checkpointer
        }
        do throws(StateFile.Failure) {
            if filter.jobs > 1 {
                let readers = try store.readConnections()
                if !readers.isEmpty {
                    let workers = readers.indices.map { Worker<ReadAccounts>(name: "bf-read\($0 + 1)") }
                    let prefetcher = StorePrefetcher(readers: readers, workers: workers, rules: rules)
                    self.prefetcher = prefetcher
                    filter.prefetcher = prefetcher
                }
            }
        } catch {
            phase = .failed
            closeResources()
            throw StateSession.Failure(message: "state file \(error.description)", kind: .state)
        }
        session.restartClock()
        return filter
    }

    /// Whether every thread the run started has ended, read from a value that outlives the
    /// pipeline: for tests that a closed (or dropped) pipeline leaves no thread.
    package var threadsEnded: @Sendable () -> Bool {
        let probes = [scans?.threadsEnded, prefetcher?.threadsEnded, checkpointer?.threadEnded].compactMap { $0 }
        return { probes.allSatisfy { $0() } }
    }

    /// The figures so far.
    package var currentStats: StateSession.Stats { session.stats(of: running) }

    /// Whether a state error stopped the run (no further line is read).
    package var failed: Bool { session.failed }

    /// How the run goes.
    package var options: StateSession.Options { session.options }

    /// Lines to pass over unread at the start (`--resume` by count).
    package var skipLines: Int { session.skipLines }

    /// After each batch whose results were all written (``StateSession/batchWritten(_:)``).
    package func batchWritten() { session.batchWritten(filter) }

    /// The results of the batch just applied could not be written
    /// (``StateSession/outputFailed(_:)``).
    package func outputFailed() { session.outputFailed(filter) }

    /// No input is ready (``StateSession/idle(_:)``): how long to wait, in ms (-1: until
    /// input comes).
    package func idle() -> Int32 { session.idle(filter) }

    /// A digest for the reader to fill as it reads `name` (``StateSession/streamedDigest(name:)``).
    package func streamedDigest(name: String) -> StreamedInputDigest? { session.streamedDigest(name: name) }

    /// The last save (``StateSession/close(_:_:writeError:outputClosed:)``), then
    /// ``close()`` but for the lock, which the owner releases with ``close()`` once it has
    /// put its results in place. Returns whether `results` were put in place.
    ///
    /// - Throws: ``StateSession/Failure`` when the state cannot be saved or committed, or
    ///   `results` cannot be put in place.
    package func finish(_ results: StateSession.Results, writeError: String?, outputClosed: Bool) throws(StateSession.Failure) -> Bool {
        precondition(phase == .running, "FilterPipeline: finish() a running pipeline, once")
        phase = .draining
        defer { closeResources() }
        do throws(StateSession.Failure) {
            let placed = try session.close(filter, results, writeError: writeError, outputClosed: outputClosed)
            phase = .finished
            return placed
        } catch {
            phase = .failed
            throw error
        }
    }

    /// Takes `file`, the results' target, for the rest of the run: ``close()`` drops what was
    /// not put in place (``commitResults()``).
    package func own(_ file: ResultsFile) { results = file }

    /// Puts the results in place (`-o FILE`: fsync, rename, fsync of the folder; stdout:
    /// nothing).
    ///
    /// - Throws: ``ResultsFile/Failure`` when they cannot be; FILE keeps its old content.
    package func commitResults() throws(ResultsFile.Failure) { try results?.commit() }

    /// Drops the results not yet in place: FILE keeps its old content.
    package func discardResults() { results?.discard() }

    /// Ends every thread, closes every connection and the store, in the order the type
    /// describes, drops results not put in place, and releases the lock. Later calls do
    /// nothing.
    package func close() {
        guard !released else { return }
        released = true
        closeResources()
        // Results never put in place are dropped; the target keeps its old content.
        results?.discard()
        results = nil
        lock?.release()
        lock = nil
        if phase != .failed { phase = .closed }
    }

    /// Steps 1-4 of ``close()``; each owner's close is idempotent.
    private func closeResources() {
        prefetcher?.close()
        checkpointer?.close()
        // Not taken by a checkpointer (the run never started): the run's own is closed here.
        if let connection = commitConnection.take(), connection.owned { connection.store.close() }
        scans?.close()
        store?.close()
    }
}
