/// Writes result lines: the output format of SPEC §4, keys in a fixed order.
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

    /// One node's state as `{"path":…,"count":…,"show":…,"display":…}` (an array element).
    static func state(_ s: BadgeState, first: Bool, into w: inout JSONWriter) {
        w.fragment(first ? #"{"path":"# : #",{"path":"#)
        w.bareString(s.path)
        w.fragment(#","count":"#); w.bareInt(s.count)
        w.fragment(s.show ? #","show":true,"display":"# : #","show":false,"display":"#)
        display(s.display, into: &w)
        w.fragment("}")
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
        w.fragment(#"{"seq":"#); w.bareInt(seq)
        w.fragment(#","op":"#); w.bareString(e.op.rawValue)
        w.fragment(#","device":"#); w.bareString(e.device)
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
        w.fragment(#","changes":["#)
        for (i, change) in outcome.changes.enumerated() { state(change, first: i == 0, into: &w) }
        w.fragment("]")
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
            w.fragment("[")
            for (i, s) in tree.enumerated() { state(s, first: i == 0, into: &w) }
            w.fragment("]")
        }
        w.endObject()
        w.newline()
    }
}
