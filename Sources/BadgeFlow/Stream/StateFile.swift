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
///
/// A part of a split state also holds `partition` (``StatePartition``), after `rules`.
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
        // Scanned through a mapping: no copy of a fleet's file in memory to find its rules.
        if FileIO.exists(file), let mapped = MappedFile(file),
            let streamed = streamedRules(mapped)
        {
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
    /// - Parameters:
    ///   - file: the state file's path.
    ///   - rules: the rules the accounts' paths must fit.
    ///   - compact: hold the accounts in compact form (``BadgeStream/compact(keeping:)``), as
    ///     the filter does: ~100 bytes an account instead of ~1.5 KB.
    ///   - only: load only the accounts with these ids (nil: all). The others are parsed
    ///     (a syntax error anywhere is still the file's error) but not decoded, as an SQLite
    ///     state reads one account's row: a well-formed account that is skipped is not
    ///     checked against the rules.
    /// - Throws: `Failure` when the file is unreadable, not JSON, foreign, of another
    ///   version, or holds paths that do not fit `rules`.
    public static func load(
        _ file: String, rules: RuleSet, compact: Bool = false, only: Set<String>? = nil
    ) throws(Failure) -> BadgeStream {
        if FileIO.exists(file), let mapped = MappedFile(file),
            let streamed = try streamedLoad(mapped, path: file, rules: rules, compact: compact, only: only)
        {
            return streamed
        }
        var stream = BadgeStream(rules: rules)
        guard let root = try document(file) else { return stream }
        stream.partition = try root["partition"].map { v throws(Failure) in try StatePartition(json: v, file: file) }
        if root["version"] == .int(version) {
            guard case .object(let accounts)? = root["accounts"] else {
                throw Failure(file: file, at: "/accounts", message: "accounts must be an object")
            }
            for (id, value) in accounts where only?.contains(id) ?? true {
                let a = try account(value, at: "/accounts/" + JSONPointer.escape(id), file: file, rules: rules)
                stream.addLoaded(a, as: id, compact: compact)
            }
        } else {
            try migrate(root, file: file, rules: rules, only: only, into: &stream)
        }
        return stream
    }

    /// Reads a version 1 file: every device becomes its own account.
    private static func migrate(
        _ root: JSONValue, file: String, rules: RuleSet, only: Set<String>?, into stream: inout BadgeStream
    ) throws(Failure) {
        var clock = 0.0
        if let value = root["clock"] {
            guard let c = value.stateNumber else { throw Failure(file: file, at: "/clock", message: "clock must be a number") }
            clock = c
        }
        guard case .object(let devices)? = root["devices"] else {
            throw Failure(file: file, at: "/devices", message: "devices must be an object")
        }
        for (id, value) in devices where only?.contains(id) ?? true {
            let at = "/devices/" + JSONPointer.escape(id)
            var account = Account(rules: rules)
            account.tree = try tree(value, at: at, file: file, rules: rules)
            account.clock = clock
            if let c = value["clock"] {
                guard let t = c.stateNumber else { throw Failure(file: file, at: at + "/clock", message: "clock must be a number") }
                account.clock = t
            }
            var d = try device(value, at: { at }, file: file, rules: rules)
            d.delivered = rules.icon == .tree ? account.tree.total : 0
            account.devices[id] = d
            stream.accounts[id] = account
        }
    }

    /// The state of `stream` as a JSON value (accounts, devices and pages in byte order).
    public static func encode(_ stream: BadgeStream) -> JSONValue {
        func sorted(_ s: some Sequence<String>) -> [String] { s.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        var accounts: [(String, JSONValue)] = []
        for id in sorted(stream.accountIDs) {
            // A compact account that does not decode (an internal error) is left out.
            guard let a = (try? stream.account(id)) ?? nil else { continue }
            accounts.append((id, encodeAccount(a)))
        }
        var top: [(String, JSONValue)] = [
            ("format", .string(format)),
            ("version", .int(version)),
        ]
        if let rules = stream.rules.sourceValue { top.append(("rules", rules)) }
        if let partition = stream.partition { top.append(("partition", partition.jsonValue)) }
        top.append(("accounts", .object(accounts)))
        return .object(top)
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
        try prepareSave(stream, to: file).commit()
    }

    /// Writes the state of `stream` as ``save(_:to:)`` does, up to the rename: the returned
    /// writer's `commit()` puts it in place; dropping the writer leaves `file` as it was.
    ///
    /// - Throws: `FileIO.Failure` when writing or syncing the temporary file fails.
    public static func prepareSave(_ stream: BadgeStream, to file: String) throws(FileIO.Failure) -> FileIO.AtomicWriter {
        var empty = stream
        empty.accounts = [:]
        empty.compacted = CompactAccounts()
        let head = encode(empty).serialized(pretty: true)
        // The pretty text ends with the empty accounts object: `"accounts": {\n  }\n}`.
        let tail = "{\n  }\n}"
        guard stream.accountCount > 0, head.hasSuffix(tail) else {
            // `encode` leaves out a compact account that does not decode: refuse instead.
            for id in stream.compacted.ids {
                do { _ = try stream.compacted.account(id, rules: stream.rules) } catch {
                    throw FileIO.Failure(path: file, message: error.description)
                }
            }
            let w = try FileIO.AtomicWriter(file)
            try w.write((encode(stream).serialized(pretty: true) + "\n").utf8)
            try w.prepare()
            return w
        }
        let ids = stream.accountIDs.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let w = try FileIO.AtomicWriter(file)
        // Each account is written compactly, then laid out by json-c as the whole document
        // would be (no JSONValue in between).
        let parser = JSONParser()
        var accountText = JSONWriter(capacity: 1024)
        try w.write(head.utf8.dropLast(tail.utf8.count))
        try w.write("{\n".utf8)
        for (i, id) in ids.enumerated() {
            let found: Account?
            do { found = try stream.account(id) } catch { throw FileIO.Failure(path: file, message: error.description) }
            guard let a = found else { continue }
            try w.write("    ".utf8)
            try w.write(JSONValue.string(id).serialized().utf8)
            try w.write(": ".utf8)
            // Nested two levels deep: every line of the account's text after the first gets
            // four more spaces, as json-c indents it inside the whole document.
            var indented: [UInt8] = []
            accountText.removeAll()
            writeAccount(a, compact: false, into: &accountText)
            let laidOut = accountText.withUnsafeBytes { bytes in
                parser.withDocument(bytes) { (try? $0.get())?.serialized(pretty: true) }
            }
            // The writer's JSON always parses; were it not to, nothing half-written is saved.
            guard let text = laidOut else {
                throw FileIO.Failure(path: file, message: "account \"\(id)\" could not be laid out as JSON (an internal error)")
            }
            for byte in text.utf8 {
                indented.append(byte)
                if byte == 0x0A { indented.append(contentsOf: [0x20, 0x20, 0x20, 0x20]) }
            }
            try w.write(indented)
            try w.write((i == ids.count - 1 ? "\n" : ",\n").utf8)
        }
        try w.write("  }\n}\n".utf8)
        try w.prepare()
        return w
    }
}
