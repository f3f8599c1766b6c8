/// Where a store-backed ``BadgeStream`` keeps the accounts it does not hold: a state store
/// (the stores of the formats that checkpoint, `StateFormat/checkpoints`).
///
/// The stream never calls it: the layer that applies the stream's lines does
/// (``AccountLoader``, ``ParallelFilter/source``), on the applying thread, one call at a
/// time, before the line that needs what it reads.
public protocol AccountSource: AnyObject, Sendable {
    /// The stored account `id`, or nil when the store has none.
    ///
    /// - Throws: `StateFile.Failure` when the stored account cannot be read.
    func loadAccount(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account?

    /// The stored accounts with a mark that may be due at or before `time` (a fleet-wide
    /// `expire`); they need not be loaded.
    ///
    /// - Throws: `StateFile.Failure` when the store cannot be read.
    func accountsDue(through time: Double) throws(StateFile.Failure) -> [String]

    /// Calls `body` with every stored account, read with `rules`, in byte order of id, one
    /// at a time, never all in memory at once (a fleet-wide `reconcile`).
    ///
    /// - Throws: `StateFile.Failure` when the store cannot be read or an account decoded.
    func forEachStoredAccount(
        rules: RuleSet, _ body: (String, consuming Account) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure)
}

extension AccountSource {
    /// No stored account is due: a source without a due index.
    public func accountsDue(through time: Double) throws(StateFile.Failure) -> [String] { [] }

    /// No stored account: a source that cannot be walked.
    public func forEachStoredAccount(
        rules: RuleSet, _ body: (String, consuming Account) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) {}
}

/// Applies lines to a ``BadgeStream`` whose accounts live in a store (an ``AccountSource``),
/// reading from the store, before each line, what the line needs: the stream itself does no
/// I/O.
///
/// Before a line, the account it uses is loaded unless the stream holds it (or it was read
/// ahead); before a fleet-wide `expire`, the stored accounts that may be due (and loaded,
/// those not in memory); before a fleet-wide `reconcile`, every stored account, one at a
/// time, keeping only what those not in memory are owed. A read that fails rejects the line
/// that needed it, with the store's error, and sets ``BadgeStream/sourceFailure``.
///
/// ```swift
/// // `store`: an AccountSource (say, a database of your accounts).
/// var stream = BadgeStream(rules: .builtIn)
/// let loader = AccountLoader(store, attaching: &stream)
/// let analyzer = LineAnalyzer(rules: .builtIn)
/// var out = JSONWriter()
/// loader.apply(analyzer.analyze(#"{"op":"clear","account":"u1","path":"root.chat"}"#), seq: 1, to: &stream, into: &out)
/// ```
///
/// `badgeflow filter` loads a batch's accounts at once (``ParallelFilter/source``), the
/// same way.
public struct AccountLoader: Sendable {
    /// Where the accounts are.
    public let source: any AccountSource

    /// A loader over `source` for `stream`, which it makes store-backed
    /// (``BadgeStream/isStoreBacked``).
    public init(_ source: any AccountSource, attaching stream: inout BadgeStream) {
        self.source = source
        stream.isStoreBacked = true
    }

    /// A loader over `source`, for a stream already store-backed.
    package init(_ source: any AccountSource) { self.source = source }

    /// Reads what `line` needs from the store, then applies it to `stream` and appends its
    /// result line to `out` (``BadgeStream/apply(_:seq:into:)``). Each line's reads are its
    /// own: what was read for an earlier line, or read ahead, is dropped first (it may be
    /// stale by now).
    public func apply(_ line: consuming LineResult, seq: Int, to stream: inout BadgeStream, into out: inout JSONWriter) {
        stream.clearProvided()
        if case .event(let event) = line { prepare(event, for: &stream, values: false) }
        stream.apply(line, seq: seq, into: &out)
    }

    /// Reads what `line` needs from the store, then applies it to `stream` and returns its
    /// result (``BadgeStream/apply(_:seq:)``).
    public func apply(_ line: consuming LineResult, seq: Int, to stream: inout BadgeStream) -> StreamResult? {
        stream.clearProvided()
        if case .event(let event) = line { prepare(event, for: &stream, values: true) }
        return stream.apply(line, seq: seq)
    }

    /// Reads what `event` needs before it is applied to `stream`: its account, or the
    /// store's scan for a fleet-wide line; `values`: the line's result is taken as a value
    /// (``BadgeStream/apply(_:seq:)``), not written.
    package func prepare(_ event: borrowing Event, for stream: inout BadgeStream, values: Bool) {
        if stream.needsStoreScan(event) {
            scan(event, for: &stream, values: values)
        } else if event.op != .expire, !event.isFleetWide {
            let id = event.accountID
            let hash = IDIndex.hash(id)
            if stream.needsLoad(id, hash: hash) { load(id, hash: hash, into: &stream) }
        }
    }

    /// Loads the accounts `ids` (whose hashes are `hashes`: a batch's, in order) that
    /// `stream` neither holds nor had read; each once.
    package func load(_ ids: [String], hashes: [Int], into stream: inout BadgeStream) {
        for k in ids.indices where stream.needsLoad(ids[k], hash: hashes[k]) {
            load(ids[k], hash: hashes[k], into: &stream)
        }
    }

    /// Loads account `id` into `stream` for the lines about to be applied, or records why it
    /// could not be read.
    private func load(_ id: String, hash: Int, into stream: inout BadgeStream) {
        do throws(StateFile.Failure) {
            stream.provide(id, hash: hash, try source.loadAccount(id, rules: stream.rules))
        } catch {
            stream.provideFailure(id, error)
        }
    }

    /// Reads the store for the fleet-wide line `event` (``BadgeStream/needsStoreScan(_:)``)
    /// and hands `stream` what it found (``StoreScan``).
    package func scan(_ event: borrowing Event, for stream: inout BadgeStream, values: Bool) {
        if event.op == .expire {
            let time = event.at ?? 0
            do throws(StateFile.Failure) {
                let stored = try source.accountsDue(through: time)
                for id in stream.accountsToLoad(expiringThrough: time, stored: stored) {
                    load(id, hash: IDIndex.hash(id), into: &stream)
                }
                stream.storeScan = .due(stored)
            } catch {
                stream.storeScan = .failed(error)
            }
            return
        }
        let rules = stream.rules
        do throws(StateFile.Failure) {
            if values {
                var owing: [(String, Account)] = []
                try source.forEachStoredAccount(rules: rules) { (id, account) throws(StateFile.Failure) in
                    if let account = stream.owing(id, account) { owing.append((id, account)) }
                }
                stream.storeScan = .owingAccounts(owing)
            } else {
                var owed = Deliveries()
                try source.forEachStoredAccount(rules: rules) { (id, account) throws(StateFile.Failure) in
                    stream.owed(id, account, into: &owed)
                }
                stream.storeScan = .owed(owed)
            }
        } catch {
            stream.storeScan = .failed(error)
        }
    }
}
