// The JSON state's split and merge work on raw bytes throughout: the file read (the state, or
// each part of a merge) mapped into memory (MappedFile), walked member by member
// (JSONMemberCursor) and copied out by byte range.
// Relies on the mapping outliving every cursor and range taken from it, and on every range
// coming from the scanner, which keeps its indexes inside the bytes.

/// A JSON state's members, read one at a time from its bytes: the key's and the value's byte
/// ranges, nothing parsed (the caller parses what it needs). The bytes are scanned by
/// ``JSONScanner``; this cursor pulls one member at a time, so that a merge can read its
/// parts side by side.
struct JSONMemberCursor {
    let b: UnsafeRawBufferPointer
    private(set) var i: Int
    private var started = false
    private(set) var finished = false

    /// A cursor at the object that starts at `start` (after whitespace); nil when there is
    /// no `{` there.
    init?(_ b: UnsafeRawBufferPointer, at start: Int) {
        self.b = b
        i = start
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
    }

    enum Step {
        case member(key: Range<Int>, value: Range<Int>)
        /// The object ended; the index after its `}`.
        case end(Int)
        case malformed
    }

    /// The next member, the object's end, or `.malformed`.
    mutating func next() -> Step {
        guard case .member(let key, let start)? = nextKey() else { return finished ? .end(i) : .malformed }
        guard skipValue() else { return .malformed }
        return .member(key: key, value: start.lowerBound..<i)
    }

    /// The next member's key and where its value starts, without reading the value (the
    /// cursor is then at it: call ``skipValue()``, or stop); nil at the object's end (then
    /// ``finished``, and ``i`` is after its `}`) or when malformed.
    mutating func nextKey() -> Step? {
        guard !finished else { return nil }
        skipSpace()
        guard i < b.count else { return nil }
        if started {
            if b[i] == UInt8(ascii: "}") {
                finished = true
                i += 1
                return nil
            }
            guard b[i] == UInt8(ascii: ",") else { return nil }
            i += 1
            skipSpace()
        } else {
            started = true
            if b[i] == UInt8(ascii: "}") {
                finished = true
                i += 1
                return nil
            }
        }
        let keyStart = i
        guard skipString() else { return nil }
        let key = keyStart..<i
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
        i += 1
        skipSpace()
        return .member(key: key, value: i..<i)
    }

    private mutating func skipSpace() { i = JSONScanner(b).skipSpace(i) }

    private mutating func skipString() -> Bool {
        guard let end = JSONScanner(b).stringEnd(i)?.end else { return false }
        i = end
        return true
    }

    /// Moves past the value that starts at the cursor; false when it is not well-formed.
    mutating func skipValue() -> Bool {
        guard let end = JSONScanner(b).valueEnd(i) else { return false }
        i = end
        return true
    }
}

/// One JSON state (whole or part) opened for a split or merge: its members before
/// `accounts`, checked, and a cursor at its accounts.
struct JSONStateReader {
    let path: String
    let file: MappedFile
    /// `rules` as recorded (nil: none).
    let rules: JSONValue?
    let partition: StatePartition?
    /// The inputs applied and the queue offset (``StateRecords``).
    let records: StateRecords
    var accounts: JSONMemberCursor
    private let parser = JSONParser()
    /// The account read by ``next()``: its id, the id's UTF-8 bytes, and the byte ranges of
    /// its key and value.
    private(set) var current: (id: String, bytes: [UInt8], key: Range<Int>, value: Range<Int>)? = nil

    /// Opens `path`, a version 2 state as BadgeFlow writes it (`format`, `version`, `rules`,
    /// `partition` before `accounts`).
    init(_ path: String) throws(StateSplit.Failure) {
        self.path = path
        guard let mapped = MappedFile(path) else {
            guard FileIO.exists(path) else { throw .state(StateFile.Failure(file: path, at: "", message: "no such state file")) }
            throw .io(FileIO.Failure(path: path, message: "cannot read it (not a regular file, or unreadable)"))
        }
        file = mapped
        let b = mapped.bytes
        var top = JSONMemberCursor(b, at: 0)
        var others: [(String, JSONValue)] = []
        var found: JSONMemberCursor? = nil
        // The members before `accounts`; `accounts` itself is not scanned here (it is most
        // of the file): its cursor reads it account by account.
        scan: while var cursor = top {
            guard case .member(let key, let start)? = cursor.nextKey(), case .string(let name)? = Self.parse(b, key) else { break scan }
            if name == "accounts" {
                found = JSONMemberCursor(b, at: start.lowerBound)
                break scan
            }
            guard cursor.skipValue(), let v = Self.parse(b, start.lowerBound..<cursor.i) else { break scan }
            others.append((name, v))
            top = cursor
        }
        let root = JSONValue.object(others)
        guard let found, root["format"] == .string(StateFile.format), root["version"] == .int(StateFile.version) else {
            throw Self.whyNotStreamed(path)
        }
        accounts = found
        rules = root["rules"]
        if let rules {
            do { _ = try RuleSet.parse(rules.serialized(pretty: true), file: path + " (recorded rules)") } catch {
                throw .state(StateFile.Failure(file: path, at: "/rules" + error.at, message: error.message))
            }
        }
        do throws(StateFile.Failure) {
            partition = try root["partition"].map { v throws(StateFile.Failure) in try StatePartition(json: v, file: path) }
        } catch {
            throw .state(error)
        }
        records = StateRecords(inputs: root["inputs"], offset: root["offset"].flatMap { if case .string(let s) = $0 { s } else { nil } })
    }

    /// The error for a file the streamed read does not take: the loader's exact one, or,
    /// for a file it loads (version 1, members in another order), what to do.
    private static func whyNotStreamed(_ path: String) -> StateSplit.Failure {
        do {
            let rules = try StateFile.recordedRules(path) ?? RuleSet.builtIn
            _ = try StateFile.load(path, rules: rules, only: [])
        } catch {
            return .state(error)
        }
        return .state(
            StateFile.Failure(
                file: path, at: "",
                message:
                    "not laid out as this BadgeFlow writes a version \(StateFile.version) state (format, version and rules before accounts); load and save it once (`badgeflow filter --state \(path) < /dev/null`), then split it"
            ))
    }

    private static func parse(_ b: UnsafeRawBufferPointer, _ r: Range<Int>) -> JSONValue? {
        try? JSONValue.parse(String(decoding: UnsafeRawBufferPointer(rebasing: b[r]), as: UTF8.self))
    }

    /// Moves to the next account (``current``); false at the end of `accounts`, after
    /// which the rest of the file is checked.
    ///
    /// - Throws: `.state` for a syntax error, an account whose text json-c does not take, or
    ///   an id with U+0000.
    mutating func next() throws(StateSplit.Failure) -> Bool {
        let b = file.bytes
        switch accounts.next() {
        case .member(let key, let value):
            let id: String
            if let plain = Self.plainKey(b, key) {
                id = plain
            } else {
                guard case .string(let decoded)? = Self.parse(b, key), !decoded.utf8.contains(0) else {
                    throw .state(StateFile.Failure(file: path, at: "/accounts", message: "an account id is not a valid JSON string"))
                }
                id = decoded
            }
            let wellFormed = parser.withDocument(UnsafeRawBufferPointer(rebasing: b[value])) { document in
                if case .success(let v) = document { return v.kind == .object } else { return false }
            }
            guard wellFormed else {
                throw .state(
                    StateFile.Failure(
                        file: path, at: "/accounts/" + JSONPointer.escape(id), message: "the account is not a well-formed JSON object"))
            }
            current = (id, Array(id.utf8), key, value)
            return true
        case .end(let end):
            current = nil
            // The rest of the top-level object: only whitespace and `}` (the writer puts
            // `accounts` last).
            var i = end
            while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
            guard i < b.count, b[i] == UInt8(ascii: "}") else { throw Self.whyNotStreamed(path) }
            i += 1
            while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
            guard i == b.count else { throw Self.whyNotStreamed(path) }
            return false
        case .malformed:
            throw Self.whyNotStreamed(path)
        }
    }

    /// Gives back the pages read so far.
    func release() {
        if let current { file.release(through: current.value.upperBound) }
    }

    private static func plainKey(_ b: UnsafeRawBufferPointer, _ r: Range<Int>) -> String? {
        guard r.count >= 2 else { return nil }
        let inner = UnsafeRawBufferPointer(rebasing: b[(r.lowerBound + 1)..<(r.upperBound - 1)])
        for c in inner where c < 0x20 || c >= 0x7F || c == UInt8(ascii: "\\") || c == UInt8(ascii: "\"") { return nil }
        return String(decoding: inner, as: UTF8.self)
    }
}

/// Writes a JSON state as ``StateFile/save(_:to:)`` lays it out, one account's text at a
/// time.
struct JSONStateWriter {
    let writer: FileIO.AtomicWriter
    private var count = 0

    /// Starts `path` with the members before `accounts`: `format`, `version`, `rules`,
    /// `partition` (what ``StateFile/text(_:)`` writes, in its order).
    init(_ path: String, rules: JSONValue?, partition: StatePartition?, records: StateRecords = StateRecords()) throws(StateSplit.Failure) {
        do { writer = try FileIO.AtomicWriter(path) } catch { throw .io(error) }
        var top: [(String, JSONValue)] = [("format", .string(StateFile.format)), ("version", .int(StateFile.version))]
        if let rules { top.append(("rules", rules)) }
        if let partition { top.append(("partition", partition.jsonValue)) }
        if records.numbered { top.append(("offset", .string("numbered"))) }
        if !records.inputs.isEmpty { top.append(("inputs", records.inputsJSON)) }
        top.append(("accounts", .object([])))
        let text = JSONValue.object(top).serialized(pretty: true)
        // The pretty text ends with the empty accounts object.
        let tail = "{\n  }\n}"
        guard text.hasSuffix(tail) else {
            throw .io(FileIO.Failure(path: path, message: "the state's head could not be laid out (an internal error)"))
        }
        do { try writer.write(text.utf8.dropLast(tail.utf8.count)) } catch { throw .io(error) }
    }

    /// Appends one account: its key and value as they stand in `b`.
    mutating func append(_ b: UnsafeRawBufferPointer, key: Range<Int>, value: Range<Int>) throws(StateSplit.Failure) {
        do {
            try writer.write((count == 0 ? "{\n    " : ",\n    ").utf8)
            try writer.write(UnsafeRawBufferPointer(rebasing: b[key]))
            try writer.write(": ".utf8)
            try writer.write(UnsafeRawBufferPointer(rebasing: b[value]))
        } catch {
            throw .io(error)
        }
        count += 1
    }

    /// Ends the document and syncs it (``commit()`` puts it in place).
    func finish() throws(StateSplit.Failure) {
        do {
            try writer.write((count == 0 ? "{\n  }\n}\n" : "\n  }\n}\n").utf8)
            try writer.prepare()
        } catch {
            throw .io(error)
        }
    }

    func commit() throws(StateSplit.Failure) {
        do { try writer.commit() } catch { throw .io(error) }
    }
}

extension StateSplit {
    static func splitJSON(_ file: String, into paths: [String]) throws(Failure) {
        var reader = try JSONStateReader(file)
        if let p = reader.partition {
            throw .state(StateFile.Failure(file: file, at: "/partition", message: "already a split state's \(p); merge its parts first"))
        }
        var writers: [JSONStateWriter] = []
        for (i, path) in paths.enumerated() {
            writers.append(
                try JSONStateWriter(
                    path, rules: reader.rules, partition: StatePartition(parts: paths.count, index: i), records: reader.records))
        }
        let b = reader.file.bytes
        while try reader.next() {
            guard let a = reader.current else { break }
            let p = StatePartition.index(of: a.id, parts: paths.count)
            try writers[p].append(b, key: a.key, value: a.value)
            reader.release()
        }
        for w in writers { try w.finish() }
        for w in writers { try w.commit() }
    }

    static func mergeJSON(_ paths: [String], into out: String) throws(Failure) {
        var opened: [(path: String, partition: StatePartition?, value: JSONStateReader)] = []
        for path in paths {
            let r = try JSONStateReader(path)
            opened.append((path, r.partition, r))
        }
        let parts = try ordered(opened)
        var readers = parts.map(\.value)
        let rules = readers[0].rules
        for r in readers where r.rules != rules {
            throw .state(
                StateFile.Failure(
                    file: r.path, at: "/rules",
                    message: "its rules differ from \(readers[0].path)'s; the parts of one split were run with the same rules"))
        }
        var writer = try JSONStateWriter(out, rules: rules, partition: nil, records: StateRecords(merging: readers.map(\.records)))
        var live: [Int] = []
        for i in readers.indices where try readers[i].next() { live.append(i) }
        while !live.isEmpty {
            // The smallest id among the parts' current accounts (P is small: a linear scan).
            var best = 0
            for k in 1..<live.count {
                guard let a = readers[live[k]].current, let m = readers[live[best]].current else { continue }
                if a.bytes.lexicographicallyPrecedes(m.bytes) { best = k }
            }
            let i = live[best]
            guard let a = readers[i].current else { break }
            let partition = parts[i].partition
            guard partition.holds(a.id) else {
                throw misplaced(a.id, in: partition, path: readers[i].path, at: "/accounts/" + JSONPointer.escape(a.id))
            }
            for k in live where k != i && readers[k].current?.bytes == a.bytes {
                throw .state(
                    StateFile.Failure(
                        file: readers[k].path, at: "/accounts/" + JSONPointer.escape(a.id),
                        message: "account \(JSONValue.string(a.id).serialized()) is also in \(readers[i].path); the parts overlap"))
            }
            try writer.append(readers[i].file.bytes, key: a.key, value: a.value)
            readers[i].release()
            if try !readers[i].next() { live.remove(at: best) }
        }
        try writer.finish()
        try writer.commit()
    }
}
