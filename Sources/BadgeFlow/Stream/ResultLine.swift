/// Writes result lines: the filter's output format, keys in a fixed order: seq, op, device,
/// account, kind, rule, path, page, expired, duplicate, changes, decrement, icon, badgeUpdates, sync,
/// payload, warnings, tree, explain.
enum ResultLine {
    static func error(_ d: Diagnostic, seq: Int, into w: inout JSONWriter) {
        w.fragment(#"{"seq":"#); w.bareInt(seq)
        w.fragment(#","error":"#)
        diagnostic(d, into: &w)
        w.fragment("}\n")
    }

    static func diagnostic(_ d: Diagnostic, into w: inout JSONWriter) {
        w.beginObject()
        w.key("code"); w.string(d.code.rawValue)
        w.key("message"); w.string(d.message)
        w.key("at"); w.string(d.at)
        w.endObject()
    }

    /// The states of `change`'s nodes, read from `tree` where they are (no ``BadgeState``
    /// is made), as array elements after `first` (whether none was written before).
    /// `tree` is `inout` only so that it is read in place: a borrowed tree read out of the
    /// accounts' dictionary is a copy (a retain and release of each of its parts).
    static func states(of change: BadgeTree.Change, in tree: inout BadgeTree, first: Bool, into w: inout JSONWriter) {
        var first = first
        tree.forEachState(of: change) { path, count, show, display in
            w.writeRun(atMost: stateBound(pathBytes: path.utf8.count, display: display)) { o in
                state(path: path, count: count, show: show, display: display, first: first, into: &o)
            }
            first = false
        }
    }

    /// The most bytes `state(_:first:into:)` writes for `s`:
    /// ,{"path": · path · ,"count": · digits · ,"show":false,"display": · display · }
    static func stateBound(_ s: BadgeState) -> Int {
        stateBound(pathBytes: s.path.utf8.count, display: s.display)
    }

    private static func stateBound(pathBytes: Int, display d: BadgeDisplay) -> Int {
        let display: Int
        switch d {
        case .number: display = JSONWriter.maxDecimalBytes + 3
        case .dot: display = 5
        case .hidden: display = 8
        case .custom(let name): display = JSONWriter.quotedBound(7 + name.utf8.count)
        }
        return 10 + JSONWriter.quotedBound(pathBytes) + 9 + JSONWriter.maxDecimalBytes + 24 + display + 1
    }

    /// One node's state as `{"path":…,"count":…,"show":…,"display":…}` (an array element),
    /// written through the cursor of the run `states(_:into:)` reserved.
    @inline(__always)
    static func state(_ s: BadgeState, first: Bool, into o: inout JSONWriter.Cursor) {
        state(path: s.path, count: s.count, show: s.show, display: s.display, first: first, into: &o)
    }

    @inline(__always)
    private static func state(
        path: borrowing String, count: Int, show: Bool, display: BadgeDisplay, first: Bool, into o: inout JSONWriter.Cursor
    ) {
        o.fragment(first ? #"{"path":"# : #",{"path":"#)
        o.quoted(borrowing: path)
        o.fragment(#","count":"#)
        o.decimal(count)
        o.fragment(show ? #","show":true,"display":"# : #","show":false,"display":"#)
        switch display {
        case .number(let n, let max):
            o.byte(UInt8(ascii: "\""))
            o.decimal(n > max ? max : n)
            if n > max { o.byte(UInt8(ascii: "+")) }
            o.byte(UInt8(ascii: "\""))
        case .dot: o.fragment(#""dot""#)
        case .hidden: o.fragment(#""hidden""#)
        case .custom(let name): o.quoted("custom:" + name)
        }
        o.byte(UInt8(ascii: "}"))
    }

    static func event(_ a: borrowing StreamResult.Applied, seq: Int, into w: inout JSONWriter) {
        event(a.event, a.effects, seq: seq, into: &w)
    }

    /// The result line of `e`, applied with `a`; both borrowed where they are. `a.change`
    /// must be empty (a result's are made into states before it leaves the stream).
    static func event(_ e: borrowing Event, _ a: borrowing StreamResult.Effects, seq: Int, into w: inout JSONWriter) {
        if let fleet = a.fleet {
            if e.op == .reconcile {
                reconcile(fleet, seq: seq, into: &w)
            } else {
                expire(fleet, at: e.atText ?? "0", seq: seq, into: &w)
            }
            return
        }
        head(e, a, seq: seq, into: &w)
        states(a.outcome.changes, into: &w)
        tail(e, a, into: &w)
    }

    /// The result line of `e`, applied with `a`, whose `change` is read from `tree`, the
    /// account's, as applying the event left it (not changed here).
    static func event(
        _ e: borrowing Event, _ a: borrowing StreamResult.Effects, tree: inout BadgeTree, seq: Int,
        into w: inout JSONWriter
    ) {
        head(e, a, seq: seq, into: &w)
        states(a.outcome.changes, into: &w)
        states(of: a.change, in: &tree, first: a.outcome.changes.isEmpty, into: &w)
        tail(e, a, into: &w)
    }

    /// seq, op, device, account, kind, rule, path, page, expired, duplicate and `"changes":[`.
    private static func head(_ e: borrowing Event, _ a: borrowing StreamResult.Effects, seq: Int, into w: inout JSONWriter) {
        // The head in one reserved run: seq, op, device, kind, rule, path, page.
        // Longest fixed text: {"seq": 7, the op fragment 36, the kind fragment 33, ,"path": 8,
        // ,"page": 8, ,"changes":[ 12.
        let strings =
            JSONWriter.quotedBound(e.device.utf8.count) + JSONWriter.quotedBound(e.rule?.utf8.count ?? 2)
            + (e.account.map { 11 + JSONWriter.quotedBound($0.utf8.count) } ?? 0)
            + JSONWriter.quotedBound(e.path?.utf8.count ?? 0) + JSONWriter.quotedBound(e.page?.utf8.count ?? 0)
        w.writeRun(atMost: 7 + JSONWriter.maxDecimalBytes + 36 + 33 + 8 + 8 + 12 + strings) { o in
            o.fragment(#"{"seq":"#); o.decimal(seq)
            o.fragment(e.op.resultFragment)
            o.quoted(borrowing: e.device)
            if let account = e.account {
                o.fragment(#","account":"#); o.quoted(borrowing: account)
            }
            if e.op == .push {
                o.fragment(kindFragment(e.kind ?? .alert))
                if let rule = e.rule { o.quoted(borrowing: rule) } else { o.fragment("null") }
            }
            if let path = e.path {
                o.fragment(#","path":"#); o.quoted(borrowing: path)
            }
            if let page = e.page {
                o.fragment(#","page":"#); o.quoted(borrowing: page)
            }
            if !a.hasExpired { o.fragment(a.duplicate ? #","duplicate":true,"changes":["# : #","changes":["#) }
        }
        if a.hasExpired {
            w.fragment(#","expired":["#)
            for (i, p) in a.expired.enumerated() {
                if i > 0 { w.fragment(",") }
                w.bareString(p)
            }
            w.fragment(#"],"changes":["#)
        }
    }

    /// `,"decrement":{"by","paths"}` when there is one, `,"icon":N`, and `,"badgeUpdates":[…]`
    /// when a device is owed a number: what an event's result and each account of a
    /// fleet-wide `expire` write alike.
    static func decrementIconAndUpdates(
        _ decrement: Decrement?, icon: Int, _ updates: [BadgeUpdate], into w: inout JSONWriter
    ) {
        if let d = decrement {
            w.fragment(#","decrement":{"by":"#); w.bareInt(d.by)
            w.fragment(#","paths":["#)
            for (i, p) in d.paths.enumerated() {
                if i > 0 { w.fragment(",") }
                w.bareString(p)
            }
            w.fragment("]}")
        }
        w.fragment(#","icon":"#); w.bareInt(icon)
        if !updates.isEmpty {
            w.fragment(#","badgeUpdates":["#)
            for (i, u) in updates.enumerated() {
                w.fragment(i == 0 ? #"{"device":"# : #",{"device":"#)
                w.bareString(u.device)
                w.fragment(#","badge":"#); w.bareInt(u.badge)
                w.fragment("}")
            }
            w.fragment("]")
        }
    }

    /// `]`, decrement, icon, badgeUpdates, sync, payload, warnings, tree, explain and the end.
    private static func tail(_ e: borrowing Event, _ a: borrowing StreamResult.Effects, into w: inout JSONWriter) {
        // The usual tail (no decrement, updates, payload, warnings, tree or explain): icon,
        // sync and the line's end in one reserved run. The longest sync fragment is 40 bytes.
        if a.outcome.decrement == nil && a.badgeUpdates.isEmpty && (e.stamp == nil || a.duplicate) && e.warnings.isEmpty
            && a.tree == nil && a.explain == nil
        {
            w.writeRun(atMost: 9 + JSONWriter.maxDecimalBytes + 40 + 2) { o in
                o.fragment(#"],"icon":"#)
                o.decimal(a.icon)
                if let sync = a.sync { o.fragment(syncFragment(sync)) }
                o.fragment("}\n")
            }
            return
        }
        w.fragment("]")
        decrementIconAndUpdates(a.outcome.decrement, icon: a.icon, a.badgeUpdates, into: &w)
        if let sync = a.sync {
            w.fragment(syncFragment(sync))
        }
        if !a.duplicate, let stamp = e.stamp {
            w.fragment(#","payload":"#)
            stamp.write(a.icon, into: &w)
        }
        if !e.warnings.isEmpty {
            w.key("warnings")
            w.beginArray()
            for d in e.warnings { diagnostic(d, into: &w) }
            w.endArray()
        }
        if let tree = a.tree {
            w.key("tree")
            w.fragment("[")
            states(tree, into: &w)
            w.fragment("]")
        }
        if let explain = a.explain {
            w.key("explain")
            w.beginArray()
            for r in explain { record(r, into: &w) }
            w.endArray()
        }
        w.fragment("}\n")
    }

    /// One explained mark: `{"path","count","seq","rule","at","expires"}`; count 0 for a dot,
    /// `seq`, `rule` and `at` null when nothing recorded what set it, `expires` null for never.
    static func record(_ r: MarkRecord, into w: inout JSONWriter) {
        w.beginObject()
        w.key("path"); w.string(r.path)
        w.key("count")
        switch r.mark {
        case .dot: w.int(0)
        case .count(let n): w.int(n)
        }
        w.key("seq")
        if let s = r.source { w.int(s.seq) } else { w.null() }
        w.key("rule")
        if let s = r.source { w.string(s.origin) } else { w.null() }
        w.key("at")
        if let s = r.source { time(s.at, into: &w) } else { w.null() }
        w.key("expires")
        if let e = r.expires { time(e, into: &w) } else { w.null() }
        w.endObject()
    }

    /// A time in seconds: an integer when it is whole, else a decimal.
    private static func time(_ t: Double, into w: inout JSONWriter) {
        if t == t.rounded() && abs(t) < 1e15 { w.int(Int64(t)) } else { w.double(t) }
    }

    private static func kindFragment(_ kind: PayloadKind) -> StaticString {
        switch kind {
        case .alert: return #","kind":"alert","rule":"#
        case .background: return #","kind":"background","rule":"#
        case .voip: return #","kind":"voip","rule":"#
        case .liveActivity: return #","kind":"live-activity","rule":"#
        case .badgeOnly: return #","kind":"badge-only","rule":"#
        case .noAction: return #","kind":"none","rule":"#
        }
    }

    private static func syncFragment(_ reason: SyncPolicy.Reason) -> StaticString {
        switch reason {
        case .push: return #","sync":{"reason":"push"}"#
        case .firstAppearance: return #","sync":{"reason":"first-appearance"}"#
        case .returned: return #","sync":{"reason":"returned"}"#
        case .interval: return #","sync":{"reason":"interval"}"#
        }
    }
}
