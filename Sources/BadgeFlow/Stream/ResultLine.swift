/// Writes result lines: the output format of SPEC §4, keys in a fixed order.
enum ResultLine {
    static func error(_ d: Diagnostic, seq: Int, into w: inout JSONWriter) {
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("error")
        diagnostic(d, into: &w)
        w.endObject()
        w.newline()
    }

    static func diagnostic(_ d: Diagnostic, into w: inout JSONWriter) {
        w.beginObject()
        w.key("code"); w.string(d.code.rawValue)
        w.key("message"); w.string(d.message)
        w.key("at"); w.string(d.at)
        w.endObject()
    }

    static func state(_ s: BadgeState, into w: inout JSONWriter) {
        w.beginObject()
        w.key("path"); w.string(s.path)
        w.key("count"); w.int(s.count)
        w.key("show"); w.bool(s.show)
        w.key("display")
        display(s.display, into: &w)
        w.endObject()
    }

    static func display(_ d: BadgeDisplay, into w: inout JSONWriter) {
        switch d {
        case .number(let n, let max):
            if n > max {
                w.string("\(max)+")
            } else {
                w.quotedDecimal(Int64(n))
            }
        case .custom(let name): w.string("custom:" + name)
        case .dot: w.string("dot")
        case .hidden: w.string("hidden")
        }
    }

    static func event(_ e: Event, seq: Int, outcome: Outcome, icon: Int, sync: SyncPolicy.Reason?,
                      tree: [BadgeState]?, maxDisplay: Int, into w: inout JSONWriter) {
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("op"); w.string(e.op.rawValue)
        w.key("device"); w.string(e.device)
        if e.op == .push {
            w.key("kind"); w.string(e.kind?.rawValue ?? "alert")
            w.key("rule")
            if let rule = e.rule { w.string(rule) } else { w.null() }
        }
        if let path = e.path {
            w.key("path"); w.string(path)
        }
        if let page = e.page {
            w.key("page"); w.string(page)
        }
        w.key("changes")
        w.beginArray()
        for change in outcome.changes { state(change, into: &w) }
        w.endArray()
        if let d = outcome.decrement {
            w.key("decrement")
            w.beginObject()
            w.key("by"); w.int(d.by)
            w.key("paths")
            w.beginArray()
            for p in d.paths { w.string(p) }
            w.endArray()
            w.endObject()
        }
        w.key("icon"); w.int(icon)
        if let sync {
            w.key("sync")
            w.beginObject()
            w.key("reason"); w.string(sync.rawValue)
            w.endObject()
        }
        if !e.warnings.isEmpty {
            w.key("warnings")
            w.beginArray()
            for d in e.warnings { diagnostic(d, into: &w) }
            w.endArray()
        }
        if let tree {
            w.key("tree")
            w.beginArray()
            for s in tree { state(s, into: &w) }
            w.endArray()
        }
        w.endObject()
        w.newline()
    }
}
