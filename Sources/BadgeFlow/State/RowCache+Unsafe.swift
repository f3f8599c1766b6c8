// RowCache works on raw bytes throughout: a row's JSON and cache columns as borrowed
// buffers (SQLite's blobs), hashed and decoded in place. Relies on the buffers staying valid
// for the call (the statement's row is not stepped meanwhile) and on every index being checked
// against the cache's count (the header first).

/// The decode cache of an SQLite state's rows (`accounts.compact`): the account in
/// ``AccountCodec``'s binary form, written beside its JSON (`accounts.data`) in the same
/// statement.
///
/// The JSON stays the row's content, what the `sqlite3` shell shows and edits; the cache
/// only saves parsing it. Reading an account's JSON costs about ten times what reading its
/// binary form does (json-c builds a hash table per object, then every path is checked and
/// hashed again), and a fleet larger than `--max-resident` reads a row for most events.
///
/// A cache is used only when it matches: its first byte is ``tag``, then a 64-bit FNV-1a
/// hash, seeded by the rules and this release (``seed(_:)``), of the row's JSON text followed
/// by the binary form. JSON edited by hand, a row written by another release or under other
/// rules, or damaged bytes fail the check, and the JSON is read as it would be without a
/// cache. A writer rewrites both columns at its next commit of the account.
enum RowCache {
    /// The cache's format; change it whenever ``AccountCodec``'s encoding changes, so that
    /// no build reads another's bytes.
    static let tag: UInt8 = 2
    /// Bytes before the binary form: the tag and the hash.
    static let header = 9

    /// The hash seed for accounts read and written with `rules` (computed once, as
    /// ``RuleSet/rowCacheSeed``): the rules' JSON (their
    /// ``RuleSet/fingerprint``) and this release, since both decide what the JSON decodes
    /// to (display and contribution modes, the encoding). Nil for rules built in code, which
    /// have no text: their rows are written and read without a cache.
    static func seed(_ rules: RuleSet) -> UInt64? {
        let fingerprint = rules.fingerprint
        guard !fingerprint.isEmpty else { return nil }
        let h = Array("badgeflow \(BadgeFlowRelease.version) \(tag)\n".utf8).withUnsafeBytes { fnv(offset, $0) }
        return Array(fingerprint.utf8).withUnsafeBytes { fnv(h, $0) }
    }

    private static let offset: UInt64 = 0xcbf2_9ce4_8422_2325

    /// FNV-1a, 64 bits, over `bytes`, continuing from `h`.
    private static func fnv(_ h: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h = h
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    /// Replaces `out` with the cache of `account`, whose JSON text is `json`.
    ///
    /// - Returns: the account's devices and marks, counted while encoding it.
    @discardableResult
    static func encode(_ account: Account, json: UnsafeRawBufferPointer, seed: UInt64, into out: inout [UInt8]) -> (
        devices: Int, marks: Int
    ) {
        // The tag, room for the hash, then the binary form, written into one buffer.
        var w = CompactWriter(capacity: max(out.count * 2, 256))
        w.byte(tag)
        for _ in 0..<8 { w.byte(0) }
        let counts = AccountCodec.encode(account, into: &w)
        w.withWritten { bytes in
            let h = fnv(fnv(seed, json), UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: bytes[header...])))
            for i in 0..<8 { bytes[1 + i] = UInt8(truncatingIfNeeded: h >> (8 * UInt64(i))) }
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: bytes)
        }
        return counts
    }

    /// The account `cache` holds, when it is the cache of the row whose JSON text is `json`
    /// (same text, rules and release, and the bytes intact); nil otherwise.
    static func decode(_ cache: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer, seed: UInt64, rules: RuleSet) -> Account? {
        guard cache.count > header, cache[0] == tag else { return nil }
        var stored: UInt64 = 0
        for i in 0..<8 { stored |= UInt64(cache[1 + i]) << (8 * UInt64(i)) }
        let body = UnsafeRawBufferPointer(rebasing: cache[header...])
        guard fnv(fnv(seed, json), body) == stored else { return nil }
        // JSON the parser refuses (a key holding \u0000, which earlier builds let through)
        // is not served from a cache made of it: the JSON path reports it.
        guard JSONScanner.keyHoldingNUL(json) == nil else { return nil }
        return AccountCodec.decode(body, rules: rules)
    }
}
