/// Saves and loads a `BadgeStream`'s accounts as versioned JSON, atomically.
///
/// ```json
/// {"format": "badgeflow-state", "version": 2, "rules": {"version": 1, "root": "root", …},
///  "accounts": {"alice": {"clock": 1732269600, "marks": {"root.chat.bob": 2, "root.news": "dot"},
///                         "devices": {"phone": {"icon": 0, "delivered": 3,
///                                               "sync": {"loggedIn": true, "foreground": true, "visible": ["home"],
///                                                        "appeared": ["home"], "disappearedAt": {}, "intervalStart": 0}}}}}}
/// ```
///
/// An account may also hold `sources` (what last set each mark: `{"seq", "rule", "at"}`),
/// `expires` (path → expiry time) and `once` (path → `{"held", "dismissed"}` once tokens),
/// each written only when not empty.
///
/// Version 1 files (devices, each with its own tree, and one clock for all) still load: each
/// device becomes its own account, whose clock is the file's clock, and counts as having
/// been delivered its tree's total. Files are always saved as version 2.
///
/// `rules` is the rules file the state was written with, so the state can be read (e.g.
/// drawn) without being told the rules again; files without it still load.
public enum StateFile {
    /// The format name written into every state file.
    public static let format = "badgeflow-state"
    /// The version written.
    public static let version: Int64 = 2

    /// A state file that cannot be read or used; the file is left as it is.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The state file's path.
        public let file: String
        /// RFC 6901 pointer of the faulty value in the file (`""` for the whole file).
        public let at: String
        /// What is wrong.
        public let message: String
        /// `FILE: POINTER: MESSAGE`, as the CLI prints it.
        public var description: String { "\(file): \(at.isEmpty ? "" : at + ": ")\(message)" }
    }

    /// The top-level object of `file`, checked for format and version; nil when the file is
    /// missing or empty (0 bytes or only whitespace, as `touch` or `mktemp` leave it).
    private static func document(_ file: String) throws(Failure) -> JSONValue? {
        guard FileIO.exists(file) else { return nil }
        let text: String
        do { text = try FileIO.readString(file) } catch {
            throw Failure(file: file, at: "", message: error.message)
        }
        if text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        let root: JSONValue
        do { root = try JSONValue.parse(text) } catch {
            throw Failure(file: file, at: "", message: "not valid JSON (\(error.located(in: text))); is it a state file?")
        }
        guard root["format"] == .string(format) else {
            throw Failure(file: file, at: "/format", message: "not a BadgeFlow state file (no \"format\": \"\(format)\")")
        }
        guard root["version"] == .int(version) || root["version"] == .int(1) else {
            throw Failure(
                file: file, at: "/version",
                message:
                    "state version \(root["version"]?.serialized() ?? "none") is not supported; this BadgeFlow reads versions 1 and \(version)"
            )
        }
        return root
    }

    /// The rules `file` was written with; nil when the file is missing or empty, or was
    /// written before states recorded their rules.
    ///
    /// - Throws: `Failure` when the file is unreadable, not JSON, foreign, of another
    ///   version, or its recorded rules do not compile.
    public static func recordedRules(_ file: String) throws(Failure) -> RuleSet? {
        let recorded: JSONValue
        if FileIO.exists(file), let bytes = try? FileIO.readBytes(file), let streamed = streamedRules(bytes) {
            guard let r = streamed else { return nil }
            recorded = r
        } else {
            guard let root = try document(file), let r = root["rules"] else { return nil }
            recorded = r
        }
        do {
            return try RuleSet.parse(recorded.serialized(pretty: true), file: file + " (recorded rules)")
        } catch {
            throw Failure(file: file, at: "/rules" + error.at, message: error.message)
        }
    }

    /// Loads `file` into a new stream; a missing or empty file is an empty state.
    ///
    /// - Throws: `Failure` when the file is unreadable, not JSON, foreign, of another
    ///   version, or holds paths that do not fit `rules`.
    public static func load(_ file: String, rules: RuleSet) throws(Failure) -> BadgeStream {
        if FileIO.exists(file), let mapped = MappedFile(file), let streamed = try streamedLoad(mapped, path: file, rules: rules) {
            return streamed
        }
        var stream = BadgeStream(rules: rules)
        guard let root = try document(file) else { return stream }
        if root["version"] == .int(version) {
            guard case .object(let accounts)? = root["accounts"] else {
                throw Failure(file: file, at: "/accounts", message: "accounts must be an object")
            }
            for (id, value) in accounts {
                stream.accounts[id] = try account(value, at: "/accounts/" + JSONPointer.escape(id), file: file, rules: rules)
            }
        } else {
            try migrate(root, file: file, rules: rules, into: &stream)
        }
        return stream
    }

    /// Reads a version 1 file: every device becomes its own account.
    private static func migrate(_ root: JSONValue, file: String, rules: RuleSet, into stream: inout BadgeStream) throws(Failure) {
        var clock = 0.0
        if let value = root["clock"] {
            guard let c = number(value) else { throw Failure(file: file, at: "/clock", message: "clock must be a number") }
            clock = c
        }
        guard case .object(let devices)? = root["devices"] else {
            throw Failure(file: file, at: "/devices", message: "devices must be an object")
        }
        for (id, value) in devices {
            let at = "/devices/" + JSONPointer.escape(id)
            var account = Account(rules: rules)
            account.tree = try tree(value, at: at, file: file, rules: rules)
            account.clock = clock
            if let c = value["clock"] {
                guard let t = number(c) else { throw Failure(file: file, at: at + "/clock", message: "clock must be a number") }
                account.clock = t
            }
            var d = try device(value, at: at, file: file, rules: rules)
            d.delivered = rules.icon == .tree ? account.tree.total : 0
            account.devices[id] = d
            stream.accounts[id] = account
        }
    }

    /// Reads one account as ``encodeAccount(_:compact:)`` writes it (the value of `accounts/ID` in a
    /// version 2 file, the `data` column of an SQLite store's `accounts` table).
    ///
    /// - Parameters:
    ///   - value: the account's JSON object.
    ///   - at: RFC 6901 pointer of `value`, for error messages.
    ///   - file: the state file's path, for error messages.
    ///   - rules: the rules the account's paths must fit.
    /// - Throws: `Failure` when a field is missing or malformed.
    public static func decodeAccount(_ value: JSONValue, at: String, file: String, rules: RuleSet) throws(Failure) -> Account {
        try account(value, at: at, file: file, rules: rules)
    }

    static func account(_ v: JSONValue, at: String, file: String, rules: RuleSet) throws(Failure) -> Account {
        var account = Account(rules: rules)
        account.tree = try tree(v, at: at, file: file, rules: rules)
        if let c = v["clock"] {
            guard let t = number(c) else { throw Failure(file: file, at: at + "/clock", message: "clock must be a number") }
            account.clock = t
        }
        guard case .object(let devices)? = v["devices"] else {
            throw Failure(file: file, at: at + "/devices", message: "devices must be an object")
        }
        for (id, value) in devices {
            let dat = at + "/devices/" + JSONPointer.escape(id)
            var d = try device(value, at: dat, file: file, rules: rules)
            if let n = value["delivered"] {
                guard case .int(let k) = n, k >= 0, k <= Int64(Int32.max) else {
                    throw Failure(file: file, at: dat + "/delivered", message: "delivered must be a non-negative integer")
                }
                d.delivered = Int(k)
            }
            account.devices[id] = d
        }
        return account
    }

    private static func number(_ v: JSONValue) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    private static func strings(_ v: JSONValue?) -> Set<String>? {
        guard case .array(let items)? = v else { return nil }
        var out: Set<String> = []
        for item in items {
            guard case .string(let s) = item else { return nil }
            out.insert(s)
        }
        return out
    }

    private static func tree(_ v: JSONValue, at: String, file: String, rules: RuleSet) throws(Failure) -> BadgeTree {
        func fail(_ sub: String, _ m: String) -> Failure { Failure(file: file, at: at + sub, message: m) }
        guard case .object(let marks)? = v["marks"] else { throw fail("/marks", "marks must be an object") }
        var list: [MarkRecord] = []
        for (path, mark) in marks {
            switch mark {
            case .string("dot"): list.append(MarkRecord(path: path, mark: .dot))
            case .int(let n) where n >= 1 && n <= Int64(Int.max): list.append(MarkRecord(path: path, mark: .count(Int(n))))
            default: throw fail("/marks/" + JSONPointer.escape(path), "a mark must be \"dot\" or a count of 1 or more")
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
        _ v: JSONValue, into list: inout [MarkRecord],
        fail: (String, String) -> Failure
    ) throws(Failure) -> [(String, [String])] {
        var at: [String: Int] = [:]
        for (i, r) in list.enumerated() { at[r.path] = i }
        if let sources = v["sources"] {
            guard case .object(let members) = sources else { throw fail("/sources", "sources must be an object") }
            for (path, s) in members {
                guard let i = at[path], case .int(let seq)? = s["seq"], case .string(let rule)? = s["rule"],
                    let t = s["at"].flatMap(number)
                else {
                    throw fail("/sources/" + JSONPointer.escape(path), "a source is {seq, rule, at} for a path in marks")
                }
                list[i].source = MarkSource(seq: Int(seq), origin: rule, at: t)
            }
        }
        if let expires = v["expires"] {
            guard case .object(let members) = expires else { throw fail("/expires", "expires must be an object") }
            for (path, t) in members {
                guard let i = at[path], let time = number(t) else {
                    throw fail("/expires/" + JSONPointer.escape(path), "an expiry is a time for a path in marks")
                }
                list[i].expires = time
            }
        }
        var dismissed: [(String, [String])] = []
        if let once = v["once"] {
            guard case .object(let members) = once else { throw fail("/once", "once must be an object") }
            for (path, o) in members {
                let pat = "/once/" + JSONPointer.escape(path)
                if let held = o["held"] {
                    guard case .string(let token) = held, let i = at[path] else {
                        throw fail(pat + "/held", "a held token is a string, for a path in marks")
                    }
                    list[i].once = token
                }
                if let d = o["dismissed"] {
                    guard case .array(let items) = d else { throw fail(pat + "/dismissed", "dismissed tokens are an array of strings") }
                    var tokens: [String] = []
                    for item in items {
                        guard case .string(let token) = item else {
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

    /// The account's `sources`, `expires` and `once` objects, each only when not empty.
    private static func markFeatures(_ tree: BadgeTree) -> [(String, JSONValue)] {
        var sources: [(String, JSONValue)] = [], expires: [(String, JSONValue)] = []
        var once: [String: [(String, JSONValue)]] = [:]
        for r in tree.records {
            if let s = r.source {
                sources.append((r.path, .object([("seq", .int(Int64(s.seq))), ("rule", .string(s.origin)), ("at", time(s.at))])))
            }
            if let e = r.expires { expires.append((r.path, time(e))) }
            if let token = r.once { once[r.path] = [("held", .string(token))] }
        }
        for (path, tokens) in tree.dismissedTokens {
            once[path, default: []].append(("dismissed", .array(tokens.map(JSONValue.string))))
        }
        var out: [(String, JSONValue)] = []
        if !sources.isEmpty { out.append(("sources", .object(sources))) }
        if !expires.isEmpty { out.append(("expires", .object(expires))) }
        if !once.isEmpty {
            let paths = once.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            out.append(("once", .object(paths.map { ($0, .object(once[$0] ?? [])) })))
        }
        return out
    }

    private static func device(_ v: JSONValue, at: String, file: String, rules: RuleSet) throws(Failure) -> Device {
        func fail(_ sub: String, _ m: String) -> Failure { Failure(file: file, at: at + sub, message: m) }
        var device = Device(rules: rules)
        if let icon = v["icon"] {
            guard case .int(let n) = icon, n >= 0 else { throw fail("/icon", "icon must be a non-negative integer") }
            device.payloadIcon = Int(n)
        }
        if let s = v["sync"] {
            // A key left out has the value of a new device (the compact rows of an SQLite state).
            func bool(_ key: String, _ fallback: Bool) throws(Failure) -> Bool {
                guard let value = s[key] else { return fallback }
                guard case .bool(let b) = value else { throw fail("/sync/" + key, "\(key) must be true or false") }
                return b
            }
            func pages(_ key: String) throws(Failure) -> Set<String> {
                guard let value = s[key] else { return [] }
                guard let set = strings(value) else { throw fail("/sync/" + key, "\(key) must be an array of page names") }
                return set
            }
            guard case .object = s else { throw fail("/sync", "sync must be an object") }
            let loggedIn = try bool("loggedIn", false), foreground = try bool("foreground", true)
            let visible = try pages("visible"), appeared = try pages("appeared")
            var start = 0.0
            if let t = s["intervalStart"] {
                guard let n = number(t) else { throw fail("/sync/intervalStart", "intervalStart must be a number") }
                start = n
            }
            var gone: [(String, JSONValue)] = []
            if let value = s["disappearedAt"] {
                guard case .object(let members) = value else { throw fail("/sync/disappearedAt", "disappearedAt must be an object") }
                gone = members
            }
            var disappeared: [String: Double] = [:]
            for (page, t) in gone {
                guard let t = number(t) else { throw fail("/sync/disappearedAt/" + JSONPointer.escape(page), "must be a number") }
                disappeared[page] = t
            }
            device.sync = SyncPolicy(
                configuration: rules.sync, loggedIn: loggedIn, foreground: foreground,
                visible: visible, appearedSinceLogin: appeared, disappearedAt: disappeared,
                intervalStart: start)
        }
        return device
    }

    /// The state of `stream` as a JSON value (accounts, devices and pages in byte order).
    public static func encode(_ stream: BadgeStream) -> JSONValue {
        func sorted(_ s: some Sequence<String>) -> [String] { s.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        var accounts: [(String, JSONValue)] = []
        for id in sorted(stream.accounts.keys) {
            guard let a = stream.accounts[id] else { continue }
            accounts.append((id, encodeAccount(a)))
        }
        var top: [(String, JSONValue)] = [
            ("format", .string(format)),
            ("version", .int(version)),
        ]
        if let rules = stream.rules.sourceValue { top.append(("rules", rules)) }
        top.append(("accounts", .object(accounts)))
        return .object(top)
    }

    /// One account as JSON: `{"clock": …, "marks": {…}, "devices": {…}}` (with `sources`,
    /// `expires` and `once` after `marks` when not empty), devices and pages in
    /// byte order. Both stores write accounts this way: the JSON file under `accounts`, the
    /// SQLite store in its `accounts.data` column.
    ///
    /// With `compact` (SQLite rows), a device leaves out each key whose value is that of a
    /// new device (`icon` and `delivered` 0, `loggedIn` false, `foreground` true, no pages,
    /// `intervalStart` 0, and `sync` when all of them are); ``decodeAccount(_:at:file:rules:)``
    /// reads both forms.
    public static func encodeAccount(_ a: Account, compact: Bool = false) -> JSONValue {
        func sorted(_ s: some Sequence<String>) -> [String] { s.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        let marks: [(String, JSONValue)] = a.tree.marks.map { m in
            switch m.mark {
            case .dot: return (m.path, .string("dot"))
            case .count(let n): return (m.path, .int(Int64(n)))
            }
        }
        var devices: [(String, JSONValue)] = []
        for did in sorted(a.devices.keys) {
            guard let d = a.devices[did] else { continue }
            var sync: [(String, JSONValue)] = []
            var device: [(String, JSONValue)] = []
            let p = d.sync
            if !compact || p.loggedIn { sync.append(("loggedIn", .bool(p.loggedIn))) }
            if !compact || !p.foreground { sync.append(("foreground", .bool(p.foreground))) }
            if !compact || !p.visible.isEmpty { sync.append(("visible", .array(sorted(p.visible).map(JSONValue.string)))) }
            if !compact || !p.appearedSinceLogin.isEmpty {
                sync.append(("appeared", .array(sorted(p.appearedSinceLogin).map(JSONValue.string))))
            }
            if !compact || !p.disappearedAt.isEmpty {
                sync.append(("disappearedAt", .object(sorted(p.disappearedAt.keys).map { ($0, time(p.disappearedAt[$0] ?? 0)) })))
            }
            if !compact || p.intervalStart != 0 { sync.append(("intervalStart", time(p.intervalStart))) }
            if !compact || d.payloadIcon != 0 { device.append(("icon", .int(Int64(d.payloadIcon)))) }
            if !compact || d.delivered != 0 { device.append(("delivered", .int(Int64(d.delivered)))) }
            if !compact || !sync.isEmpty { device.append(("sync", .object(sync))) }
            devices.append((did, .object(device)))
        }
        return .object(
            [("clock", time(a.clock)), ("marks", .object(marks))] + markFeatures(a.tree)
                + [("devices", .object(devices))])
    }

    private static func time(_ t: Double) -> JSONValue {
        t == t.rounded() && abs(t) < 1e15 ? .int(Int64(t)) : .double(t)
    }

    /// Removes temporary files a killed save left beside `file` (`FILE.tmp.PID` of a process
    /// that is gone).
    public static func removeStaleTemporaryFiles(of file: String) {
        FileIO.removeStaleTemporaryFiles(of: file)
    }

    /// Writes the state of `stream` to `file` atomically (temporary file, fsync, rename).
    ///
    /// The text is what `encode(stream).serialized(pretty: true)` gives, written one account
    /// at a time: memory beyond the accounts themselves stays at one account's JSON and a
    /// 1 MiB buffer, however many accounts there are.
    public static func save(_ stream: BadgeStream, to file: String) throws(FileIO.Failure) {
        var empty = stream
        empty.accounts = [:]
        let head = encode(empty).serialized(pretty: true)
        // The pretty text ends with the empty accounts object: `"accounts": {\n  }\n}`.
        let tail = "{\n  }\n}"
        guard !stream.accounts.isEmpty, head.hasSuffix(tail) else {
            try FileIO.writeAtomically(Array((encode(stream).serialized(pretty: true) + "\n").utf8), to: file)
            return
        }
        let ids = stream.accounts.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let w = try FileIO.AtomicWriter(file)
        try w.write(head.utf8.dropLast(tail.utf8.count))
        try w.write("{\n".utf8)
        for (i, id) in ids.enumerated() {
            guard let a = stream.accounts[id] else { continue }
            try w.write("    ".utf8)
            try w.write(JSONValue.string(id).serialized().utf8)
            try w.write(": ".utf8)
            // Nested two levels deep: every line of the account's text after the first gets
            // four more spaces, as json-c indents it inside the whole document.
            var indented: [UInt8] = []
            for byte in encodeAccount(a).serialized(pretty: true).utf8 {
                indented.append(byte)
                if byte == 0x0A { indented.append(contentsOf: [0x20, 0x20, 0x20, 0x20]) }
            }
            try w.write(indented)
            try w.write((i == ids.count - 1 ? "\n" : ",\n").utf8)
        }
        try w.write("  }\n}\n".utf8)
        try w.commit()
    }
}
