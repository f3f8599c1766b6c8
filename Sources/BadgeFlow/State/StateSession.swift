/// The state policy of a filter run: when to checkpoint, evict, compact, resume and save.
///
/// It owns nothing that must be closed: the run's ``FilterPipeline`` owns the lock, the
/// ``StateStore``, its connections, every thread and the ``ParallelFilter``, and hands the
/// filter to each policy call (``batchWritten(_:)``, ``idle(_:)``,
/// ``close(_:_:writeError:outputClosed:)``).
///
/// The policy, for a format with checkpoints:
/// - after each batch whose results were written (``batchWritten(_:)``), a checkpoint is due
///   every ``Options/checkpointInterval`` seconds of the clock, when more than half of
///   ``Options/maxResident`` accounts changed, or when memory holds more than
///   `maxResident` and dropping committed accounts is not enough;
/// - evictions keep 15/16 of `maxResident`, so the next ones wait a while; only committed
///   accounts leave memory (finish the commit under way, evict, then begin the next);
/// - while no input comes (``idle(_:)``), the commit under way is waited for, and a
///   checkpoint is committed (and waited for) once it is due and results went out since
///   the last one: an idle filter's ``stats(of:)`` show what a reader of the state sees;
/// - `--resume` goes on after the last checkpoint's seq (by count for a file, which must be
///   the same one; by N with ``Options/numbered``, from any input), and without
///   `--resume`/`--no-resume` the input the last checkpoint read is refused.
///
/// Without a state, or with one saved at the end (JSON): accounts past a quarter over
/// ``Options/expandedAccounts`` are held compactly, a batch whose results could not be
/// written is taken back, and the state is saved at the end. Both finish in one order (``close(_:_:writeError:outputClosed:)``): prepare the last save,
/// put the results file in place, commit the state.
package final class StateSession {
    /// How a session runs.
    package struct Options: Sendable {
        /// Seconds between checkpoints (`--checkpoint`).
        package var checkpointInterval = 1.0
        /// At most this many accounts in memory (`--max-resident`).
        package var maxResident: Int?
        /// Without checkpoints: the accounts kept expanded (`--expanded-accounts`).
        package var expandedAccounts = 65536
        /// What to do about the last checkpoint's seq.
        package var resume = Resume.refuseSameInput
        /// Lines are `N<TAB>JSON` (`--numbered`): resume goes by N.
        package var numbered = false
        /// Results go to a file put in place at the end (`-o`): they count as delivered only
        /// then, so no checkpoint is committed on the way.
        package var resultsAtEnd = false
        /// Longest line kept, in bytes.
        package var maxLineBytes = 1 << 20
        /// Push results carry the stamped payload (`--stamp`).
        package var stamp = false
        /// Refuse rules that differ from the state's recorded ones (`--strict`) instead of
        /// giving a notice.
        package var refusesRulesChange = false
        /// The digests of the inputs (``InputDigest``), each with the name it is read under:
        /// a recorded one is refused without `--resume`/`--no-resume`, and each is recorded
        /// at the end.
        package var inputDigests: [(name: String, digest: String)] = []
        /// Whether stdin, when it is a pipe, is digested as it is read and recorded
        /// (``StateSession/streamedDigest(name:)``); off when the caller names what it pipes
        /// (`--input-digest`).
        package var digestsStdin = true
        /// The state's block cache, in bytes (`--block-cache`, `StateFormat/hasBlockCache`;
        /// nil: the default).
        package var blockCacheBytes: Int?
        /// The smallest `--block-cache`.
        package static let minBlockCacheBytes = 1 << 20
        /// Why `--block-cache` is refused without a state that has a block cache.
        package static var blockCacheNeeded: String { StateFormat.blockCacheNeeded }

        /// The defaults.
        package init() {}
    }

    /// What a run does with the resume point of a state with checkpoints.
    package enum Resume: Sendable {
        /// Refuse the input the last checkpoint read (it would be applied twice).
        case refuseSameInput
        /// Skip what the last checkpoint covers (`--resume`).
        case resume
        /// Apply the input again on top of the state (`--no-resume`).
        case noResume
    }

    /// Figures of a run so far, for `--checkpoint-stats` and `--metrics`.
    package struct Stats: Sendable, Equatable {
        /// Checkpoints begun.
        package var checkpoints = 0
        /// The longest pause of the applying thread for a checkpoint or an eviction, in seconds.
        package var longestPause = 0.0
        /// All those pauses, in seconds.
        package var pauseTime = 0.0
        /// Accounts in memory (expanded and compact).
        package var residentAccounts = 0
        /// Accounts in the state after its last commit (nil: no state).
        package var storedAccounts: Int?
        /// The seq of the last checkpoint committed (one whose commit is still under way
        /// counts once it is waited for: after the next batch's checkpoint, while idle, at
        /// the end), as a reader of the state sees it then.
        package var committedSeq = 0
        /// Accounts read ahead, and loaded on the applying thread.
        package var loadsAhead = 0, loadsInline = 0

        /// What `--checkpoint-stats` prints after `badgeflow: `.
        package var summary: String {
            "\(checkpoints) checkpoint\(checkpoints == 1 ? "" : "s"), the longest pause \(Int((longestPause * 1000).rounded())) ms, \(Int((pauseTime * 1000).rounded())) ms in all; accounts loaded: \(loadsAhead) read ahead, \(loadsInline) on the applying thread"
        }
    }

    /// Why a session cannot go on: the message after `badgeflow: error: `, and the exit.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// The kind of failure, which picks the exit status.
        package enum Kind: Sendable { case usage, state, io }
        /// What failed, where and why.
        package var message: String
        /// The kind.
        package var kind: Kind
        package var description: String { message }
    }

    /// The results file as the last save sees it.
    package struct Results {
        /// What messages call it (`stdout`, or the `-o` path).
        package var name: String
        /// Results go to `-o FILE`.
        package var isFile: Bool
        /// `-o FILE` is put in place at the end (a regular file).
        package var replacesAtomically: Bool
        /// Puts the results in place; the error's words, or nil.
        package var commit: () -> String?
        /// Drops the results not yet in place.
        package var discard: () -> Void

        /// Creates the view.
        package init(
            name: String, isFile: Bool, replacesAtomically: Bool, commit: @escaping () -> String?, discard: @escaping () -> Void
        ) {
            self.name = name
            self.isFile = isFile
            self.replacesAtomically = replacesAtomically
            self.commit = commit
            self.discard = discard
        }
    }

    /// The monotonic clock, in seconds.
    package static func monotonic() -> Double {
        System.monotonicClock()
    }

    /// The rules the run applies (the recorded ones when none were given).
    package let rules: RuleSet
    /// The state (nil: none); the pipeline owns and closes it.
    package let store: (any StateStore)?
    /// What commits the checkpoints (the pipeline's, on the store's connection; nil: none).
    package internal(set) var checkpointer: (any Checkpointer)?
    /// The inputs digested as they are read (``streamedDigest(name:)``).
    private var streamedDigests: [(name: String, digest: StreamedInputDigest)] = []
    /// `--resume --numbered`: lines numbered at or below it are skipped.
    package private(set) var skipThrough: Int?
    /// What the input is (``identity(of:)``).
    package let input: String
    /// Lines to pass over unread at the start (`--resume` by count).
    package private(set) var skipLines = 0

    /// How the session runs.
    package let options: Options
    private let now: () -> Double
    private var stats = Stats()
    private var lastCheckpoint: Double
    /// The seq of the last checkpoint begun (``Stats/committedSeq`` once it is finished).
    private var begunSeq = 0
    /// The first state error; nothing is committed after it.
    private var stateError: String?
    /// A checkpoint is committed while results are written (a format with checkpoints, to stdout).
    private let checkpointsOnTheWay: Bool
    /// Evictions keep 15/16 of `--max-resident`.
    private let keepAfterEviction: Int?
    /// A queue offset's seq and input, left as they were (`--no-resume` without `--numbered`).
    private var keptOffset: (seq: Int, input: String)?
    /// A queue offset never moves backwards: the committed seq before this run.
    private var offsetFloor: Int?
    /// The state's records (inputs applied, queue offset), saved at the end.
    private var records = StateRecords()
    /// The seq this run's results begin after.
    private var startSeq = 0

    /// Settles the resume point of a state the pipeline opened (``open(_:rules:rulesGiven:refusingChange:notice:)``)
    /// for a run over `input`.
    ///
    /// - Parameters:
    ///   - store: the opened state (nil: none); the caller closes it.
    ///   - rules: the rules the run applies.
    ///   - records: the state's records (its stream's).
    ///   - rulesGiven: whether rules were given (else the state's recorded ones apply).
    ///   - input: what the input is (``identity(of:)``).
    ///   - options: how to run.
    ///   - clock: seconds, monotonic (tests pass their own).
    ///   - notice: receives what goes to stderr as a notice (what `--resume` skips).
    /// - Throws: ``Failure`` when the state's resume point or records do not fit the input.
    package init(
        store: (any StateStore)?, rules: RuleSet, records: StateRecords, rulesGiven: Bool, input: String, options: Options,
        clock: @escaping () -> Double = StateSession.monotonic, notice: (String) -> Void = { _ in }
    ) throws(Failure) {
        self.options = options
        self.input = input
        now = clock
        lastCheckpoint = clock()
        keepAfterEviction = options.maxResident.map { $0 - $0 / 16 }
        self.rules = rules
        self.store = store
        checkpointsOnTheWay = store.map { type(of: $0).checkpoints } == true && !options.resultsAtEnd
        if let store {
            self.records = records
            try checkRecords(store, rulesGiven: rulesGiven)
        }
        if let store, let point = store.resumePoint {
            stats.committedSeq = point.seq
            begunSeq = point.seq
            if point.seq > 0, options.resume == .refuseSameInput, input != "stdin", point.input == input, keptOffset == nil {
                // Resume is never silent: the same file again would be applied twice.
                throw Failure(
                    message:
                        "state file \(store.path): its last checkpoint (seq \(point.seq)) was committed reading this input (\(input)); pass --resume to go on after seq \(point.seq), or --no-resume to apply the input again on top of the state",
                    kind: .usage)
            }
            if options.resume == .resume, options.numbered {
                // A queue consumer resumes by N, from any offset: no input identity to check.
                if point.seq > 0 {
                    notice("badgeflow: --resume: skipping the lines numbered \(point.seq) or below (answered before the last checkpoint)")
                }
                skipThrough = point.seq
            } else if options.resume == .resume {
                if !point.input.isEmpty && point.input != input && point.seq > 0 {
                    throw Failure(message: "--resume: \(store.path) was checkpointed reading \(point.input), not \(input)", kind: .state)
                }
                skipLines = point.seq
                if point.seq > 0 {
                    notice(
                        "badgeflow: --resume: skipping the first \(point.seq) line\(point.seq == 1 ? "" : "s") of \(input) (answered before the last checkpoint)"
                    )
                }
            }
        }
        lastCheckpoint = clock()
    }

    /// Nothing applied twice, nothing moved back: refuses an input whose digest the state
    /// recorded, and a run without `--numbered` on a queue offset, unless `--resume` or
    /// `--no-resume`; settles what the checkpoints record as their seq.
    private func checkRecords(_ store: any StateStore, rulesGiven: Bool) throws(Failure) {
        let point = store.resumePoint
        if options.resume == .refuseSameInput {
            for (name, digest) in options.inputDigests {
                guard let applied = records.applied(digest) else { continue }
                let onward =
                    point == nil
                    ? "pass --no-resume to apply it again on purpose"
                    : "pass --resume to go on after the last checkpoint (seq \(point?.seq ?? 0)), or --no-resume to apply it again on purpose"
                throw Failure(
                    message:
                        "state file \(store.path): the input \(name) was already applied to it (same content: \(applied.applied)); \(onward)",
                    kind: .usage)
            }
        }
        guard let point else { return }
        if records.numbered && !options.numbered {
            guard options.resume == .noResume else {
                throw Failure(
                    message:
                        "state file \(store.path): its committed seq \(point.seq) is a queue offset (written by --numbered runs); a run without --numbered would move it; pass --numbered (with --resume to go on after it), or --no-resume to apply this input and leave the offset at \(point.seq)",
                    kind: .usage)
            }
            keptOffset = (point.seq, point.input)
        }
        if options.numbered {
            offsetFloor = point.seq
            records.numbered = true
        }
        startSeq = options.numbered ? point.seq : 0
    }

    /// The seq and input a checkpoint covering the results up to `seq` records.
    private func offset(_ seq: Int) -> (seq: Int, input: String) {
        if let keptOffset { return keptOffset }
        if let offsetFloor { return (max(seq, offsetFloor), input) }
        return (seq, input)
    }

    /// The records of this run's inputs, added before the last save of a run that read them
    /// to their end: the files' digests taken before they were read, and those of the
    /// streams (stdin a pipe) read to their end.
    private func recordInputs(last: Int) {
        let first = options.numbered ? startSeq + 1 : skipLines + 1
        let at = AppliedInput.now()
        let streamed = streamedDigests.filter(\.digest.complete).map { (name: $0.name, digest: $0.digest.finish()) }
        for (name, digest) in options.inputDigests + streamed where !digest.hasPrefix("0:") {
            records.add(AppliedInput(digest: digest, name: name, firstSeq: min(first, max(last, 1)), lastSeq: last, at: at))
        }
    }

    /// A digest for the reader to fill as it reads `name` (stdin a pipe, which cannot be
    /// digested before it is read), recorded with the run's inputs when the reader marks it
    /// ``StreamedInputDigest/complete``; nil without a state file (nothing records it). Such
    /// an input is never refused (its digest is known only once it is read); a later file
    /// with the same content is. Not in `--numbered` runs: a queue's offset is what protects
    /// it, and a record a run would push the files' records out of the last 64.
    package func streamedDigest(name: String) -> StreamedInputDigest? {
        guard store != nil, options.digestsStdin, !options.numbered else { return nil }
        let digest = StreamedInputDigest()
        streamedDigests.append((name, digest))
        return digest
    }

    /// Opens the state at `path` for a filter under `rules`, or the recorded ones when
    /// none were given; other rules must fit every stored account.
    ///
    /// - Returns: the store (the caller closes it), the rules the run applies, and the
    ///   stream the filter runs on.
    package static func open(
        _ path: String, rules: RuleSet, rulesGiven: Bool, refusingChange: Bool = false, notice: (String) -> Void = { _ in }
    ) throws(Failure) -> (any StateStore, RuleSet, BadgeStream) {
        let store: any StateStore
        let recorded: RuleSet?
        do throws(StateFile.Failure) { store = try StateFormat.open(path: path, readOnly: false) } catch {
            throw Failure(message: "state file \(error.description)", kind: .state)
        }
        do throws(StateFile.Failure) { recorded = try store.recordedRules() } catch {
            store.close()
            throw Failure(message: "state file \(error.description)", kind: .state)
        }
        var rules = rules
        if let recorded {
            if !rulesGiven {
                rules = recorded
            } else if recorded.fingerprint != rules.fingerprint {
                // Other rules fit when every mark does (rules change over time).
                do throws(StateFile.Failure) { try store.checkFits(rules) } catch {
                    store.close()
                    throw Failure(
                        message:
                            "state file \(error.description) (under the rules given, which differ from the recorded ones: \(rules.difference(from: recorded)))",
                        kind: .state)
                }
                // One notice of what changed (and the reconcile line when totals can change).
                let change = rules.changeNotice(from: recorded)
                if refusingChange {
                    store.close()
                    throw Failure(
                        message: "--strict: \(path): \(change.text); run without --strict to apply the new rules", kind: .usage)
                }
                notice("badgeflow: notice: \(path): \(change.text)")
            }
        }
        do throws(StateFile.Failure) {
            return (store, rules, try store.attach(rules: rules))
        } catch {
            store.close()
            throw Failure(message: "state file \(error.description)", kind: .state)
        }
    }

    /// What `--resume` checks the input against: `stdin`, or each file's real path with its
    /// device and inode (so a file replaced under the same name is told apart, and one file
    /// named two ways is the same), joined by `, `.
    package static func identity(of sources: [String]) -> String {
        sources.map { source in
            if source == "-" { return "stdin" }
            guard let identity = System.fileIdentity(source) else { return source }
            return "\(System.realPath(source) ?? source) (\(identity))"
        }.joined(separator: ", ")
    }

    /// The filter starts now: the first checkpoint is due an interval from here.
    package func restartClock() { lastCheckpoint = now() }

    /// Whether a state error stopped the run (no further line is read).
    package var failed: Bool { stateError != nil }

    /// The figures so far, with those of `filter` (nil: not started).
    package func stats(of filter: ParallelFilter?) -> Stats {
        var s = stats
        filter?.withStream { stream in
            s.residentAccounts = stream.accountCount
            s.loadsAhead = stream.loads.ahead
            s.loadsInline = stream.loads.inline
        }
        s.storedAccounts = checkpointer?.storedAccounts ?? store?.storedAccounts
        return s
    }

    /// What a failed checkpoint commit (e.g. on a full disk) says after `state file `: the
    /// transaction was rolled back, so the database holds the checkpoint before it.
    private static func checkpointFailure(_ error: StateFile.Failure) -> String {
        "\(error.file): cannot commit a checkpoint: \(error.message); the state keeps its last checkpoint, which --resume goes on from"
    }

    /// A pause of the applying thread that began at `start`, for the stats; returns its end.
    private func notePause(since start: Double) -> Double {
        let end = now()
        stats.longestPause = max(stats.longestPause, end - start)
        stats.pauseTime += end - start
        return end
    }

    /// Waits for the commit under way, if any (it holds results already written).
    private func settleCheckpoint(_ filter: ParallelFilter) {
        guard let checkpointer, checkpointer.isPending else { return }
        filter.withStream { stream in
            do throws(StateFile.Failure) { try finishCommit(checkpointer, &stream) } catch {
                if stateError == nil { stateError = Self.checkpointFailure(error) }
            }
        }
    }

    /// Waits for the commit under way (none: returns at once); once it succeeded, the stats
    /// show its seq (and the store its accounts).
    private func finishCommit(_ checkpointer: any Checkpointer, _ stream: inout BadgeStream) throws(StateFile.Failure) {
        guard checkpointer.isPending else { return }
        try checkpointer.finish(&stream)
        stats.committedSeq = offset(begunSeq).seq
    }

    /// Commits what the results written so far reflect: called only after they were
    /// written. The pause is the wait for the previous commit, the eviction and taking the
    /// changed accounts; with `wait`, also this commit.
    private func commitCheckpoint(_ filter: ParallelFilter, wait: Bool = false) {
        guard let checkpointer, stateError == nil else { return }
        // An account that could not be loaded got an error line: commit nothing after it.
        if let failure = filter.withStream({ $0.sourceFailure }) {
            settleCheckpoint(filter)
            stateError = failure.description
            return
        }
        let start = now()
        let seq = filter.resumeSeq
        filter.withStream { stream in
            do throws(StateFile.Failure) {
                // Only committed accounts may leave memory: finish, evict, then begin.
                try finishCommit(checkpointer, &stream)
                if let keepAfterEviction { stream.evict(keeping: keepAfterEviction) }
                let at = offset(seq)
                checkpointer.begin(&stream, seq: at.seq, input: at.input)
                begunSeq = seq
                if wait { try finishCommit(checkpointer, &stream) }
            } catch {
                stateError = Self.checkpointFailure(error)
            }
        }
        stats.checkpoints += 1
        lastCheckpoint = notePause(since: start)
    }

    /// Over `--max-resident`: drops committed accounts when that is enough (no commit, so
    /// checkpoints stay large and few); false when a checkpoint is needed. Accounts of the
    /// commit under way stay until it ends: it is waited for only when too few others can
    /// leave.
    private func evictCommitted(_ filter: ParallelFilter) -> Bool {
        guard let checkpointer, let keepAfterEviction, stateError == nil else { return false }
        let start = now()
        defer { _ = notePause(since: start) }
        return filter.withStream { stream in
            let excess = stream.residentCount - keepAfterEviction
            let free = stream.residentCount - stream.changedCount - stream.inFlightCount
            if checkpointer.isPending && free < excess {
                do throws(StateFile.Failure) { try finishCommit(checkpointer, &stream) } catch {
                    stateError = Self.checkpointFailure(error)
                    return true
                }
            }
            // Enough committed accounts to drop: the changed ones fit in what is kept.
            guard stream.changedCount <= keepAfterEviction else { return false }
            stream.evict(keeping: keepAfterEviction)
            return true
        }
    }

    /// After each batch whose results were all written: compaction (no checkpoints), or a
    /// checkpoint when one is due (see the type's policy).
    package func batchWritten(_ filter: ParallelFilter) {
        // No state, or one saved at the end: every account stays in memory, so the idle ones
        // go compact (a stateless run over a fleet needs it as much as a JSON state).
        guard let store, type(of: store).checkpoints else {
            // Past a quarter over the limit, the least recently used go compact: a sort of
            // the expanded accounts' use counts every few thousand lines.
            let keep = options.expandedAccounts
            let over = keep > Int.max - keep / 4 ? Int.max : keep + keep / 4
            filter.withStream { stream in if stream.residentCount > over { stream.compact(keeping: keep) } }
            return
        }
        guard checkpointsOnTheWay else { return }
        let crowded = options.maxResident.map { n in filter.withStream { $0.residentCount > n } } ?? false
        // Changed accounts past half of --max-resident are committed early, while the
        // committed half still gives evictions room: a commit runs beside the batches that
        // follow instead of holding them up.
        let halfChanged = options.maxResident.map { n in filter.withStream { $0.changedCount > n / 2 } } ?? false
        if now() - lastCheckpoint >= options.checkpointInterval || halfChanged || (crowded && !evictCommitted(filter)) {
            commitCheckpoint(filter)
        }
    }

    /// The results of the batch just applied could not be written (the output is closed):
    /// no further batch is applied, and a state saved at the end holds none of its lines.
    package func outputFailed(_ filter: ParallelFilter) {
        if let store, !type(of: store).checkpoints { filter.undoLastBatch() }
        filter.stop()
    }

    /// No input is ready, and the results held back went out: waits for the commit under
    /// way, and commits a checkpoint when one is due and results went out since the last,
    /// waiting for it too, so that the stats (``stats(of:)``, `--metrics`) are then what
    /// `state info` shows. Returns how long to wait for input, in ms, before asking again
    /// (-1: until input comes).
    package func idle(_ filter: ParallelFilter) -> Int32 {
        guard checkpointsOnTheWay, stateError == nil else { return -1 }
        // Accounts that left memory and wait for the next read-ahead to free them: none comes
        // while idle.
        filter.withStream { _ = $0.table.takeReleased() }
        defer { filter.withStream { _ = $0.table.takeReleased() } }
        // A commit begun while lines came has had its time: waiting costs little now.
        settleCheckpoint(filter)
        guard stateError == nil, filter.resumeSeq != begunSeq else { return -1 }
        let wait = options.checkpointInterval - (now() - lastCheckpoint)
        if wait <= 0 {
            // Its pause is that of a checkpoint under load; the wait for its commit is idle time.
            commitCheckpoint(filter)
            settleCheckpoint(filter)
            return -1
        }
        return Int32(min(wait * 1000 + 1, 60_000))
    }

    /// Ends the run of `filter`: the last save, in the order "prepare the state's save, put
    /// `results` in place, commit the state" (the pipeline then closes the store). Returns
    /// whether `results` were put in place (else the caller commits them, or discards them
    /// on `writeError`).
    ///
    /// - Parameters:
    ///   - filter: the run's filter.
    ///   - results: the results file.
    ///   - writeError: why results could not be written (nil: all were).
    ///   - outputClosed: results were not all written (a write failed, or the reader left).
    /// - Throws: ``Failure`` when the state cannot be saved or committed (`results` are then
    ///   discarded when they were not yet in place), or `results` cannot be put in place.
    package func close(_ filter: ParallelFilter, _ results: Results, writeError: String?, outputClosed: Bool) throws(Failure) -> Bool {
        guard let store else { return false }
        let seq = filter.resumeSeq
        if type(of: store).checkpoints {
            if let failure = filter.withStream({ $0.sourceFailure }) { stateError = failure.description }
            var committed = false
            // The last checkpoint: only when every result was written (else the state would
            // be ahead of what the reader got); with -o, once FILE is in place.
            if !outputClosed && stateError == nil {
                settleCheckpoint(filter)
                if results.isFile && stateError == nil {
                    committed = true
                    if let error = results.commit() { throw Failure(message: error, kind: .io) }
                }
                commitCheckpoint(filter, wait: true)
                // Inputs read to their end only (a signal stops the run: --resume goes on).
                if stateError == nil && receivedSignal == 0 {
                    recordInputs(last: filter.resumeSeq)
                    do throws(StateFile.Failure) { try store.record(records) } catch { stateError = error.description }
                }
            }
            settleCheckpoint(filter)
            if let stateError {
                results.discard()
                throw Failure(message: "state file \(stateError)", kind: .state)
            }
            return committed
        }
        if let writeError, results.replacesAtomically {
            // -o FILE keeps its old content: no result of this run is delivered, so the state
            // is not saved either (a second run answers the same lines again).
            results.discard()
            throw Failure(
                message: "\(writeError) (\(results.name) and the state file \(store.path) keep their previous content)", kind: .io)
        }
        // Inputs read to their end only: a run cut short by a signal or a closed output is
        // not recorded as having applied them.
        if writeError == nil && !outputClosed && receivedSignal == 0 { recordInputs(last: seq) }
        filter.withStream { $0.records = records }
        // The state is written and synced, then -o FILE put in place, then the state: a
        // state is never ahead of the results the reader has, and a full disk keeps both
        // files as they were.
        if let error = finalStep(filter, { stream throws(StateFile.Failure) in try store.prepareFinal(&stream, seq: seq, input: input) }) {
            results.discard()
            throw Failure(
                message: "state file \(store.path): cannot save (it keeps its previous content): \(error.description)", kind: .state)
        }
        var committed = false
        if writeError == nil && results.replacesAtomically {
            committed = true
            if let error = results.commit() {
                throw Failure(message: "\(error) (the state file \(store.path) keeps its previous content)", kind: .io)
            }
        }
        if let error = finalStep(filter, { stream throws(StateFile.Failure) in try store.commitFinal(&stream, seq: seq, input: input) }) {
            let kept = committed ? "; \(results.name) holds this run's results" : ""
            throw Failure(
                message: "state file \(store.path): cannot save (it keeps its previous content\(kept)): \(error.description)", kind: .state)
        }
        return committed
    }

    /// Runs `step` on the stream; its error, if any.
    private func finalStep(_ filter: ParallelFilter, _ step: (inout BadgeStream) throws(StateFile.Failure) -> Void) -> StateFile.Failure? {
        filter.withStream { stream in
            do throws(StateFile.Failure) { try step(&stream) } catch { return error }
            return nil
        }
    }
}
