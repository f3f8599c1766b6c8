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
/// Only version 2 is read: a file of another version (version 1 was written only by
/// pre-release builds) is refused with its version named.
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
    /// The version of a database state (SQLite and the like) once it holds an account with settings of
    /// its own (`contribute`): builds that read only version 2 would drop them, so they
    /// refuse it at open instead. A state without settings stays version 2.
    public static let settingsVersion: Int64 = 3
    /// The versions a database state may have (``version``, ``settingsVersion``).
    static let databaseVersions: Set<String> = [String(version), String(settingsVersion)]

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
            guard let r = try withDocument(file, { root in root["rules"]?.toValue() }), let r else { return nil }
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
        // The whole document: the file's error reported exactly, or a file the streamed
        // load does not take (e.g. `accounts` before `format`).
        try withDocument(file) { (root) throws(Failure) in
            stream.partition = try root["partition"].map { v throws(Failure) in try StatePartition(json: v.toValue(), file: file) }
            stream.records = StateRecords(inputs: root["inputs"]?.toValue(), offset: root["offset"]?.string)
            guard let accounts = root["accounts"], accounts.kind == .object else {
                throw Failure(file: file, at: "/accounts", message: "accounts must be an object")
            }
            try accounts.forEachStateMember { (id, value) throws(Failure) in
                guard only?.contains(id) ?? true else { return }
                let a = try account(value, at: "/accounts/" + JSONPointer.escape(id), file: file, rules: rules)
                stream.addLoaded(a, as: id, compact: compact)
            }
        }
        return stream
    }

    /// The text of `stream`'s state file, as ``save(_:to:)`` writes it (accounts, devices
    /// and pages in byte order).
    ///
    /// - Throws: `Failure` when a compact account does not decode (an internal error).
    public static func text(_ stream: BadgeStream) throws(Failure) -> String {
        var out: [UInt8] = []
        do {
            try write(stream, file: "(memory)") { bytes throws(FileIO.Failure) in out.append(contentsOf: bytes) }
        } catch {
            throw Failure(file: "(memory)", at: "", message: error.message)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The document up to the accounts' members, as json-c lays it out: format, version,
    /// rules (when they have JSON), the partition (a part of a split state) and
    /// `"accounts": {`.
    private static func head(_ stream: BadgeStream) -> String {
        var top: [(String, JSONValue)] = [("format", .string(format)), ("version", .int(version))]
        if let value = stream.rules.sourceValue { top.append(("rules", value)) }
        if let partition = stream.partition { top.append(("partition", partition.jsonValue)) }
        if stream.records.numbered { top.append(("offset", .string("numbered"))) }
        if !stream.records.inputs.isEmpty { top.append(("inputs", stream.records.inputsJSON)) }
        top.append(("accounts", .object([])))
        let text = JSONValue.object(top).serialized(pretty: true)
        // The pretty text ends with the empty accounts object, `"accounts": {\n  }\n}`:
        // cut after its `{`.
        return String(decoding: text.utf8.dropLast("\n  }\n}".utf8.count), as: UTF8.self)
    }

    /// Writes the state file of `stream` to `sink` one account at a time: each account is
    /// written compactly by ``writeAccount(_:compact:into:)`` and laid out as json-c lays
    /// out the whole document (``JSONWriter/appendPretty(_:level:to:)``), so memory beyond
    /// the accounts stays at one account's text.
    private static func write(
        _ stream: BadgeStream, file: String, to sink: ([UInt8]) throws(FileIO.Failure) -> Void
    ) throws(FileIO.Failure) {
        var bytes = Array(head(stream).utf8)
        let ids = stream.accountIDs.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        guard !ids.isEmpty else {
            bytes.append(contentsOf: "\n  }\n}\n".utf8)
            try sink(bytes)
            return
        }
        bytes.append(contentsOf: "\n".utf8)
        var accountText = JSONWriter(capacity: 1024)
        for (i, id) in ids.enumerated() {
            let found: Account?
            do { found = try stream.account(id) } catch { throw FileIO.Failure(path: file, message: error.description) }
            guard let a = found else { continue }
            bytes.append(contentsOf: "    ".utf8)
            bytes.append(contentsOf: JSONValue.string(id).serialized().utf8)
            bytes.append(contentsOf: ": ".utf8)
            accountText.removeAll()
            writeAccount(a, compact: false, into: &accountText)
            // Nested two levels deep, inside the document and its `accounts`.
            JSONWriter.appendPretty(accountText, level: 2, to: &bytes)
            bytes.append(contentsOf: (i == ids.count - 1 ? "\n" : ",\n").utf8)
            if bytes.count >= 1 << 20 {
                try sink(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        bytes.append(contentsOf: "  }\n}\n".utf8)
        try sink(bytes)
    }

    /// Removes temporary files a killed save left beside `file` (`FILE.tmp.PID` of a process
    /// that is gone).
    package static func removeStaleTemporaryFiles(of file: String) {
        FileIO.removeStaleTemporaryFiles(of: file)
    }

    /// Writes the state of `stream` to `file` atomically (temporary file, fsync, rename).
    ///
    /// The text is ``text(_:)``'s, written one account at a time: memory beyond the accounts
    /// themselves stays at one account's JSON and a 1 MiB buffer, however many accounts
    /// there are.
    public static func save(_ stream: BadgeStream, to file: String) throws(FileIO.Failure) {
        try prepareSave(stream, to: file).commit()
    }

    /// Writes the state of `stream` as ``save(_:to:)`` does, up to the rename: the returned
    /// writer's `commit()` puts it in place; dropping the writer leaves `file` as it was.
    ///
    /// - Throws: `FileIO.Failure` when writing or syncing the temporary file fails, or a
    ///   compact account does not decode (an internal error; nothing is then put in place).
    package static func prepareSave(_ stream: BadgeStream, to file: String) throws(FileIO.Failure) -> FileIO.AtomicWriter {
        let w = try FileIO.AtomicWriter(file)
        try write(stream, file: file) { bytes throws(FileIO.Failure) in try w.write(bytes) }
        try w.prepare()
        return w
    }
}
