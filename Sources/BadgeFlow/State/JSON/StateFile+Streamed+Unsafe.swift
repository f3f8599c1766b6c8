// StateFile's streamed load works on raw bytes throughout: the state file mapped into memory
// (MappedFile), scanned by JSONScanner and each account parsed by json-c from a slice of it.
// Relies on the mapping staying valid while any slice of it is read (the file's pages are
// released only up to an account already read), and on every range coming from the scanner,
// which keeps its indexes inside the bytes.

/// Loading a version 2 state file one account at a time: the file's bytes are scanned
/// (`JSONScanner`) for the members of the top-level object and of `accounts`, and each account is parsed on its
/// own, so memory beyond the file's bytes and the loaded accounts stays at one account's
/// JSON tree, not the whole document's.
///
/// Anything unexpected (a syntax error, another version, a value of the wrong shape outside
/// the accounts) sends the caller to the whole-document path, which reports it exactly.
extension StateFile {
    private static func value(_ b: UnsafeRawBufferPointer, _ r: Range<Int>) -> JSONValue? {
        try? JSONValue.parse(String(decoding: UnsafeRawBufferPointer(rebasing: b[r]), as: UTF8.self))
    }

    /// The recorded rules' JSON of a version 2 file, read without parsing its accounts;
    /// `.some(nil)` when it records none; nil when the whole document must be read (not a
    /// version 2 file, or not well-formed). The accounts are only scanned, and their pages
    /// given back as the scan passes them, so a fleet's file is never resident at once.
    static func streamedRules(_ file: MappedFile) -> JSONValue?? {
        let b = file.bytes
        let scan = JSONScanner(b)
        var others: [(String, JSONValue)] = []
        var sawAccounts = false
        guard
            let end = scan.forEachMember(
                of: 0,
                { member in
                    guard case .string(let name)? = value(b, member.key), !name.utf8.contains(0) else { return nil }
                    guard name == "accounts" else {
                        guard let end = scan.valueEnd(member.value), let v = value(b, member.value..<end) else { return nil }
                        others.append((name, v))
                        return end
                    }
                    sawAccounts = true
                    return scan.forEachMember(of: member.value) { entry in
                        guard let end = scan.valueEnd(entry.value) else { return nil }
                        file.release(through: end)
                        return end
                    }
                })
        else { return nil }
        let root = JSONValue.object(others)
        guard scan.skipSpace(end) == b.count, sawAccounts, root["format"] == .string(format), root["version"] == .int(version)
        else { return nil }
        return .some(root["rules"])
    }

    /// Loads a version 2 file one account at a time, reading the file once front to back
    /// and giving its pages back as it goes (``MappedFile``): memory is the accounts loaded
    /// plus a window of the file. Nil when the whole-document path must decide (another
    /// version, a syntax error, `accounts` before `format` and `version`, a malformed
    /// account's JSON). With `only`, other accounts are skipped after a scan of their bytes.
    ///
    /// With `batches`, the accounts are handed off `size` at a time: each time `size`
    /// accounts are loaded, `flush` gets a stream of them (without the partition record) and
    /// they are dropped, and the stream returned holds the rest, with the record. A flush
    /// that throws ends the load with its error. The accounts handed off before nil is
    /// returned or an error thrown are then not the whole state.
    static func streamedLoad(
        _ file: MappedFile, path: String, rules: RuleSet, compact: Bool, only: Set<String>? = nil,
        batches: (size: Int, flush: (BadgeStream) throws(Failure) -> Void)? = nil
    ) throws(Failure) -> BadgeStream? {
        var stream = BadgeStream(rules: rules)
        var failure: Failure? = nil
        var flushFailure: Failure? = nil
        let b = file.bytes
        let scan = JSONScanner(b)
        var others: [(String, JSONValue)] = []
        var sawAccounts = false
        let end = scan.forEachMember(of: 0) { member in
            guard case .string(let name)? = value(b, member.key), !name.utf8.contains(0) else { return nil }
            guard name == "accounts" else {
                guard let end = scan.valueEnd(member.value), let v = value(b, member.value..<end) else { return nil }
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
            return scan.forEachMember(of: member.value) { entry in
                let accountStart = entry.value
                guard let end = scan.valueEnd(accountStart) else { return nil }
                // An account passed over (not asked for, or after one that failed) is still
                // parsed by json-c: a syntax error anywhere is the whole file's error.
                func skip() -> Int? {
                    guard wellFormed(accountStart..<end) else { return nil }
                    file.release(through: end)
                    return end
                }
                if failure != nil { return skip() }
                if let only, let id = scan.plainKey(entry.key), !only.contains(id) { return skip() }
                // An id with U+0000 goes to the whole-document path, which refuses it.
                guard case .string(let id)? = value(b, entry.key), !id.utf8.contains(0) else { return nil }
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
                    if let batches, stream.accountCount >= batches.size {
                        do throws(Failure) { try batches.flush(stream) } catch {
                            flushFailure = error
                            return nil
                        }
                        stream = BadgeStream(rules: rules)
                    }
                }
                file.release(through: end)
                return end
            }
        }
        if let flushFailure { throw flushFailure }
        guard let end, sawAccounts else { return nil }
        // A member after `accounts` counts too: the last `format` and `version` decide, as
        // in the whole document.
        let root = JSONValue.object(others)
        guard scan.skipSpace(end) == b.count, root["format"] == .string(format), root["version"] == .int(version) else { return nil }
        if let failure { throw failure }
        stream.partition = try root["partition"].map { v throws(Failure) in try StatePartition(json: v, file: path) }
        stream.records = StateRecords(
            inputs: root["inputs"], offset: root["offset"].flatMap { if case .string(let s) = $0 { s } else { nil } })
        return stream
    }
}
