import BadgeTree

/// What the account reader asks of a json-c value (an account's text, parsed in place: the
/// rows of a store, read millions of times, never become Swift trees of values).
extension JSONRef {
    var isStateObject: Bool { kind == .object }
    /// Calls `body` with each member of an object (nothing for anything else), its typed
    /// error passed on.
    func forEachStateMember<E: Error>(_ body: (String, JSONRef) throws(E) -> Void) throws(E) {
        var failure: E? = nil
        forEachMember { key, value in
            guard failure == nil else { return }
            do throws(E) { try body(String(decoding: key, as: UTF8.self), value) } catch { failure = error }
        }
        if let failure { throw failure }
    }
    /// The elements of an array; nil for anything else.
    var stateElements: [JSONRef]? {
        guard kind == .array else { return nil }
        var out: [JSONRef] = []
        out.reserveCapacity(count)
        for i in 0..<count { if let e = self[i] { out.append(e) } }
        return out
    }
}

extension StateFile {

    static func account(_ v: JSONRef, at: String, file: String, rules: RuleSet) throws(Failure) -> Account {
        // Made around the decoded tree: no empty tree built and thrown away.
        var account = Account(tree: try tree(v, at: at, file: file, rules: rules))
        if let c = v["clock"] {
            guard let t = c.number else { throw Failure(file: file, at: at + "/clock", message: "clock must be a number") }
            account.clock = t
        }
        guard let devices = v["devices"], devices.isStateObject else {
            throw Failure(file: file, at: at + "/devices", message: "devices must be an object")
        }
        // Sized once: no table grown and dropped on the way (3 devices would take two).
        account.devices.reserveCapacity(devices.count)
        try devices.forEachStateMember { (id, value) throws(Failure) in
            // The device's JSON Pointer is spelled out only for an error.
            func dat() -> String { at + "/devices/" + JSONPointer.escape(id) }
            var d = try device(value, at: dat, file: file, rules: rules)
            if let n = value["delivered"] {
                // Any non-negative count: it is a tree's total, and a total of large marks
                // passes Int32 (one account reached 2^32 - 2 with two marks of 2^31 - 1).
                guard let k = n.int, k >= 0 else {
                    throw Failure(file: file, at: dat() + "/delivered", message: "delivered must be a non-negative integer")
                }
                d.delivered = Int(k)
            }
            account.devices[id] = d
        }
        if let ids = v["ids"] {
            guard let items = ids.stateElements, items.count <= RecentIDs.limit else {
                throw Failure(file: file, at: at + "/ids", message: "ids must be an array of at most \(RecentIDs.limit) event ids")
            }
            var list: [String] = []
            list.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                guard let s = item.string, (1...128).contains(s.utf8.count) else {
                    throw Failure(file: file, at: at + "/ids/\(i)", message: "an event id is a string of 1 to 128 bytes")
                }
                list.append(s)
            }
            account.ids = RecentIDs(list)
        }
        if let settings = v["settings"] {
            try restoreSettings(settings, into: &account, at: at + "/settings", file: file)
        }
        return account
    }

    /// Reads an account's `settings` (`{"contribute": {path: mode}}`) and puts them in force;
    /// a path the rules reject is refused as a mark is.
    private static func restoreSettings(
        _ v: JSONRef, into account: inout Account, at: String, file: String
    ) throws(Failure) {
        guard v.isStateObject else { throw Failure(file: file, at: at, message: "settings must be an object") }
        guard let contribute = v["contribute"] else { return }
        guard contribute.isStateObject else {
            throw Failure(file: file, at: at + "/contribute", message: "contribute must be an object of paths and modes")
        }
        var list: [(String, Contribution)] = []
        try contribute.forEachStateMember { (path, mode) throws(Failure) in
            guard let text = mode.string, let m = Contribution(rawValue: text) else {
                throw Failure(
                    file: file, at: at + "/contribute/" + JSONPointer.escape(path),
                    message: "a contribution setting must be \"count\", \"dot\" or \"none\"")
            }
            list.append((path, m))
        }
        do { try account.restoreContributions(list) } catch {
            throw Failure(
                file: file, at: at + "/contribute/" + JSONPointer.escape(error.path),
                message: "\(error.description) (was the state made with other rules?)")
        }
    }

    private static func strings(_ v: JSONRef?) -> Set<String>? {
        guard let items = v?.stateElements else { return nil }
        var out: Set<String> = []
        for item in items {
            guard let s = item.string else { return nil }
            out.insert(s)
        }
        return out
    }

    static func tree(_ v: JSONRef, at: String, file: String, rules: RuleSet) throws(Failure) -> BadgeTree {
        func fail(_ sub: String, _ m: String) -> Failure { Failure(file: file, at: at + sub, message: m) }
        guard let marks = v["marks"], marks.isStateObject else { throw fail("/marks", "marks must be an object") }
        var list: [MarkRecord] = []
        try marks.forEachStateMember { (path, mark) throws(Failure) in
            if let n = mark.int, n >= 1, n <= Int64(Int.max) {
                list.append(MarkRecord(path: path, mark: .count(Int(n))))
            } else if mark.string == "dot" {
                list.append(MarkRecord(path: path, mark: .dot))
            } else {
                throw fail("/marks/" + JSONPointer.escape(path), "a mark must be \"dot\" or a count of 1 or more")
            }
        }
        let dismissed = try markFeatures(v, into: &list, fail: fail)
        var tree = BadgeTree(configuration: rules.tree)
        do {
            try tree.restore(contentsOf: list)
            for (path, tokens) in dismissed { try tree.restoreDismissed(path, tokens: tokens) }
        } catch {
            throw fail("/marks/" + JSONPointer.escape(error.path), "\(error.description) (was the state made with other rules?)")
        }
        return tree
    }

    /// Reads the account's `sources`, `expires` and `once` (each only present when not empty)
    /// into its marks; returns the dismissed once tokens by path.
    private static func markFeatures(
        _ v: JSONRef, into list: inout [MarkRecord],
        fail: (String, String) -> Failure
    ) throws(Failure) -> [(String, [String])] {
        let sources = v["sources"], expires = v["expires"], once = v["once"]
        if sources == nil && expires == nil && once == nil { return [] }
        // A path's record: most accounts hold a few marks, searched faster than hashed.
        var table: [String: Int] = [:]
        if list.count > 8 { for (i, r) in list.enumerated() { table[r.path] = i } }
        func at(_ path: String) -> Int? {
            list.count > 8 ? table[path] : list.firstIndex { $0.path == path }
        }
        if let sources {
            guard sources.isStateObject else { throw fail("/sources", "sources must be an object") }
            try sources.forEachStateMember { (path, s) throws(Failure) in
                guard let i = at(path), let seq = s["seq"]?.int, let rule = s["rule"]?.string,
                    let t = s["at"]?.number
                else {
                    throw fail("/sources/" + JSONPointer.escape(path), "a source is {seq, rule, at} for a path in marks")
                }
                list[i].source = MarkSource(seq: Int(seq), origin: rule, at: t)
            }
        }
        if let expires {
            guard expires.isStateObject else { throw fail("/expires", "expires must be an object") }
            try expires.forEachStateMember { (path, t) throws(Failure) in
                guard let i = at(path), let time = t.number else {
                    throw fail("/expires/" + JSONPointer.escape(path), "an expiry is a time for a path in marks")
                }
                list[i].expires = time
            }
        }
        var dismissed: [(String, [String])] = []
        if let once {
            guard once.isStateObject else { throw fail("/once", "once must be an object") }
            try once.forEachStateMember { (path, o) throws(Failure) in
                let pat = "/once/" + JSONPointer.escape(path)
                if let held = o["held"] {
                    guard let token = held.string, let i = at(path) else {
                        throw fail(pat + "/held", "a held token is a string, for a path in marks")
                    }
                    list[i].once = token
                }
                if let d = o["dismissed"] {
                    guard let items = d.stateElements else { throw fail(pat + "/dismissed", "dismissed tokens are an array of strings") }
                    var tokens: [String] = []
                    for item in items {
                        guard let token = item.string else {
                            throw fail(pat + "/dismissed", "dismissed tokens are an array of strings")
                        }
                        tokens.append(token)
                    }
                    dismissed.append((path, tokens))
                }
            }
        }
        return dismissed
    }

    /// Reads one device; `at` spells its JSON Pointer (called only for an error).
    static func device(_ v: JSONRef, at: () -> String, file: String, rules: RuleSet) throws(Failure) -> Device {
        func fail(_ sub: String, _ m: String) -> Failure { Failure(file: file, at: at() + sub, message: m) }
        var device = Device(rules: rules)
        if let icon = v["icon"] {
            guard let n = icon.int, n >= 0 else { throw fail("/icon", "icon must be a non-negative integer") }
            device.payloadIcon = Int(n)
        }
        if let s = v["sync"] {
            // A key left out has the value of a new device (the compact rows of an SQLite state).
            func bool(_ key: String, _ fallback: Bool) throws(Failure) -> Bool {
                guard let value = s[key] else { return fallback }
                guard let b = value.bool else { throw fail("/sync/" + key, "\(key) must be true or false") }
                return b
            }
            func pages(_ key: String) throws(Failure) -> Set<String> {
                guard let value = s[key] else { return [] }
                guard let set = strings(value) else { throw fail("/sync/" + key, "\(key) must be an array of page names") }
                return set
            }
            guard s.isStateObject else { throw fail("/sync", "sync must be an object") }
            let loggedIn = try bool("loggedIn", false), foreground = try bool("foreground", true)
            let visible = try pages("visible"), appeared = try pages("appeared")
            var start = 0.0
            if let t = s["intervalStart"] {
                guard let n = t.number else { throw fail("/sync/intervalStart", "intervalStart must be a number") }
                start = n
            }
            var disappeared: [String: Double] = [:]
            if let value = s["disappearedAt"] {
                guard value.isStateObject else { throw fail("/sync/disappearedAt", "disappearedAt must be an object") }
                try value.forEachStateMember { (page, t) throws(Failure) in
                    guard let t = t.number else { throw fail("/sync/disappearedAt/" + JSONPointer.escape(page), "must be a number") }
                    disappeared[page] = t
                }
            }
            device.sync = SyncPolicy(
                configuration: rules.sync, loggedIn: loggedIn, foreground: foreground,
                visible: visible, appearedSinceLogin: appeared, disappearedAt: disappeared,
                intervalStart: start)
        }
        return device
    }

    /// One account as compact JSON text: `{"clock": …, "marks": {…}, "devices": {…}}` (with `sources`,
    /// `expires` and `once` after `marks` when not empty, `ids`, the recent event ids
    /// oldest first, after `devices` when there are any, and last `settings`, the account's
    /// own `{"contribute": {path: mode}}`, when it has any), devices and pages in
    /// byte order. Both stores write accounts this way: the JSON file under `accounts`, the
    /// SQLite store in its `accounts.data` column.
    ///
    /// With `compact` (SQLite rows), a device leaves out each key whose value is that of a
    /// new device (`icon` and `delivered` 0, `loggedIn` false, `foreground` true, no pages,
    /// `intervalStart` 0, and `sync` when all of them are); the reader takes both forms.
    package static func encodeAccount(_ a: Account, compact: Bool = false) -> String {
        var w = JSONWriter(capacity: 512)
        writeAccount(a, compact: compact, into: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// Writes account `a` as ``encodeAccount(_:compact:)`` describes, in compact JSON: the
    /// one account writer (a state file lays its text out with
    /// ``JSONWriter/appendPretty(_:level:to:)``). Times are written as state files have
    /// always held them (`JSONWriter.stateTime`).
    static func writeAccount(_ a: Account, compact: Bool, into w: inout JSONWriter) {
        let records = a.tree.records
        w.beginObject()
        w.key("clock")
        w.stateTime(a.clock)
        w.key("marks")
        w.beginObject()
        var sources = 0, expires = 0, held = 0
        for r in records {
            w.key(r.path)
            switch r.mark {
            case .dot: w.string("dot")
            case .count(let n): w.int(n)
            }
            if r.source != nil { sources += 1 }
            if r.expires != nil { expires += 1 }
            if r.once != nil { held += 1 }
        }
        w.endObject()
        if sources > 0 {
            w.key("sources")
            w.beginObject()
            for r in records {
                guard let s = r.source else { continue }
                w.key(r.path)
                w.beginObject()
                w.key("seq")
                w.int(s.seq)
                w.key("rule")
                w.string(s.origin)
                w.key("at")
                w.stateTime(s.at)
                w.endObject()
            }
            w.endObject()
        }
        if expires > 0 {
            w.key("expires")
            w.beginObject()
            for r in records {
                guard let e = r.expires else { continue }
                w.key(r.path)
                w.stateTime(e)
            }
            w.endObject()
        }
        let dismissed = a.tree.dismissedTokens
        if held > 0 || !dismissed.isEmpty {
            // Paths in byte order, each with its held token and then its dismissed ones;
            // both lists are sorted by path already.
            w.key("once")
            w.beginObject()
            var h = records.startIndex, d = dismissed.startIndex
            while true {
                while h < records.endIndex && records[h].once == nil { h += 1 }
                let heldPath = h < records.endIndex ? records[h].path : nil
                let dismissedPath = d < dismissed.endIndex ? dismissed[d].path : nil
                guard heldPath != nil || dismissedPath != nil else { break }
                let path: String
                if let hp = heldPath, let dp = dismissedPath {
                    path = dp.utf8.lexicographicallyPrecedes(hp.utf8) ? dp : hp
                } else {
                    path = heldPath ?? dismissedPath ?? ""
                }
                w.key(path)
                w.beginObject()
                if heldPath == path, let token = records[h].once {
                    w.key("held")
                    w.string(token)
                    h += 1
                }
                if dismissedPath == path {
                    w.key("dismissed")
                    w.beginArray()
                    for token in dismissed[d].tokens { w.string(token) }
                    w.endArray()
                    d += 1
                }
                w.endObject()
            }
            w.endObject()
        }
        w.key("devices")
        w.beginObject()
        for did in sorted(a.devices.keys) {
            guard let d = a.devices[did] else { continue }
            w.key(did)
            w.beginObject()
            let p = d.sync
            if !compact || d.payloadIcon != 0 {
                w.key("icon")
                w.int(d.payloadIcon)
            }
            if !compact || d.delivered != 0 {
                w.key("delivered")
                w.int(d.delivered)
            }
            let syncIsNew =
                !p.loggedIn && p.foreground && p.visible.isEmpty && p.appearedSinceLogin.isEmpty
                && p.disappearedAt.isEmpty && p.intervalStart == 0
            if !compact || !syncIsNew {
                w.key("sync")
                w.beginObject()
                if !compact || p.loggedIn {
                    w.key("loggedIn")
                    w.bool(p.loggedIn)
                }
                if !compact || !p.foreground {
                    w.key("foreground")
                    w.bool(p.foreground)
                }
                if !compact || !p.visible.isEmpty {
                    w.key("visible")
                    w.beginArray()
                    for page in sorted(p.visible) { w.string(page) }
                    w.endArray()
                }
                if !compact || !p.appearedSinceLogin.isEmpty {
                    w.key("appeared")
                    w.beginArray()
                    for page in sorted(p.appearedSinceLogin) { w.string(page) }
                    w.endArray()
                }
                if !compact || !p.disappearedAt.isEmpty {
                    w.key("disappearedAt")
                    w.beginObject()
                    for page in sorted(p.disappearedAt.keys) {
                        w.key(page)
                        w.stateTime(p.disappearedAt[page] ?? 0)
                    }
                    w.endObject()
                }
                if !compact || p.intervalStart != 0 {
                    w.key("intervalStart")
                    w.stateTime(p.intervalStart)
                }
                w.endObject()
            }
            w.endObject()
        }
        w.endObject()
        if !a.ids.isEmpty {
            w.key("ids")
            w.beginArray()
            for id in a.ids.list { w.string(id) }
            w.endArray()
        }
        if !a.contributions.isEmpty {
            // The account's own settings (`contribute` events), paths in byte order.
            w.key("settings")
            w.beginObject()
            w.key("contribute")
            w.beginObject()
            for path in sorted(a.contributions.keys) {
                w.key(path)
                w.string(a.contributions[path]?.rawValue ?? "count")
            }
            w.endObject()
            w.endObject()
        }
        w.endObject()
    }

    /// Strings in byte (UTF-8) order, as every list and object of a state is written.
    private static func sorted(_ s: some Sequence<String>) -> [String] {
        s.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
