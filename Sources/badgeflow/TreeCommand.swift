import ArgumentParser
import BadgeFlow

/// `badgeflow tree`: draw a device's badge tree from a state file.
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

    @Option(name: .long, help: ArgumentHelp("Device id (default \"\").", valueName: "ID"))
    var device = ""

    @Flag(name: .long, help: "Print the shown nodes as JSON instead.")
    var json = false

    @Flag(name: .long, inversion: .prefixedNo, help: "Colour (default: when stdout is a terminal and NO_COLOR is not set).")
    var color: Bool?

    /// The rules to read the state with: the ones it records, checked against `--rules`.
    private func ruleSet() throws -> RuleSet {
        let recorded: RuleSet?
        do { recorded = try StateFile.recordedRules(state) } catch {
            Console.error("badgeflow: error: state file \(error.description)")
            throw Exit.state
        }
        guard let given = rules.rules else { return recorded ?? RuleSet.builtIn }
        let ruleSet = try rules.load()
        if let recorded, recorded.fingerprint != ruleSet.fingerprint {
            Console.error("""
                badgeflow: error: \(given) differs from the rules \(state) was written with \
                (\(Self.difference(ruleSet, recorded))); leave out --rules to use the recorded ones
                """)
            throw Exit.state
        }
        return ruleSet
    }

    /// What sets `given` apart from `recorded`, in the settings that change the drawing first.
    static func difference(_ given: RuleSet, _ recorded: RuleSet) -> String {
        if given.tree.root != recorded.tree.root {
            return "root \"\(given.tree.root)\", recorded \"\(recorded.tree.root)\""
        }
        if given.tree.maxDisplay != recorded.tree.maxDisplay {
            return "maxDisplay \(given.tree.maxDisplay), recorded \(recorded.tree.maxDisplay)"
        }
        if given.tree.display != recorded.tree.display { return "display settings" }
        if given.icon != recorded.icon { return "icon \"\(given.icon.rawValue)\", recorded \"\(recorded.icon.rawValue)\"" }
        return "routing rules or sync settings"
    }

    func run() throws {
        let ruleSet = try ruleSet()
        let stream: BadgeStream
        do {
            stream = try StateFile.load(state, rules: ruleSet)
        } catch {
            Console.error("badgeflow: error: state file \(error.description)")
            throw Exit.state
        }
        guard let dev = stream.devices[device] else {
            if !FileIO.exists(state) {
                Console.error("badgeflow: error: \(state): no such state file")
                throw Exit.state
            }
            let known = stream.devices.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            Console.error("badgeflow: error: no device \"\(device)\" in \(state)\(known.isEmpty ? "" : "; devices: \(known)")")
            throw Exit.usage
        }
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("device"); w.string(device)
            w.key("icon"); w.int(dev.icon(ruleSet.icon))
            w.key("tree")
            w.beginArray()
            for s in dev.tree.snapshot() {
                w.beginObject()
                w.key("path"); w.string(s.path)
                w.key("count"); w.int(s.count)
                w.key("show"); w.bool(s.show)
                w.key("display"); w.string(s.display.description)
                if let mark = dev.tree.mark(of: s.path) { w.key("mark"); w.string(mark.description) }
                w.endObject()
            }
            w.endArray()
            w.endObject()
            w.newline()
            Console.write(w.bytes)
            return
        }
        let colored = color ?? Console.colorByDefault(1)
        Console.out(TreeDrawing(tree: dev.tree, colored: colored).render(device: device, icon: dev.icon(ruleSet.icon)))
    }
}

/// Draws a badge tree like `tree(1)`: one node a line, its badge and own mark beside it.
struct TreeDrawing {
    let tree: BadgeTree
    let colored: Bool

    private func paint(_ s: String, _ code: String) -> String { colored ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    func render(device: String, icon: Int) -> String {
        let root = tree.configuration.root
        var out = "device \"\(device)\"  icon \(paint(String(icon), "1"))\n"
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
