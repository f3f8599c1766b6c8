import ArgumentParser
import BadgeFlow

/// `badgeflow tree`: draw an account's badge tree from a state file.
struct TreeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree",
        abstract: "Draw the badge tree of a state file.",
        discussion: """
            Usable after a stream: badgeflow filter --state s.json < events && badgeflow tree --state s.json. \
            The state file records the rules it was written with, and the tree is drawn with them; \
            --rules is only needed for state files written before rules were recorded, and must \
            then be the rules of the stream. --rules that differ from the recorded ones are an \
            error (exit 3).
            """
    )

    @OptionGroup var rules: RulesOption

    @Option(name: .long, help: ArgumentHelp("State file written by `badgeflow filter --state`.", valueName: "FILE"))
    var state: String

    @Option(name: .long, help: ArgumentHelp("Account id (default: the account of --device).", valueName: "ID"))
    var account: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Device id (default \"\"); its icon number is shown, and the number it was last delivered (\"stale\" when that is not the icon number). Without --account: the device's account, its own when it has one.",
            valueName: "ID"))
    var device: String?

    @Flag(name: .long, help: "Print the shown nodes as JSON instead.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Instead of the tree, list the marks that make PATH show, deepest first: what set each (seq, rule or op, time) and when it expires.",
            valueName: "PATH"))
    var explain: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Colour (default: when stdout is a terminal and NO_COLOR is not set).")
    var color: Bool?

    /// The state, and the rules to read it with: the ones it records, checked against `--rules`.
    private func open() throws -> (any StateStore, RuleSet) {
        let store: any StateStore
        let recorded: RuleSet?
        do throws(StateFile.Failure) {
            store = try StateFormat.open(path: state, readOnly: true)
            recorded = try store.recordedRules()
        } catch {
            Console.error("badgeflow: error: state file \(error.description)")
            throw Exit.state
        }
        guard let given = rules.rules else { return (store, recorded ?? RuleSet.builtIn) }
        let ruleSet = try rules.load()
        if let recorded, recorded.fingerprint != ruleSet.fingerprint {
            Console.error(
                """
                badgeflow: error: \(given) differs from the rules \(state) was written with \
                (\(ruleSet.difference(from: recorded))); leave out --rules to use the recorded ones
                """)
            throw Exit.state
        }
        return (store, ruleSet)
    }

    func run() throws {
        let (store, ruleSet) = try open()
        defer { store.close() }
        var stream: BadgeStream
        do {
            // The account asked for (or the device's own) alone; from a state saved whole, the
            // whole state when it is not there (a device in another account, or an error that
            // lists the ids). A state with checkpoints may hold millions: only the one.
            let wanted = account ?? device ?? ""
            stream = try store.stream(rules: ruleSet, accounts: [wanted], compact: false)
            let found = stream.table[wanted].map { account != nil || $0.devices[wanted] != nil } ?? false
            if !found && !type(of: store).checkpoints { stream = try store.stream(rules: ruleSet, accounts: nil, compact: false) }
        } catch {
            Console.error("badgeflow: error: state file \(error.description)")
            throw Exit.state
        }
        if !FileIO.exists(state) {
            Console.error("badgeflow: error: \(state): no such state file")
            throw Exit.state
        }
        func quotedList(_ ids: some Sequence<String>) -> String {
            ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { "\"\($0)\"" }.joined(separator: ", ")
        }
        // Which account, and which device of it (nil: the account alone).
        let accounts = stream.accounts
        let accountID: String
        if let account {
            guard accounts[account] != nil else {
                let known = quotedList(accounts.keys)
                Console.error("badgeflow: error: no account \"\(account)\" in \(state)\(known.isEmpty ? "" : "; accounts: \(known)")")
                throw Exit.usage
            }
            accountID = account
        } else {
            let id = device ?? ""
            if accounts[id]?.devices[id] != nil {
                accountID = id
            } else {
                let holding = accounts.filter { $0.value.devices[id] != nil }.map(\.key)
                guard holding.count == 1, let only = holding.first else {
                    if holding.isEmpty {
                        let known = quotedList(Set(accounts.values.flatMap(\.devices.keys)))
                        Console.error("badgeflow: error: no device \"\(id)\" in \(state)\(known.isEmpty ? "" : "; devices: \(known)")")
                    } else {
                        Console.error("badgeflow: error: device \"\(id)\" is in accounts \(quotedList(holding)); pick one with --account")
                    }
                    throw Exit.usage
                }
                accountID = only
            }
        }
        guard let acc = accounts[accountID] else { throw Exit.usage }
        let deviceID = device ?? (account == nil ? "" : nil)
        var icon = ruleSet.icon == .tree ? acc.tree.total : 0
        // Under icon policy `tree`: the number the device was last delivered (what the
        // server knows it shows), stale when it is not the account's total.
        var delivered: Int? = nil
        if let deviceID {
            guard let dev = acc.devices[deviceID] else {
                let known = quotedList(acc.devices.keys)
                Console.error(
                    "badgeflow: error: no device \"\(deviceID)\" in account \"\(accountID)\"\(known.isEmpty ? "" : "; devices: \(known)")")
                throw Exit.usage
            }
            icon = acc.icon(ruleSet.icon, device: dev)
            if ruleSet.icon == .tree { delivered = dev.delivered }
        }
        // The account is named when it is not the device's own.
        let namedAccount = accountID == deviceID ? nil : accountID
        if let explain {
            Console.write(Self.explanation(acc.tree.explain(explain), path: explain, json: json))
            return
        }
        if json {
            var w = JSONWriter()
            w.beginObject()
            if let deviceID { w.key("device"); w.string(deviceID) }
            if let namedAccount { w.key("account"); w.string(namedAccount) }
            w.key("icon"); w.int(icon)
            if let delivered {
                w.key("delivered"); w.int(delivered)
                w.key("stale"); w.bool(delivered != icon)
            }
            w.key("tree")
            w.beginArray()
            for s in acc.tree.snapshot() {
                w.beginObject()
                w.key("path"); w.string(s.path)
                w.key("count"); w.int(s.count)
                w.key("show"); w.bool(s.show)
                w.key("display"); w.string(s.display.description)
                if let mark = acc.tree.mark(of: s.path) { w.key("mark"); w.string(mark.description) }
                w.endObject()
            }
            w.endArray()
            if !acc.contributions.isEmpty {
                // The account's own settings (`contribute` events), paths in byte order.
                w.key("settings")
                w.beginObject()
                w.key("contribute")
                w.beginObject()
                for path in acc.contributions.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    w.key(path); w.string(acc.contributions[path]?.rawValue ?? "count")
                }
                w.endObject()
                w.endObject()
            }
            w.endObject()
            w.newline()
            Console.write(w.bytes)
            return
        }
        let colored = color ?? Console.colorByDefault(1)
        var drawing = TreeDrawing(tree: acc.tree, colored: colored).render(
            account: namedAccount, device: deviceID, icon: icon, delivered: delivered)
        for path in acc.contributions.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            drawing += "setting \(path): contribute \(acc.contributions[path]?.rawValue ?? "count")\n"
        }
        Console.out(drawing)
    }

    /// `--explain`: one line a mark (`PATH  COUNT|dot  seq N  rule R  at T  expires T|never`),
    /// or with `--json` the result lines' `explain` array as `{"path":…,"explain":[…]}`.
    static func explanation(_ records: [MarkRecord], path: String, json: Bool) -> [UInt8] {
        func time(_ t: Double) -> String { t == t.rounded() && abs(t) < 1e15 ? String(Int64(t)) : String(t) }
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("path"); w.string(path)
            w.key("explain")
            w.beginArray()
            for r in records {
                w.beginObject()
                w.key("path"); w.string(r.path)
                w.key("count")
                if case .count(let n) = r.mark { w.int(n) } else { w.int(0) }
                w.key("seq")
                if let s = r.source { w.int(s.seq) } else { w.null() }
                w.key("rule")
                if let s = r.source { w.string(s.origin) } else { w.null() }
                w.key("at")
                if let s = r.source { w.double(s.at) } else { w.null() }
                w.key("expires")
                if let e = r.expires { w.double(e) } else { w.null() }
                w.endObject()
            }
            w.endArray()
            w.endObject()
            w.newline()
            return w.bytes
        }
        if records.isEmpty { return Array("\(path) does not show\n".utf8) }
        var text = ""
        for r in records {
            text += "\(r.path)  \(r.mark)"
            if let s = r.source { text += "  seq \(s.seq)  rule \(s.origin)  at \(time(s.at))" }
            text += "  expires \(r.expires.map(time) ?? "never")\n"
        }
        return Array(text.utf8)
    }
}

/// Draws a badge tree like `tree(1)`: one node a line, its badge and own mark beside it.
struct TreeDrawing {
    let tree: BadgeTree
    let colored: Bool

    private func paint(_ s: String, _ code: String) -> String { colored ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    /// The drawing, after a head line naming the account and device, the icon number and
    /// (`delivered`, when given) the number the device was last delivered, with `stale` when
    /// it is not the icon number.
    func render(account: String?, device: String?, icon: Int, delivered: Int? = nil) -> String {
        let root = tree.configuration.root
        var out = account.map { "account \"\($0)\"  " } ?? ""
        out += device.map { "device \"\($0)\"  " } ?? ""
        out += "icon \(paint(String(icon), "1"))"
        if let delivered {
            out += "  delivered \(delivered)"
            if delivered != icon { out += "  " + paint("stale", "33") }
        }
        out += "\n"
        out += line(root, name: root, prefix: "", connector: "")
        draw(root, prefix: "", into: &out)
        return out
    }

    private func draw(_ path: String, prefix: String, into out: inout String) {
        let kids = tree.children(of: path).filter { tree.state(of: $0).show }
        for (i, kid) in kids.enumerated() {
            let last = i == kids.count - 1
            let name = String(kid[kid.index(after: kid.lastIndex(of: ".") ?? kid.startIndex)...])
            out += line(kid, name: name, prefix: prefix, connector: last ? "└── " : "├── ")
            draw(kid, prefix: prefix + (last ? "    " : "│   "), into: &out)
        }
    }

    private func line(_ path: String, name: String, prefix: String, connector: String) -> String {
        let s = tree.state(of: path)
        var badge: String
        switch s.display {
        case .number: badge = paint("(\(s.display))", "1;31")
        case .dot: badge = paint("●", "31")
        case .custom(let n): badge = paint("[\(n)]", "35")
        case .hidden: badge = paint("–", "2")
        }
        if let mark = tree.mark(of: path), s.count > 0 || mark != .dot {
            if tree.children(of: path).contains(where: { tree.state(of: $0).show }) {
                badge += paint("  own \(mark), shadowed", "2")
            }
        }
        return "\(prefix)\(connector)\(name) \(badge)\n"
    }
}
