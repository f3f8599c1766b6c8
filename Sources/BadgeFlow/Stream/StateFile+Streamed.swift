/// Loading a version 2 state file one account at a time: the file's bytes are scanned for
/// the members of the top-level object and of `accounts`, and each account is parsed on its
/// own, so memory beyond the file's bytes and the loaded accounts stays at one account's
/// JSON tree, not the whole document's.
///
/// Anything unexpected (a syntax error, another version, a value of the wrong shape outside
/// the accounts) sends the caller to the whole-document path, which reports it exactly.
extension StateFile {
    /// The key whose quoted bytes are `r` when they are printable ASCII with no escape (the
    /// bytes are then the key itself); nil otherwise, for json-c to read.
    private static func plainKey(_ b: UnsafeRawBufferPointer, _ r: Range<Int>) -> String? {
        guard r.count >= 2 else { return nil }
        let inner = UnsafeRawBufferPointer(rebasing: b[(r.lowerBound + 1)..<(r.upperBound - 1)])
        for c in inner where c < 0x20 || c >= 0x7F || c == UInt8(ascii: "\\") || c == UInt8(ascii: "\"") { return nil }
        return String(decoding: inner, as: UTF8.self)
    }

    private static func skipSpace(_ b: UnsafeRawBufferPointer, _ i: inout Int) {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    private static func skipString(_ b: UnsafeRawBufferPointer, _ i: inout Int) -> Bool {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return false }
        i += 1
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""): i += 1; return true
            default: i += 1
            }
        }
        return false
    }

    private static func skipValue(_ b: UnsafeRawBufferPointer, _ i: inout Int) -> Bool {
        guard i < b.count else { return false }
        switch b[i] {
        case UInt8(ascii: "\""):
            return skipString(b, &i)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while i < b.count {
                switch b[i] {
                case UInt8(ascii: "\""):
                    guard skipString(b, &i) else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { i += 1; return true }
                default: break
                }
                i += 1
            }
            return false
        default:
            let start = i
            while i < b.count,
                !(b[i] == UInt8(ascii: ",") || b[i] == UInt8(ascii: "}") || b[i] == UInt8(ascii: "]")
                    || b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09)
            { i += 1 }
            return i > start
        }
    }

    private static func value(_ b: UnsafeRawBufferPointer, _ r: Range<Int>) -> JSONValue? {
        try? JSONValue.parse(String(decoding: UnsafeRawBufferPointer(rebasing: b[r]), as: UTF8.self))
    }

    /// The recorded rules' JSON of a version 2 file, read without parsing its accounts;
    /// `.some(nil)` when it records none; nil when the whole document must be read (not a
    /// version 2 file, or not well-formed). The accounts are only scanned, and their pages
    /// given back as the scan passes them, so a fleet's file is never resident at once.
    static func streamedRules(_ file: MappedFile) -> JSONValue?? {
        let b = file.bytes
        var others: [(String, JSONValue)] = []
        var sawAccounts = false
        guard
            var rest = forEachMember(
                b, from: 0,
                { key, start in
                    guard case .string(let name)? = value(b, key), !name.utf8.contains(0) else { return nil }
                    guard name == "accounts" else {
                        guard let end = valueEnd(b, from: start), let v = value(b, start..<end) else { return nil }
                        others.append((name, v))
                        return end
                    }
                    sawAccounts = true
                    return forEachMember(b, from: start) { _, accountStart in
                        guard let end = valueEnd(b, from: accountStart) else { return nil }
                        file.release(through: end)
                        return end
                    }
                })
        else { return nil }
        skipSpace(b, &rest)
        let root = JSONValue.object(others)
        guard rest == b.count, sawAccounts, root["format"] == .string(format), root["version"] == .int(version) else { return nil }
        return .some(root["rules"])
    }

    /// Calls `body` with each member of the object that starts at `start` (after
    /// whitespace): the key's byte range and where its value starts; `body` reads the value
    /// and returns where it ends (nil: stop). Returns the index after the object's `}`;
    /// nil when the bytes are not a well-formed object there or `body` stopped.
    ///
    /// Nothing is scanned ahead of `body`: a large value is read once, as `body` reads it.
    static func forEachMember(
        _ b: UnsafeRawBufferPointer, from start: Int, _ body: (Range<Int>, Int) -> Int?
    ) -> Int? {
        var i = start
        skipSpace(b, &i)
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        skipSpace(b, &i)
        if i < b.count, b[i] == UInt8(ascii: "}") { return i + 1 }
        while true {
            skipSpace(b, &i)
            let keyStart = i
            guard skipString(b, &i) else { return nil }
            let key = keyStart..<i
            skipSpace(b, &i)
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace(b, &i)
            guard let end = body(key, i) else { return nil }
            i = end
            skipSpace(b, &i)
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { return i + 1 }
            return nil
        }
    }

    /// Where the value that starts at `start` ends; nil when it is not well-formed.
    private static func valueEnd(_ b: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var i = start
        return skipValue(b, &i) ? i : nil
    }

    /// Loads a version 2 file one account at a time, reading the file once front to back
    /// and giving its pages back as it goes (``MappedFile``): memory is the accounts loaded
    /// plus a window of the file. Nil when the whole-document path must decide (another
    /// version, a syntax error, `accounts` before `format` and `version`, a malformed
    /// account's JSON). With `only`, other accounts are skipped after a scan of their bytes.
    static func streamedLoad(
        _ file: MappedFile, path: String, rules: RuleSet, compact: Bool, only: Set<String>? = nil
    ) throws(Failure) -> BadgeStream? {
        var stream = BadgeStream(rules: rules)
        var failure: Failure? = nil
        let b = file.bytes
        var others: [(String, JSONValue)] = []
        var sawAccounts = false
        let end = forEachMember(b, from: 0) { key, start in
            guard case .string(let name)? = value(b, key), !name.utf8.contains(0) else { return nil }
            guard name == "accounts" else {
                guard let end = valueEnd(b, from: start), let v = value(b, start..<end) else { return nil }
                others.append((name, v))
                return end
            }
            let root = JSONValue.object(others)
            guard !sawAccounts, root["format"] == .string(format), root["version"] == .int(version) else { return nil }
            sawAccounts = true
            // Each account is parsed by json-c and read in place (no JSONValue tree).
            let parser = JSONParser()
            func wellFormed(_ r: Range<Int>) -> Bool {
                parser.withDocument(UnsafeRawBufferPointer(rebasing: b[r])) { document in
                    if case .success = document { return true } else { return false }
                }
            }
            return forEachMember(b, from: start) { idRange, accountStart in
                guard let end = valueEnd(b, from: accountStart) else { return nil }
                // An account passed over (not asked for, or after one that failed) is still
                // parsed by json-c: a syntax error anywhere is the whole file's error.
                func skip() -> Int? {
                    guard wellFormed(accountStart..<end) else { return nil }
                    file.release(through: end)
                    return end
                }
                if failure != nil { return skip() }
                if let only, let id = plainKey(b, idRange), !only.contains(id) { return skip() }
                // An id with U+0000 goes to the whole-document path, which refuses it.
                guard case .string(let id)? = value(b, idRange), !id.utf8.contains(0) else { return nil }
                if let only, !only.contains(id) { return skip() }
                let decoded: Result<Account, Failure>? = parser.withDocument(UnsafeRawBufferPointer(rebasing: b[accountStart..<end])) {
                    document in
                    guard case .success(let root) = document else { return nil }
                    do throws(Failure) {
                        return .success(try account(root, at: "/accounts/" + JSONPointer.escape(id), file: path, rules: rules))
                    } catch {
                        return .failure(error)
                    }
                }
                switch decoded {
                case nil: return nil
                case .failure(let error)?:
                    // Reported once the rest of the file is known to be well-formed (else
                    // the whole-document path reports the syntax error, as it would).
                    failure = error
                case .success(let a)?:
                    stream.addLoaded(a, as: id, compact: compact)
                }
                file.release(through: end)
                return end
            }
        }
        guard var rest = end, sawAccounts else { return nil }
        skipSpace(b, &rest)
        // A member after `accounts` counts too: the last `format` and `version` decide, as
        // in the whole document.
        let root = JSONValue.object(others)
        guard rest == b.count, root["format"] == .string(format), root["version"] == .int(version) else { return nil }
        if let failure { throw failure }
        stream.partition = try root["partition"].map { v throws(Failure) in try StatePartition(json: v, file: path) }
        return stream
    }
}
