/// What `badgeflow report` collects while it replays a stream: the figures of the summary
/// table, one small summary per account, and full detail for the accounts the page shows.
///
/// The replay is the filter's own: each line is read by a ``LineAnalyzer`` (`--numbered`
/// prefixes and overlong lines as `filter` reads them) and applied by a ``BadgeStream``, and
/// the report reads the ``StreamResult`` values it returns (icon, decrement, badge updates, rule, error),
/// so every number on the page is one the filter writes. Memory stays bounded: pass 1 keeps
/// a few counters per account; the accounts to show (those named, and the
/// ``shownByTime`` whose icon stayed above zero the longest) are known only at its end, so a
/// second pass over the same input collects their detail (at most ``rowsKept`` results
/// each).
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
    private var summaries: [String: AccountSummary] = [:]
    /// The latest event time met.
    public private(set) var endTime: Double = 0

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
    public private(set) var shapes: [String: Tally] = [:]
    /// Unmatched pushes whose shape was not listed (past the first 50 shapes).
    public private(set) var otherShapes = 0
    /// The marks standing longest at the end, oldest first.
    public private(set) var oldestMarks: [MarkAge] = []
    /// The shown accounts, named ones first (then by time above zero, longest first).
    public private(set) var shown: [AccountDetail] = []
    private var shownIndex: [String: Int] = [:]
    /// The physical line number in the pass under way (blank lines counted).
    private var passSeq = 0
    private let analyzer: LineAnalyzer
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
    public init(
        rules: RuleSet, stamp: Bool = false, numbered: Bool = false, accounts: [String] = [],
        shownByTime: Int = 20, rowsKept: Int = 1000
    ) {
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

    /// Pass 1: replays one line (as text, without its newline).
    public mutating func summarize(_ line: String) {
        var line = line
        line.withUTF8 { summarize(.text(UnsafeRawBufferPointer($0)), maxLineBytes: Int.max) }
    }

    /// Pass 1: replays what a `LineReader` produced (`overlongHead`: the reader's
    /// ``LineReader/overlongHead`` for an overlong line, whose `N<TAB>` it holds).
    public mutating func summarize(_ line: LineReader.Line, maxLineBytes: Int, overlongHead: [UInt8] = []) {
        passSeq += 1
        guard let (analyzed, seq) = analyze(line, maxLineBytes: maxLineBytes, overlongHead: overlongHead),
            let result = session.stream.apply(analyzed, seq: seq)
        else { return }
        results += 1
        switch result.body {
        case .rejected(let d):
            errors += 1
            Self.count(d.code.rawValue, seq: result.seq, in: &errorsByCode)
        case .applied(let a):
            let event = a.event
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
                    summaries[entry.account, default: AccountSummary()].expire(icon: entry.icon, at: time)
                }
                if time > endTime { endTime = time }
            } else {
                if let d = a.outcome.decrement {
                    decrements += 1
                    decrementTotal += d.by
                }
                badgeUpdates += a.badgeUpdates.count
                if let s = a.sync { Self.count(s.rawValue, seq: result.seq, in: &syncs) }
                let time = event.at
                summaries[event.accountID, default: AccountSummary()].add(icon: a.icon, at: time)
                if let time, time > endTime { endTime = time }
            }
        }
        if session.stream.residentCount > Self.expanded + Self.expanded / 4 {
            session.stream.compact(keeping: Self.expanded)
        }
    }

    private static func count(_ key: String, seq: Int, in table: inout [String: Tally]) {
        if let i = table.index(forKey: key) {
            table.values[i].count += 1
        } else {
            table[key] = Tally(count: 1, firstSeq: seq)
        }
    }

    /// Records the shape (keys present) of an unmatched push's payload.
    private mutating func noteShape(_ bytes: UnsafeRawBufferPointer, seq: Int) {
        var text = String(decoding: bytes, as: UTF8.self)
        if numbered, let tab = text.utf8.firstIndex(of: UInt8(ascii: "\t")) {
            text = String(text[text.utf8.index(after: tab)...])
        }
        guard let value = try? JSONValue.parse(text) else { return }
        let payload = value["aps"] == nil ? (value["payload"] ?? value) : value
        let shape = Self.shape(of: payload)
        if shapes[shape] != nil || shapes.count < Self.shapesKept {
            Self.count(shape, seq: seq, in: &shapes)
        } else {
            otherShapes += 1
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
        for id in stream.accountIDs {
            guard let account = try? stream.account(id) else { continue }
            deviceCount += account.devices.count
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
        // Above zero until the end of the replay.
        var ranked: [(id: String, above: Double, results: Int)] = []
        ranked.reserveCapacity(summaries.count)
        for (id, s) in summaries {
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
        let namedSet = Set(named)
        for r in ranked.prefix(shownByTime) where !namedSet.contains(r.id) {
            shown.append(AccountDetail(id: r.id, named: false, aboveZero: r.above))
        }
        shownIndex = [:]
        for (i, d) in shown.enumerated() { shownIndex[d.id] = i }
        summaries = [:]
        session = FilterSession(rules: rules, stamp: stamp, numbered: numbered)
        passSeq = 0
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

    /// Pass 2: replays one line (as text, without its newline).
    public mutating func detail(_ line: String) {
        var line = line
        line.withUTF8 { detail(.text(UnsafeRawBufferPointer($0)), maxLineBytes: Int.max) }
    }

    /// Pass 2: replays what a `LineReader` produced again, keeping the shown accounts' results
    /// (`overlongHead` as for ``summarize(_:maxLineBytes:overlongHead:)``).
    public mutating func detail(_ line: LineReader.Line, maxLineBytes: Int, overlongHead: [UInt8] = []) {
        guard detailing else { return }
        passSeq += 1
        guard let result = detailResult(of: line, maxLineBytes: maxLineBytes, overlongHead: overlongHead) else { return }
        switch result.body {
        case .rejected(let d):
            // An error line names no account; the line's own `account` (or `device`) says whose it was.
            guard case .text(let bytes) = line, let id = owner(of: bytes), let i = shownIndex[id] else { break }
            let row = Row(
                seq: result.seq, time: shown[i].clock, op: "error", device: "", path: d.at, rule: "",
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

    /// The line analysed, with its seq, as `filter` reads it (`--numbered` prefixes and
    /// overlong lines included); nil for a blank line.
    private func analyze(_ line: LineReader.Line, maxLineBytes: Int, overlongHead: [UInt8]) -> (LineResult, Int)? {
        func tooLong(_ n: Int) -> LineResult {
            .rejected(.error(.lineTooLong, "line is \(n) bytes, more than the \(maxLineBytes) bytes a line may have", at: ""))
        }
        switch line {
        case .text(let bytes):
            guard numbered else { return (analyzer.analyze(bytes), passSeq) }
            guard let (n, rest) = LineNumber.split(bytes) else {
                return LineNumber.isBlank(bytes) ? nil : (.rejected(LineNumber.invalid), passSeq)
            }
            let seq = n > 0 ? n : passSeq
            return rest.count > maxLineBytes ? (tooLong(rest.count), seq) : (analyzer.analyze(rest), seq)
        case .overlong(let count):
            guard numbered, let (n, rest) = overlongHead.withUnsafeBytes({ LineNumber.split($0) }) else {
                return (tooLong(count), passSeq)
            }
            return (tooLong(count - (overlongHead.count - rest.count)), n > 0 ? n : passSeq)
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
        let change = Self.change(a.outcome, path: event.path, expired: a.expired)
        let row = Row(
            seq: seq, time: shown[i].clock, op: event.op.rawValue, device: event.device, path: event.path ?? "",
            rule: event.op == .push ? (event.rule ?? "null") : "", change: change, icon: a.icon,
            decrement: a.outcome.decrement?.by, updates: a.badgeUpdates, unmatched: event.op == .push && event.rule == nil,
            error: nil, delivered: delivered(account: id, at: i))
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
            delivered: delivered(account: entry.account, at: i))
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
    private mutating func delivered(account id: String, at i: Int) -> [BadgeUpdate] {
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
        for device in shown[i].lastDelivered.keys where devices[device] == nil && shown[i].lastDelivered[device] != -1 {
            shown[i].lastDelivered[device] = -1
            delivered.append(BadgeUpdate(device: device, badge: -1))
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

    /// The `account` (else `device`, else `""`) a rejected line names, when it parses.
    private func owner(of bytes: UnsafeRawBufferPointer) -> String? {
        var text = String(decoding: bytes, as: UTF8.self)
        if numbered, let tab = text.utf8.firstIndex(of: UInt8(ascii: "\t")) {
            text = String(text[text.utf8.index(after: tab)...])
        }
        guard let value = try? JSONValue.parse(text), case .object = value else { return nil }
        if case .string(let a)? = value["account"] { return a }
        if case .string(let d)? = value["device"] { return d }
        // A fleet-wide `expire` acts on no one account: a rejected one that names none is nobody's.
        if case .string("expire")? = value["op"], value["aps"] == nil { return nil }
        return value["account"] == nil && value["device"] == nil ? "" : nil
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
