/// Saves and loads a `BadgeStream`'s devices as versioned JSON, atomically.
///
/// ```json
/// {"format": "badgeflow-state", "version": 1, "clock": 1732269600,
///  "devices": {"": {"marks": {"root.chat.alice": 2, "root.news": "dot"}, "icon": 0,
///                   "sync": {"loggedIn": true, "foreground": true, "visible": ["home"],
///                            "appeared": ["home"], "disappearedAt": {}, "intervalStart": 0}}}}
/// ```
public enum StateFile {
    /// The format name written into every state file.
    public static let format = "badgeflow-state"
    /// The current version.
    public static let version: Int64 = 1

    /// A state file that cannot be read or used; the file is left as it is.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let file: String
        public let at: String
        public let message: String
        public var description: String { "\(file): \(at.isEmpty ? "" : at + ": ")\(message)" }
    }

    /// Loads `file` into a new stream; a missing file is an empty state.
    ///
    /// - Throws: `Failure` when the file is unreadable, not JSON, foreign, of another
    ///   version, or holds paths that do not fit `rules`.
    public static func load(_ file: String, rules: RuleSet) throws(Failure) -> BadgeStream {
        var stream = BadgeStream(rules: rules)
        guard FileIO.exists(file) else { return stream }
        let text: String
        do { text = try FileIO.readString(file) } catch {
            throw Failure(file: file, at: "", message: error.message)
        }
        let root: JSONValue
        do { root = try JSONValue.parse(text) } catch {
            throw Failure(file: file, at: "", message: "not valid JSON (\(error.message) at byte \(error.offset)); is it a state file?")
        }
        guard root["format"] == .string(format) else {
            throw Failure(file: file, at: "/format", message: "not a BadgeFlow state file (no \"format\": \"\(format)\")")
        }
        guard root["version"] == .int(version) else {
            throw Failure(file: file, at: "/version", message: "state version \(root["version"]?.serialized() ?? "none") is not supported; this BadgeFlow reads version \(version)")
        }
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
            stream.devices[id] = try device(value, at: at, file: file, rules: rules, clock: clock)
        }
        return stream
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

    private static func device(_ v: JSONValue, at: String, file: String, rules: RuleSet, clock: Double) throws(Failure) -> Device {
        func fail(_ sub: String, _ m: String) -> Failure { Failure(file: file, at: at + sub, message: m) }
        var device = Device(rules: rules)
        device.clock = clock
        if let c = v["clock"] {
            guard let t = number(c) else { throw fail("/clock", "clock must be a number") }
            device.clock = t
        }
        guard case .object(let marks)? = v["marks"] else { throw fail("/marks", "marks must be an object") }
        var list: [(path: String, mark: Mark)] = []
        for (path, mark) in marks {
            switch mark {
            case .string("dot"): list.append((path, .dot))
            case .int(let n) where n >= 1 && n <= Int64(Int.max): list.append((path, .count(Int(n))))
            default: throw fail("/marks/" + JSONPointer.escape(path), "a mark must be \"dot\" or a count of 1 or more")
            }
        }
        do {
            device.tree = try BadgeTree(configuration: rules.tree, marks: list)
        } catch {
            throw fail("/marks/" + JSONPointer.escape(error.path), "\(error.description) (was the state made with other rules?)")
        }
        if let icon = v["icon"] {
            guard case .int(let n) = icon, n >= 0 else { throw fail("/icon", "icon must be a non-negative integer") }
            device.payloadIcon = Int(n)
        }
        if let s = v["sync"] {
            guard case .bool(let loggedIn)? = s["loggedIn"], case .bool(let foreground)? = s["foreground"],
                  let visible = strings(s["visible"]), let appeared = strings(s["appeared"]),
                  case .object(let gone)? = s["disappearedAt"], let start = s["intervalStart"].flatMap(number) else {
                throw fail("/sync", "sync needs loggedIn, foreground, visible, appeared, disappearedAt and intervalStart")
            }
            var disappeared: [String: Double] = [:]
            for (page, t) in gone {
                guard let t = number(t) else { throw fail("/sync/disappearedAt/" + JSONPointer.escape(page), "must be a number") }
                disappeared[page] = t
            }
            device.sync = SyncPolicy(configuration: rules.sync, loggedIn: loggedIn, foreground: foreground,
                                     visible: visible, appearedSinceLogin: appeared, disappearedAt: disappeared,
                                     intervalStart: start)
        }
        return device
    }

    /// The state of `stream` as a JSON value (devices and pages in byte order).
    public static func encode(_ stream: BadgeStream) -> JSONValue {
        func sorted(_ s: some Sequence<String>) -> [String] { s.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        var devices: [(String, JSONValue)] = []
        for id in sorted(stream.devices.keys) {
            guard let d = stream.devices[id] else { continue }
            let marks: [(String, JSONValue)] = d.tree.marks.map { m in
                switch m.mark {
                case .dot: return (m.path, .string("dot"))
                case .count(let n): return (m.path, .int(Int64(n)))
                }
            }
            let sync: JSONValue = .object([
                ("loggedIn", .bool(d.sync.loggedIn)),
                ("foreground", .bool(d.sync.foreground)),
                ("visible", .array(sorted(d.sync.visible).map(JSONValue.string))),
                ("appeared", .array(sorted(d.sync.appearedSinceLogin).map(JSONValue.string))),
                ("disappearedAt", .object(sorted(d.sync.disappearedAt.keys).map { ($0, time(d.sync.disappearedAt[$0] ?? 0)) })),
                ("intervalStart", time(d.sync.intervalStart)),
            ])
            devices.append((id, .object([("marks", .object(marks)), ("icon", .int(Int64(d.payloadIcon))),
                                         ("clock", time(d.clock)), ("sync", sync)])))
        }
        return .object([
            ("format", .string(format)),
            ("version", .int(version)),
            ("clock", time(stream.devices.values.map(\.clock).max() ?? 0)),
            ("devices", .object(devices)),
        ])
    }

    private static func time(_ t: Double) -> JSONValue {
        t == t.rounded() && abs(t) < 1e15 ? .int(Int64(t)) : .double(t)
    }

    /// Writes the state of `stream` to `file` atomically (temporary file, fsync, rename).
    public static func save(_ stream: BadgeStream, to file: String) throws(FileIO.Failure) {
        let text = encode(stream).serialized(pretty: true) + "\n"
        try FileIO.writeAtomically(Array(text.utf8), to: file)
    }
}
