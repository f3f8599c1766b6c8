/// What `badgeflow report` collects while it replays a stream: the figures of the summary
/// table, one small summary per account, and full detail for the accounts the page shows.
///
/// The replay is the filter's own: each line is read by a ``LineAnalyzer`` (`--numbered`
/// prefixes and overlong lines as `filter` reads them) and applied by a ``BadgeStream``, and
/// the report reads the ``StreamResult`` values it returns (icon, decrement, badge updates, rule, error),
/// so every number on the page is one the filter writes. Memory stays bounded: pass 1 keeps
/// a few counters per account (and 4 bytes a line: whose it is); the accounts to show (those
/// named, the ``shownByTime`` whose icon stayed above zero the longest, and up to
/// ``groupCap`` of each ``Group`` support asks about) are known only at its end, so a second
/// pass over the same input collects their detail (at most ``rowsKept`` results each),
/// skipping the lines of the others. Every account of the input is in ``index``.
///
/// ```swift
/// var report = ReplayReport(rules: .builtIn, accounts: ["alice"])
/// for line in lines { report.summarize(line) }
/// report.beginDetail()
/// for line in lines { report.detail(line) }
/// let html = report.page(title: "yesterday")
/// ```
public struct ReplayReport {
    /// One account's running summary (pass 1).
    struct AccountSummary {
        var time: Double = 0
        var icon = 0
        var above: Double = 0
        var results = 0
        /// Results that were duplicates (`"duplicate":true`).
        var duplicates = 0
        /// Error lines whose `account` (else `device`) names this account.
        var errors = 0
        /// Its position in ``ReplayReport/ordinals`` (pass 2 skips lines by it).
        var ordinal: UInt32 = 0
        /// Devices that left (logout, unregister) while showing a number, with that number
        /// and the seq of the line, in the order they left (nil: none).
        var left: [Departure]? = nil
    }

    /// A device that left its account (logout, unregister): what it showed then, and when.
    public struct Departure: Sendable, Equatable {
        /// The device id.
        public var device: String
        /// The number it showed (its delivered number) when it left.
        public var badge: Int
        /// The seq of the line that removed it.
        public var seq: Int
        /// The account's event time then.
        public var time: Double
        /// `logout` or `unregister`.
        public var op: String
    }

    /// Counts of one key, with the first seq it was met at.
    public struct Tally: Sendable, Equatable {
        /// How many times.
        public var count: Int
        /// The seq of the first one.
        public var firstSeq: Int
    }

    /// One mark at the end of the replay: where, what set it and when.
    public struct MarkAge: Sendable, Equatable {
        /// The account that holds it.
        public var account: String
        /// Its path.
        public var path: String
        /// Its value (`dot` or the count).
        public var mark: String
        /// Seconds between the event that set it and the end of the replay.
        public var age: Double
        /// The rule (or op) that set it.
        public var origin: String
        /// The seq of the event that set it.
        public var seq: Int
    }

    /// One result of a shown account, as its table row and chart points.
    public struct Row: Sendable {
        /// The result's seq.
        public var seq: Int
        /// The account's event time after it, when the account has one.
        public var time: Double
        /// The op, or `error`.
        public var op: String
        /// The device the event names.
        public var device: String
        /// The event's path, if any.
        public var path: String
        /// The rule that routed a push (`null` text for a push no rule matched).
        public var rule: String
        /// What changed at the path (its display after the event), or the error.
        public var change: String
        /// The icon after the event (nil for an error line).
        public var icon: Int?
        /// The decrement's `by`, if any.
        public var decrement: Int?
        /// The result's badge updates.
        public var updates: [BadgeUpdate]
        /// A push no rule matched.
        public var unmatched: Bool
        /// The error code, for a rejected line.
        public var error: String?
        /// The devices whose delivered number changed with this result (a device that left
        /// the account: -1).
        public var delivered: [BadgeUpdate]
        /// The event's `id`, when it carries one.
        public var id: String? = nil
        /// The event was a duplicate of an earlier one's `id`: it changed nothing.
        public var duplicate = false
    }

    /// Everything the page shows of one account.
    public struct AccountDetail: Sendable {
        /// The account id.
        public var id: String
        /// Why it is shown: named with `--account`, or among the longest above zero.
        public var named: Bool
        /// Seconds its icon stayed above zero (event time).
        public var aboveZero: Double
        /// Its results (the last ``ReplayReport/rowsKept`` of them).
        public var rows: [Row] = []
        /// Results left out of ``rows`` (the oldest ones).
        public var omitted = 0
        /// All its results.
        public var results = 0
        /// Whether its events carry time (`at`); otherwise the chart's axis is seq.
        public var timed = false
        /// Its icon at the end.
        public var icon = 0
        /// Each device's delivered number at the end, by device id in byte order.
        public var devices: [BadgeUpdate] = []
        /// Its marks at the end.
        public var marks: [MarkAge] = []
        /// Devices that left during the replay (logout, unregister), with what they showed.
        public var departed: [Departure] = []
        /// Why it is shown: the selection groups it belongs to.
        public var reasons: [Reason] = []
        /// Duplicates and error lines over all its results.
        public var duplicates = 0
        /// Error lines naming it (its `account`, else its `device`).
        public var errors = 0
        /// Its own contribution settings at the end (`contribute` events), in byte order of path.
        public var settings: [(path: String, mode: Contribution)] = []
        var lastDelivered: [String: Int] = [:]
        var clock: Double = 0
    }

    /// The number of accounts shown for their time above zero (besides the named ones).
    public let shownByTime: Int
    /// The most results kept per shown account (the latest).
    public let rowsKept: Int
    /// The accounts named with `--account`, in the order given.
    public let named: [String]
    let rules: RuleSet
    let stamp: Bool
    let numbered: Bool
    /// The most payload shapes listed; others count as one more row.
    static let shapesKept = 50
    /// The longest-standing marks listed.
    static let marksKept = 20
    /// Accounts kept expanded while replaying (the rest compact, as `filter` keeps them).
    static let expanded = 65536

    private var session: FilterSession
    var summaries: [String: AccountSummary] = [:]
    /// Account ids by ordinal (``AccountSummary/ordinal``).
    private var ordinals: [String] = []
    /// Each physical line's account ordinal (pass 1), for pass 2 to skip the lines of
    /// accounts not shown without reading them: ``alwaysRead`` for a line that must be read
    /// (one that names no account, or a rejected line that names none).
    private var lineOwners: [UInt32] = []
    private static let alwaysRead = UInt32.max
    /// Pass 2 reads only these ordinals' lines (and ``alwaysRead`` ones).
    private var shownOrdinals: Set<UInt32> = []
    /// The earliest event time met (nil: no event carried one).
    public private(set) var startTime: Double? = nil
    /// The latest event time met.
    public private(set) var endTime: Double = 0
    /// Duplicates (results with `"duplicate":true`).
    public private(set) var duplicates = 0
    /// Every account of the input (those rejected lines name included), in byte order of id,
    /// with its end icon, devices and flags: the page's search index.
    public internal(set) var index: [IndexEntry] = []
    /// The accounts support asks about, by group, each capped at ``groupCap`` shown.
    public internal(set) var groups: [Group] = []
    /// The most accounts of each group shown in detail.
    public let groupCap: Int
    /// The most bytes of the page's account index; past it, the index holds the flagged and
    /// shown accounts only and the page says how to get any other.
    public let indexBudget: Int
    /// Whether the index holds every account of the input (else: the flagged and shown).
    public private(set) var indexComplete = true
    /// The page's index lines (made by ``finish()``).
    private(set) var indexLines = ""
    /// The accounts the page's index lists.
    public private(set) var indexEntries = 0
    /// The command that reports one account, as `before --account ID after` (set by the
    /// caller: its rules, options and inputs).
    public var command: (before: [String], after: [String]) = (["badgeflow", "report"], [])

    /// Non-blank lines (one result each).
    public private(set) var results = 0
    /// Error lines.
    public private(set) var errors = 0
    /// Decrements: results with one, and each account of a fleet-wide `expire` with one.
    public private(set) var decrements = 0
    /// The sum of the decrements' `by`.
    public private(set) var decrementTotal = 0
    /// Badge update entries across all results (a fleet-wide `expire`'s accounts' included).
    public private(set) var badgeUpdates = 0
    /// Push results whose `rule` is null.
    public private(set) var unmatched = 0
    /// Accounts at the end.
    public private(set) var accountCount = 0
    /// Devices at the end, over all accounts.
    public private(set) var deviceCount = 0
    /// Applied results by op.
    public private(set) var byOp: [String: Tally] = [:]
    /// Push results by payload kind.
    public private(set) var byKind: [String: Tally] = [:]
    /// Push results by rule (`null`: none matched).
    public private(set) var byRule: [String: Tally] = [:]
    /// Errors by code.
    public private(set) var errorsByCode: [String: Tally] = [:]
    /// Syncs by reason.
    public private(set) var syncs: [String: Tally] = [:]
    /// Pushes no rule matched, by payload shape (the keys present).
    public internal(set) var shapes: [String: Tally] = [:]
    /// Unmatched pushes whose shape was not listed (past the first 50 shapes).
    public internal(set) var otherShapes = 0
    /// The marks standing longest at the end, oldest first.
    public private(set) var oldestMarks: [MarkAge] = []
    /// The shown accounts, named ones first (then by time above zero, longest first).
    public private(set) var shown: [AccountDetail] = []
    private var shownIndex: [String: Int] = [:]
    /// The physical line number in the pass under way (blank lines counted).
    var passSeq = 0
    /// Lines read in pass 2 (the index into ``lineOwners``).
    private var passLine = 0
    let analyzer: LineAnalyzer
    private var detailing = false

    /// Starts a report.
    ///
    /// - Parameters:
    ///   - rules: the routing rules (as `filter --rules`).
    ///   - stamp: replay with `--stamp`.
    ///   - numbered: lines are `N<TAB>JSON` (`--numbered`).
    ///   - accounts: the accounts to show whatever their time (`--account`).
    ///   - shownByTime: how many accounts to show for their time above zero.
    ///   - rowsKept: the most results kept per shown account.
    ///   - groupCap: the most accounts of each group support asks about shown in detail.
    ///   - indexBudget: the most bytes of the page's account index.
    public init(
        rules: RuleSet, stamp: Bool = false, numbered: Bool = false, accounts: [String] = [],
        shownByTime: Int = 20, rowsKept: Int = 1000, groupCap: Int = 20, indexBudget: Int = 7_000_000
    ) {
        self.groupCap = max(0, groupCap)
        self.indexBudget = max(0, indexBudget)
        self.rules = rules
        self.stamp = stamp
        self.numbered = numbered
        var seen = Set<String>()
        named = accounts.filter { seen.insert($0).inserted }
        self.shownByTime = max(0, shownByTime)
        self.rowsKept = max(1, rowsKept)
        session = FilterSession(rules: rules, stamp: stamp, numbered: numbered)
        analyzer = LineAnalyzer(rules: rules, stamp: stamp)
    }

    // MARK: Pass 1

    /// Pass 1: replays what a `LineReader` produced (`overlongHead`: the reader's
    /// ``LineReader/overlongHead`` for an overlong line, whose `N<TAB>` it holds).
    public mutating func summarize(_ line: LineReader.Line, maxLineBytes: Int, overlongHead: [UInt8] = []) {
        passSeq += 1
        lineOwners.append(Self.alwaysRead)
        guard let (analyzed, seq) = analyze(line, maxLineBytes: maxLineBytes, overlongHead: overlongHead) else { return }
        // What a leaving device showed: read before the event removes it.
        var leaving: (device: String, badge: Int)? = nil
        if case .event(let e) = analyzed, e.op == .logout || e.op == .unregister,
            let d = session.stream.device(e.device, account: e.accountID)
        {
            leaving = (e.device, rules.icon == .tree ? d.delivered : d.payloadIcon)
        }
        guard let result = session.stream.apply(analyzed, seq: seq) else { return }
        results += 1
        switch result.body {
        case .rejected(let d):
            errors += 1
            Self.count(d.code.rawValue, seq: result.seq, in: &errorsByCode)
            if case .text(let bytes) = line, let owner = owner(of: bytes) {
                withSummary(owner.id) { $0.errors += 1 }
            }
        case .applied(let a):
            let event = a.event
            if a.duplicate {
                duplicates += 1
            }
            Self.count(event.op.rawValue, seq: result.seq, in: &byOp)
            if event.op == .push {
                if let kind = event.kind { Self.count(kind.rawValue, seq: result.seq, in: &byKind) }
                Self.count(event.rule ?? "null", seq: result.seq, in: &byRule)
                if event.rule == nil {
                    unmatched += 1
                    if case .text(let bytes) = line { noteShape(bytes, seq: result.seq) }
                }
            }
            if let fleet = a.fleet {
                // A fleet-wide `expire` names no account: each account it lists is counted
                // as that account's own result (its decrement, badge updates, icon and time).
                let time = event.at ?? 0
                for entry in fleet {
                    if let d = entry.outcome.decrement {
                        decrements += 1
                        decrementTotal += d.by
                    }
                    badgeUpdates += entry.badgeUpdates.count
                    withSummary(entry.account, owning: false) { $0.expire(icon: entry.icon, at: time) }
                }
                noteTime(event.at)
            } else {
                if let d = a.outcome.decrement {
                    decrements += 1
                    decrementTotal += d.by
                }
                badgeUpdates += a.badgeUpdates.count
                if let s = a.sync { Self.count(s.rawValue, seq: result.seq, in: &syncs) }
                let time = event.at
                let duplicate = a.duplicate
                let named = event.account != nil || !event.device.isEmpty
                withSummary(event.accountID, owning: named) { s in
                    s.add(icon: a.icon, at: time)
                    if duplicate { s.duplicates += 1 }
                    if let leaving, !duplicate, leaving.badge != 0 {
                        s.left =
                            (s.left ?? []) + [
                                Departure(
                                    device: leaving.device, badge: leaving.badge, seq: result.seq, time: s.time,
                                    op: event.op.rawValue)
                            ]
                    }
                }
                noteTime(time)
            }
        }
        if session.stream.residentCount > Self.expanded + Self.expanded / 4 {
            session.stream.compact(keeping: Self.expanded)
        }
    }

    /// Updates account `id`'s summary (made on first use); with `owning`, the line under way
    /// is recorded as that account's (pass 2 reads it only when the account is shown).
    private mutating func withSummary(_ id: String, owning: Bool = true, _ body: (inout AccountSummary) -> Void) {
        let next = UInt32(truncatingIfNeeded: ordinals.count)
        let ordinal: UInt32
        if let i = summaries.index(forKey: id) {
            body(&summaries.values[i])
            ordinal = summaries.values[i].ordinal
        } else {
            var s = AccountSummary()
            s.ordinal = next
            body(&s)
            summaries[id] = s
            ordinals.append(id)
            ordinal = next
        }
        if owning, !lineOwners.isEmpty { lineOwners[lineOwners.count - 1] = ordinal }
    }

    private mutating func noteTime(_ time: Double?) {
        guard let time else { return }
        if time > endTime { endTime = time }
        if startTime.map({ time < $0 }) ?? true { startTime = time }
    }

    static func count(_ key: String, seq: Int, in table: inout [String: Tally]) {
        if let i = table.index(forKey: key) {
            table.values[i].count += 1
        } else {
            table[key] = Tally(count: 1, firstSeq: seq)
        }
    }

    /// `aps{alert,sound} type`: the payload's keys, `aps`'s own in braces, in document order.
    static func shape(of payload: JSONValue) -> String {
        guard case .object(let members) = payload else { return payload.typeName }
        var parts: [String] = []
        for (key, value) in members {
            if key == "aps", case .object(let aps) = value {
                parts.append("aps{" + aps.map(\.0).joined(separator: ",") + "}")
            } else {
                parts.append(key)
            }
        }
        return parts.joined(separator: " ")
    }

    /// Ends pass 1: takes the end-of-run figures and chooses the accounts to show. Call
    /// ``detail(_:maxLineBytes:overlongHead:)`` with the same input next (unless ``shown`` is empty).
    public mutating func beginDetail() {
        let stream = session.stream
        accountCount = stream.accountCount
        deviceCount = 0
        var marks: [MarkAge] = []
        var ends: [String: IndexEntry] = [:]
        ends.reserveCapacity(stream.accountCount)
        for id in stream.accountIDs {
            guard let account = try? stream.account(id) else { continue }
            deviceCount += account.devices.count
            ends[id] = endEntry(id, account)
            for record in account.tree.records {
                let age = Self.age(record, end: endTime)
                if marks.count == Self.marksKept, let last = marks.last, !Self.older(age, id, record.path, than: last) {
                    continue
                }
                marks.append(Self.markAge(record, account: id, end: endTime))
                marks.sort { Self.older($0.age, $0.account, $0.path, than: $1) }
                if marks.count > Self.marksKept { marks.removeLast() }
            }
        }
        oldestMarks = marks
        buildIndex(ends)
        // Above zero until the end of the replay (accounts only error lines name have no result).
        var ranked: [(id: String, above: Double, results: Int)] = []
        ranked.reserveCapacity(summaries.count)
        for (id, s) in summaries where s.results > 0 {
            let above = s.above + (s.icon > 0 ? max(0, endTime - s.time) : 0)
            ranked.append((id, above, s.results))
        }
        ranked.sort {
            $0.above != $1.above
                ? $0.above > $1.above
                : $0.results != $1.results ? $0.results > $1.results : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8)
        }
        shown = []
        for id in named {
            let s = summaries[id]
            let above = s.map { $0.above + ($0.icon > 0 ? max(0, endTime - $0.time) : 0) } ?? 0
            shown.append(AccountDetail(id: id, named: true, aboveZero: above))
        }
        shownIndex = [:]
        for (i, d) in shown.enumerated() { shownIndex[d.id] = i }
        func add(_ id: String, _ reason: Reason) {
            if let i = shownIndex[id] {
                if !shown[i].reasons.contains(reason) { shown[i].reasons.append(reason) }
                return
            }
            let s = summaries[id]
            let above = s.map { $0.above + ($0.icon > 0 ? max(0, endTime - $0.time) : 0) } ?? 0
            var d = AccountDetail(id: id, named: false, aboveZero: above)
            d.reasons = [reason]
            shownIndex[id] = shown.count
            shown.append(d)
        }
        for i in shown.indices { shown[i].reasons = [.named] }
        for r in ranked.prefix(shownByTime) { add(r.id, .longest) }
        groups = selectGroups()
        for g in groups { for id in g.shown { add(id, g.reason) } }
        shownOrdinals = []
        for d in shown {
            if let o = summaries[d.id]?.ordinal { shownOrdinals.insert(o) }
        }
        summaries = [:]
        session = FilterSession(rules: rules, stamp: stamp, numbered: numbered)
        passSeq = 0
        passLine = 0
        detailing = true
    }

    private static func age(_ record: MarkRecord, end: Double) -> Double {
        max(0, end - (record.source?.at ?? 0))
    }

    private static func markAge(_ record: MarkRecord, account: String, end: Double) -> MarkAge {
        MarkAge(
            account: account, path: record.path, mark: record.mark.description, age: age(record, end: end),
            origin: record.source?.origin ?? "", seq: record.source?.seq ?? 0)
    }

    /// Older first; ties by account then path, in byte order.
    private static func older(_ age: Double, _ account: String, _ path: String, than other: MarkAge) -> Bool {
        if age != other.age { return age > other.age }
        if account != other.account { return account.utf8.lexicographicallyPrecedes(other.account.utf8) }
        return path.utf8.lexicographicallyPrecedes(other.path.utf8)
    }

    // MARK: Pass 2

    /// Pass 2: replays what a `LineReader` produced again, keeping the shown accounts' results
    /// (`overlongHead` as for ``summarize(_:maxLineBytes:overlongHead:)``).
    public mutating func detail(_ line: LineReader.Line, maxLineBytes: Int, overlongHead: [UInt8] = []) {
        guard detailing else { return }
        passSeq += 1
        passLine += 1
        // A line of an account not shown is not read again (accounts share no state).
        if passLine <= lineOwners.count {
            let owner = lineOwners[passLine - 1]
            if owner != Self.alwaysRead && !shownOrdinals.contains(owner) { return }
        }
        guard let result = detailResult(of: line, maxLineBytes: maxLineBytes, overlongHead: overlongHead) else { return }
        switch result.body {
        case .rejected(let d):
            // An error line names no account; the line's own `account` (or `device`) says whose it was.
            guard case .text(let bytes) = line, let owner = owner(of: bytes), let i = shownIndex[owner.id] else { break }
            // Its marker sits at the line's own time (a rejected line moves no clock).
            if owner.at != nil { shown[i].timed = true }
            shown[i].errors += 1
            let row = Row(
                seq: result.seq, time: owner.at ?? shown[i].clock, op: "error", device: "", path: d.at, rule: "",
                change: d.code.rawValue + ": " + d.message, icon: nil, decrement: nil, updates: [], unmatched: false,
                error: d.code.rawValue, delivered: [])
            append(row, to: i)
        case .applied(let a):
            if let fleet = a.fleet {
                // A fleet-wide `expire`: a row for each shown account it lists.
                for entry in fleet {
                    if let i = shownIndex[entry.account] { record(entry, of: a.event, seq: result.seq, at: i) }
                }
            } else {
                let id = a.event.accountID
                if let i = shownIndex[id] { record(a, seq: result.seq, account: id, at: i) }
            }
        }
        if session.stream.residentCount > Self.expanded + Self.expanded / 4 {
            session.stream.compact(keeping: Self.expanded)
        }
    }

    /// The line's result, or nil when it is blank or an event of an account not shown:
    /// accounts do not share state (a run split by account gives the same results), so those
    /// are read but not applied, and the second pass holds the shown accounts only. An event
    /// that names neither an account nor a device is applied whatever it is (it may act on
    /// every account).
    private mutating func detailResult(of line: LineReader.Line, maxLineBytes: Int, overlongHead: [UInt8]) -> StreamResult? {
        guard let (analyzed, seq) = analyze(line, maxLineBytes: maxLineBytes, overlongHead: overlongHead) else { return nil }
        if case .event(let event) = analyzed, shownIndex[event.accountID] == nil,
            event.account != nil || !event.device.isEmpty
        {
            return nil
        }
        return session.stream.apply(analyzed, seq: seq)
    }

    private mutating func record(_ a: StreamResult.Applied, seq: Int, account id: String, at i: Int) {
        let event = a.event
        if let at = event.at {
            shown[i].clock = at
            shown[i].timed = true
        }
        let change =
            a.duplicate
            ? "duplicate of an earlier id: changed nothing" : Self.change(a.outcome, path: event.path, expired: a.expired)
        var row = Row(
            seq: seq, time: shown[i].clock, op: event.op.rawValue, device: event.device, path: event.path ?? "",
            rule: event.op == .push ? (event.rule ?? "null") : "", change: change, icon: a.icon,
            decrement: a.outcome.decrement?.by, updates: a.badgeUpdates, unmatched: event.op == .push && event.rule == nil,
            error: nil, delivered: delivered(account: id, at: i, seq: seq, op: event.op.rawValue))
        row.id = event.id
        row.duplicate = a.duplicate
        if a.duplicate { shown[i].duplicates += 1 }
        shown[i].icon = a.icon
        append(row, to: i)
    }

    /// One account's part of a fleet-wide `expire`, as that account's row: its clock moves
    /// up to the expire's time, as the engine's does.
    private mutating func record(_ entry: ExpiredAccount, of event: Event, seq: Int, at i: Int) {
        if let at = event.at {
            shown[i].clock = max(shown[i].clock, at)
            shown[i].timed = true
        }
        let row = Row(
            seq: seq, time: shown[i].clock, op: event.op.rawValue, device: "", path: "", rule: "",
            change: Self.change(entry.outcome, path: nil, expired: entry.expired), icon: entry.icon,
            decrement: entry.outcome.decrement?.by, updates: entry.badgeUpdates, unmatched: false, error: nil,
            delivered: delivered(account: entry.account, at: i, seq: seq, op: event.op.rawValue))
        shown[i].icon = entry.icon
        append(row, to: i)
    }

    /// What a result changed, as the table's text: the event path's display, or how many
    /// nodes changed, then the marks that expired.
    private static func change(_ outcome: Outcome, path: String?, expired: [String]) -> String {
        var change = ""
        if let path, let c = outcome.changes.first(where: { $0.path == path }) {
            change = c.show ? "shows \(c.display)" : "hidden"
        } else if !outcome.changes.isEmpty {
            change = "\(outcome.changes.count) node\(outcome.changes.count == 1 ? "" : "s") changed"
        }
        if !expired.isEmpty { change += (change.isEmpty ? "" : "; ") + "expired " + expired.joined(separator: ", ") }
        return change
    }

    /// The devices of account `id` whose number changed since the last row of shown account
    /// `i` (a device that left: -1), in byte order.
    private mutating func delivered(account id: String, at i: Int, seq: Int, op: String) -> [BadgeUpdate] {
        // Each device's number as the engine now holds it (whatever the rules for delivering are).
        var delivered: [BadgeUpdate] = []
        let devices = session.stream.table[id]?.devices ?? [:]
        for (device, state) in devices {
            let n = rules.icon == .tree ? state.delivered : state.payloadIcon
            if shown[i].lastDelivered[device] != n {
                shown[i].lastDelivered[device] = n
                delivered.append(BadgeUpdate(device: device, badge: n))
            }
        }
        for (device, last) in shown[i].lastDelivered where devices[device] == nil && last != -1 {
            shown[i].lastDelivered[device] = -1
            delivered.append(BadgeUpdate(device: device, badge: -1))
            shown[i].departed.append(Departure(device: device, badge: last, seq: seq, time: shown[i].clock, op: op))
        }
        delivered.sort { $0.device.utf8.lexicographicallyPrecedes($1.device.utf8) }
        return delivered
    }

    private mutating func append(_ row: Row, to i: Int) {
        shown[i].results += 1
        shown[i].rows.append(row)
        // Dropped in chunks: the oldest half of what is kept, not one row at a time.
        if shown[i].rows.count >= 2 * rowsKept {
            let drop = shown[i].rows.count - rowsKept
            shown[i].rows.removeFirst(drop)
            shown[i].omitted += drop
        }
    }

    /// Ends pass 2: each shown account's devices and marks at the end.
    public mutating func finish() {
        let stream = session.stream
        for i in shown.indices {
            if shown[i].rows.count > rowsKept {
                let drop = shown[i].rows.count - rowsKept
                shown[i].rows.removeFirst(drop)
                shown[i].omitted += drop
            }
            guard let account = try? stream.account(shown[i].id) else { continue }
            shown[i].devices = account.devices.map {
                BadgeUpdate(device: $0.key, badge: rules.icon == .tree ? $0.value.delivered : $0.value.payloadIcon)
            }.sorted { $0.device.utf8.lexicographicallyPrecedes($1.device.utf8) }
            shown[i].icon = rules.icon == .tree ? account.tree.total : shown[i].icon
            shown[i].marks = account.tree.records.map { Self.markAge($0, account: shown[i].id, end: endTime) }
                .sorted { Self.older($0.age, $0.account, $0.path, than: $1) }
            shown[i].settings = account.contributions.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                (path: $0.key, mode: $0.value)
            }
        }
        var made = indexText(complete: true)
        indexComplete = made.text.utf8.count <= indexBudget
        if !indexComplete { made = indexText(complete: false) }
        (indexLines, indexEntries) = made
        detailing = false
    }
}

extension ReplayReport.AccountSummary {
    /// Adds the account's part of a fleet-wide `expire` at `at`: its clock moves up to `at`
    /// if behind (never back), as the engine's does.
    mutating func expire(icon new: Int, at: Double) {
        add(icon: new, at: max(at, time))
    }

    /// Adds one result: the icon held since the last event counts as above zero until `at`.
    mutating func add(icon new: Int, at: Double?) {
        if let at, at > time {
            if icon > 0 { above += at - time }
            time = at
        } else if let at {
            time = at
        }
        icon = new
        results += 1
    }
}
