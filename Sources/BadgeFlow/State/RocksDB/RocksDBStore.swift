private import CRocksDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A state kept in a RocksDB database (`--state FILE.rocksdb`, a folder), for fleets.
///
/// This file owns every `rocksdb_*` call of BadgeFlow, as ``SQLiteStore`` owns SQLite's.
///
/// One key space, three kinds of keys, told apart by their first byte:
///
/// - `0x00` + name: meta, UTF-8 text: `format` (`badgeflow-state`), `version` (of the
///   per-account encoding, ``StateFile/version``), `layout` (``layout``), `rules` (the
///   rules' JSON text), `rules@SEED` (every rules text the state's values were written
///   under, by `seed(_:)` in hex), `seq`, `input`, `accounts`, `devices`, `marks` and
///   `writer`, as in an SQLite state's `meta` table;
/// - `0x01` + account id: the account in `AccountCodec`'s binary form, behind the check of
///   `RowCache` (a tag and a 64-bit hash seeded by `seed(_:)` of the rules it was written
///   under), so damaged bytes or a value of other rules are never read as an account;
/// - `0x02` + account id: when the account's first expiring mark may be due (a `Double`,
///   8 bytes little-endian), for a fleet-wide `expire` (``accountsDue(through:)``).
///
/// A checkpoint is one `WriteBatch`: the changed accounts, their due entries and the meta
/// (seq, input, totals, rules when they changed), written without RocksDB's write-ahead log
/// and flushed to a table file at once (`durability`): the flush is recorded in RocksDB's
/// manifest in one synced write, so after a crash the batch is all there or none of it is.
/// (A batch whose flush failed, on a full disk, stays in memory; should room come back
/// before the store closes, RocksDB's flush at close writes it. Its seq is never ahead of
/// the results written, as for any checkpoint.)
///
/// One process writes (RocksDB's `LOCK` file, beside the project's `StateLock`); its
/// threads share the one handle (RocksDB's reads and writes are thread-safe), so
/// the read-ahead and the committer of a filter run take the store, not a path. Other
/// processes read through a read-only open, which sees the last checkpoint committed when
/// it opened and never blocks the writer.
///
/// Unchecked Sendable: the handle and options are set in `init` and freed by ``close()``,
/// which the owner calls after the threads sharing the store are joined; RocksDB's calls on
/// them are thread-safe, and the meta the threads share is behind a `Locked`.
package final class RocksDBStore: AccountSource, @unchecked Sendable {
    /// The database folder's path.
    public let path: String
    /// Whether this handle only reads.
    public let isReadOnly: Bool
    /// The key layout written into meta (`layout`): 2 since values are checked by a hash
    /// taken 8 bytes at a time (`check`, format byte `valueTag`). A state of layout 1 (values checked by FNV-1a) is
    /// read too, and becomes layout 2 with its first checkpoint, in the same batch as the
    /// first values of the new form; a build that reads only layout 1 then refuses it at
    /// open, by its layout, instead of taking every new value for a damaged one.
    public static let layout = 2

    /// The first byte of a value of layout 2: the binary form's version (``RowCache/tag``)
    /// with the high bit set. Then come 8 bytes of ``check(_:_:)`` of the binary form seeded
    /// with the rules it was written under (``seed(_:)``), little-endian, then the binary
    /// form. A layout 1 value starts with ``RowCache/tag`` and an FNV-1a hash instead, which
    /// goes a byte at a time: on the fleet bench hashing each value read and written took
    /// about 2% of the run's CPU.
    static let valueTag: UInt8 = 0x80 | RowCache.tag
    /// The bytes of a value before the binary form.
    static let valueHeader = 9

    /// The check of a layout 2 value: its binary form `bytes` hashed 8 bytes at a time
    /// (little-endian words, the last one padded with zeros), starting from `seed` and the
    /// length. Each step (xor a word, multiply by an odd constant, xor-shift) is a bijection
    /// of the running hash, so a value with one word changed never passes, and one with
    /// several does by chance (2⁻⁶⁴). The form is part of the state format: never change it.
    static func check(_ seed: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let k: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = seed ^ (UInt64(bytes.count) &* k)
        var at = 0
        while at + 8 <= bytes.count {
            h = (h ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))) &* k
            h ^= h >> 29
            at += 8
        }
        if at < bytes.count {
            var last: UInt64 = 0
            for i in at..<bytes.count { last |= UInt64(bytes[i]) << (8 * UInt64(i - at)) }
            h = (h ^ last) &* k
            h ^= h >> 29
        }
        return h ^ (h >> 32)
    }

    /// RocksDB's memory for a writer: the block cache for data blocks (index and filter
    /// blocks stay with their table files), unless `filter --block-cache` sets it.
    public static let blockCacheBytes = 64 << 20
    /// Each memtable; at most two exist.
    static let memtableBytes = 32 << 20

    private var db: OpaquePointer?
    private var family: OpaquePointer?
    private var options: OpaquePointer?
    private var table: OpaquePointer?
    private var cache: OpaquePointer?
    private var readOptions: OpaquePointer?
    private var writeOptions: OpaquePointer?
    private var flushOptions: OpaquePointer?

    /// What threads share: the meta as last committed, and the rules of `rules@SEED` keys.
    private struct Shared {
        var meta: [String: String] = [:]
        var rulesBySeed: [UInt64: RuleSet] = [:]
    }
    private let shared = Locked(Shared())

    /// The block cache's size in bytes: for a writer ``blockCacheBytes`` unless set with
    /// ``setBlockCache(bytes:)``, 8 MiB for a read-only handle.
    public var blockCacheCapacity: Int { cache.map { Int(rocksdb_cache_get_capacity($0)) } ?? 0 }

    /// Sets the block cache's size to `bytes` (RocksDB shrinks it at once when smaller).
    public func setBlockCache(bytes: Int) {
        guard let cache, bytes > 0 else { return }
        rocksdb_cache_set_capacity(cache, bytes)
    }

    /// Meta as read at open time and updated by each commit.
    public var meta: [String: String] { shared.withLock { $0.meta } }

    /// How a checkpoint reaches the disk. `syncedLog`: the batch goes to the write-ahead
    /// log, synced; `flushedTables`: no log, the memtable is flushed to a table file after
    /// each batch.
    enum Durability { case syncedLog, flushedTables }

    /// The durability of checkpoints: no log, a flush per batch. Measured on a
    /// checkpoint-heavy run (100k accounts, 200k lines, `--max-resident 10000`,
    /// `--checkpoint 0.1`) both cost the same CPU (3.4-3.5 s), but with a synced log every
    /// read-only open (`state get`, `tree`) replays the log's unflushed memtables, up to
    /// 64 MiB: 0.6-0.85 s a read instead of 30-45 ms (Benchmarks/README.md, "Fleet state").
    static let durability: Durability = .flushedTables

    /// Turns off RocksDB's per-thread performance counters on the calling thread (its
    /// `perf_level`, a thread-local that starts at counting): each counted step reaches the
    /// counters through `__tls_get_addr`, as the library is loaded as a shared object.
    /// Callgrind, 100k accounts: 6.5% of a reader's instructions, 4.8% of the commit's.
    static func countNothing() {
        rocksdb_set_perf_level(Int32(rocksdb_disable))
    }

    /// True when `path` names a RocksDB state (ends in `.rocksdb`).
    public static func isRocksDBPath(_ path: String) -> Bool { path.hasSuffix(".rocksdb") }

    /// The seed of the values' check for `rules`: their fingerprint and the tag of the
    /// binary form (``RowCache/tag``), not the release (values outlive a release).
    static func seed(_ rules: RuleSet) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in "badgeflow-rocksdb \(RowCache.tag)\n".utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        for b in rules.fingerprint.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    private func failure(_ what: String, _ error: UnsafeMutablePointer<CChar>?) -> StateFile.Failure {
        var reason = "unknown error"
        if let error {
            reason = String(cString: error)
            rocksdb_free(error)
        }
        return StateFile.Failure(file: path, at: "", message: "\(what): \(reason)")
    }

    /// Opens (for writing, creating) the state folder at `path` and checks that it is a
    /// BadgeFlow state of a version this build reads.
    ///
    /// - Parameters:
    ///   - path: the folder.
    ///   - readOnly: open for reading only (a missing folder is then an error); sees the last
    ///     checkpoint committed before this call, while another process may write.
    /// - Throws: `StateFile.Failure` when `path` is a file, a folder that RocksDB did not
    ///   make, a RocksDB database that is not a BadgeFlow state or of another version, or in
    ///   use by another writer; nothing is written then.
    public init(path: String, readOnly: Bool = false) throws(StateFile.Failure) {
        self.path = path
        isReadOnly = readOnly
        // The opening thread is the one that reads an account now and then (not read ahead).
        Self.countNothing()
        try Self.checkFolder(path, readOnly: readOnly)
        cache = rocksdb_cache_create_lru(readOnly ? 8 << 20 : Self.blockCacheBytes)
        table = rocksdb_block_based_options_create()
        rocksdb_block_based_options_set_block_cache(table, cache)
        // Index and filter blocks stay with their table (not in the block cache): in the
        // cache, data blocks pushed them out, and each reload hashed a whole filter block
        // (its checksum) again: a third of the readers' CPU on the fleet bench. They are
        // small (~2 MiB for 1M accounts) and live as long as their table file.
        rocksdb_block_based_options_set_cache_index_and_filter_blocks(table, 0)
        rocksdb_block_based_options_set_filter_policy(table, rocksdb_filterpolicy_create_bloom_full(10))
        // A full key every 4 entries of a data block instead of 16: a read's binary search
        // then ends within 4 keys rather than scanning up to 16 delta-encoded ones (readers
        // -10% of instructions under callgrind; the state 1% larger). Any interval reads back.
        rocksdb_block_based_options_set_block_restart_interval(table, 4)
        options = rocksdb_options_create()
        rocksdb_options_set_create_if_missing(options, readOnly ? 0 : 1)
        rocksdb_options_set_block_based_table_factory(options, table)
        rocksdb_options_set_write_buffer_size(options, Self.memtableBytes)
        rocksdb_options_set_max_write_buffer_number(options, 2)
        rocksdb_options_set_compression(options, Int32(rocksdb_no_compression))
        rocksdb_options_set_max_background_jobs(options, 2)
        // Universal (tiered) compaction: each checkpoint's flush makes a sorted run; once there
        // are 8, runs of like size are merged, and the whole state is rewritten when the newer
        // runs outgrow the oldest (`max_size_amplification_percent` 100). A full merge keeps
        // its inputs until its output is written, so the folder peaks near three times the
        // live data (fleet bench: 344 MB from a 102 MB state; leveled compaction 321 MB). A
        // fleet's keys are spread evenly, so leveled compaction rewrote the whole bottom
        // level every 8 flushes; universal rewrites less (fleet bench: compaction CPU
        // 1.86-2.10 -> 1.12-1.49 s; callgrind, 100k accounts: -45% of its instructions) for
        // a Bloom filter probe of each run a read passes. Leveled states open as they are
        // (each level is a sorted run) and are compacted this way from then on; a build
        // that compacts by level opens a state this one wrote too.
        rocksdb_options_set_compaction_style(options, Int32(rocksdb_universal_compaction))
        let universal = rocksdb_universal_compaction_options_create()
        rocksdb_universal_compaction_options_set_max_size_amplification_percent(universal, 100)
        rocksdb_options_set_universal_compaction_options(options, universal)
        rocksdb_universal_compaction_options_destroy(universal)
        // At most 8 runs before a merge (universal takes level 0's trigger as its count of
        // runs): fewer merges for a Bloom probe or two more per read.
        rocksdb_options_set_level0_file_num_compaction_trigger(options, 8)
        // A Bloom filter over each memtable's keys: a read of a key it does not hold (nearly
        // all of a fleet's) skips the skip list's search, which with a checkpoint's batch
        // in the memtable (or being flushed) cost the readers 18% of their instructions
        // (callgrind, 100k accounts, with universal compaction: readers -17%, the commit
        // +2.7% to fill the filter).
        rocksdb_options_set_memtable_prefix_bloom_size_ratio(options, 0.02)
        rocksdb_options_set_memtable_whole_key_filtering(options, 1)
        // RocksDB's info log (`LOG`) takes only the header written at open: Debian's
        // librocksdb 7.8 is built with assertions, and its logger aborts the process on the
        // write after a failed one (a full disk), where every other writer reports the error.
        rocksdb_options_set_info_log_level(options, 5)
        rocksdb_options_set_keep_log_file_num(options, 2)
        readOptions = rocksdb_readoptions_create()
        writeOptions = rocksdb_writeoptions_create()
        switch Self.durability {
        case .syncedLog: rocksdb_writeoptions_set_sync(writeOptions, 1)
        case .flushedTables: rocksdb_writeoptions_disable_WAL(writeOptions, 1)
        }
        flushOptions = rocksdb_flushoptions_create()
        rocksdb_flushoptions_set_wait(flushOptions, 1)
        do throws(StateFile.Failure) {
            // A folder RocksDB has not made a database in yet (empty, or a creation cut
            // short) is an empty state to a reader.
            if readOnly, !FileIO.exists(path + "/CURRENT") {
                shared.withLock { $0.meta = Self.newMeta }
                return
            }
            try open()
            try load()
        } catch {
            close()
            throw error
        }
    }

    /// Refuses a file, and a folder with content that RocksDB did not make (a folder of
    /// RocksDB's files without `CURRENT` is a creation cut short, made again); a reader also
    /// a missing folder.
    private static func checkFolder(_ path: String, readOnly: Bool) throws(StateFile.Failure) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            if readOnly { throw StateFile.Failure(file: path, at: "", message: "no such state folder") }
            return
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw StateFile.Failure(
                file: path, at: "",
                message: "not a RocksDB state: a .rocksdb state is a folder, and this is a file (name a new or RocksDB folder)")
        }
        if FileIO.exists(path + "/CURRENT") {
            try checkFiles(path)
            return
        }
        guard let dir = opendir(path) else {
            throw StateFile.Failure(file: path, at: "", message: "cannot read the folder: \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // RocksDB's own files without CURRENT: a creation cut short (a full disk).
            let own =
                ["LOCK", "IDENTITY", "LOG"].contains(name) || name.hasPrefix("LOG.old.") || name.hasPrefix("MANIFEST-")
                || name.hasPrefix("OPTIONS-") || name.hasSuffix(".log") || name.hasSuffix(".sst") || name.hasSuffix(".dbtmp")
            // Table files without CURRENT: a database that lost a file, not a creation cut
            // short; made again, it would start from nothing.
            if name.hasSuffix(".sst") { throw StateFormat.emptyFile(path, "missing file CURRENT (the folder holds table files)") }
            if name != "." && name != ".." && !own {
                throw StateFile.Failure(
                    file: path, at: "",
                    message:
                        "not a RocksDB database (a folder with content and no CURRENT file); a .rocksdb state is a folder that BadgeFlow made, or a new or empty one"
                )
            }
        }
    }

    /// Refuses a database whose `CURRENT` is empty or names a missing or empty manifest, or
    /// whose manifest names an empty table file: what a truncated copy leaves, never a new
    /// state. An empty table file the manifest does not name is what a filter killed during a
    /// flush leaves (the file was made, the manifest never recorded it): RocksDB deletes it at
    /// its next open, so it is no reason to refuse the state.
    private static func checkFiles(_ path: String) throws(StateFile.Failure) {
        var st = stat()
        guard let current = try? FileIO.readString(path + "/CURRENT") else { return }
        let manifest = current.split(whereSeparator: { $0 == "\n" }).first.map(String.init) ?? ""
        guard !manifest.isEmpty else { throw StateFormat.emptyFile(path, "empty file CURRENT") }
        guard stat(path + "/" + manifest, &st) == 0 else { throw StateFormat.emptyFile(path, "missing file \(manifest)") }
        guard st.st_size > 0 else { throw StateFormat.emptyFile(path, "empty file \(manifest)") }
        guard let dir = opendir(path) else { return }
        defer { closedir(dir) }
        var empty: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".sst"), stat(path + "/" + name, &st) == 0, st.st_size == 0 { empty.append(name) }
        }
        guard !empty.isEmpty else { return }
        // Unless a read-only open names the database's live files, every empty one counts.
        let live = liveFiles(path) ?? Set(empty)
        if let named = empty.sorted().first(where: live.contains) {
            throw StateFormat.emptyFile(path, "empty file \(named)")
        }
    }

    /// The names of the database's live table files (`000011.sst`), asked of a read-only open
    /// with the store's quiet logging (it changes nothing in the folder), tried again as
    /// ``open()`` does when a compaction removes a file under it; nil when it cannot open.
    private static func liveFiles(_ path: String) -> Set<String>? {
        let options = rocksdb_options_create()
        defer { rocksdb_options_destroy(options) }
        rocksdb_options_set_info_log_level(options, 5)
        rocksdb_options_set_keep_log_file_num(options, 2)
        for attempt in 0..<5 {
            var error: UnsafeMutablePointer<CChar>?
            guard let db = rocksdb_open_for_read_only(options, path, 0, &error) else {
                if let error { rocksdb_free(error) }
                if attempt < 4 { usleep(20_000) }
                continue
            }
            defer { rocksdb_close(db) }
            guard let live = rocksdb_livefiles(db) else { return nil }
            defer { rocksdb_livefiles_destroy(live) }
            var names = Set<String>()
            for i in 0..<rocksdb_livefiles_count(live) {
                // Live file names are given as "/000011.sst".
                guard let name = rocksdb_livefiles_name(live, i) else { continue }
                if let last = String(cString: name).split(separator: "/").last { names.insert(String(last)) }
            }
            return names
        }
        return nil
    }

    private func open() throws(StateFile.Failure) {
        // The header of the info log is written at open, and on a full disk its second
        // line would abort the process (see `init`): refused here instead.
        var fs = statvfs()
        if !isReadOnly, statvfs(FileIO.exists(path) ? path : Self.parent(of: path), &fs) == 0,
            UInt64(fs.f_bavail) * UInt64(fs.f_frsize) < Self.minimumFreeBytes
        {
            throw StateFile.Failure(
                file: path, at: "",
                message:
                    "cannot open the RocksDB database: No space left on device (less than \(Self.minimumFreeBytes >> 20) MiB free; RocksDB needs room to open)"
            )
        }
        var error: UnsafeMutablePointer<CChar>?
        var handles: [OpaquePointer?] = [nil]
        let families: [OpaquePointer?] = [options]
        // A reader may race the writer's compaction removing a file it just listed: tried again.
        for attempt in 0..<5 {
            error = nil
            db = "default".withCString { name in
                let names: [UnsafePointer<CChar>?] = [name]
                return isReadOnly
                    ? rocksdb_open_for_read_only_column_families(options, path, 1, names, families, &handles, 0, &error)
                    : rocksdb_open_column_families(options, path, 1, names, families, &handles, &error)
            }
            if db != nil || !isReadOnly || attempt == 4 { break }
            if let error { rocksdb_free(error) }
            usleep(20_000)
        }
        guard db != nil else {
            let message = error.map { String(cString: $0) } ?? ""
            if message.contains("LOCK") {
                if let error { rocksdb_free(error) }
                throw StateFile.Failure(file: path, at: "", message: "in use by another process (it holds RocksDB's LOCK file)")
            }
            throw failure("cannot open the RocksDB database", error)
        }
        family = handles[0]
    }

    /// The free space a writer needs to open.
    static let minimumFreeBytes: UInt64 = 1 << 20

    /// The folder that holds `path` (`.` for a bare name).
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    deinit { close() }

    /// Closes the database (also done on deinit). No other thread may use the store then.
    public func close() {
        if let family { rocksdb_column_family_handle_destroy(family) }
        family = nil
        if let db { rocksdb_close(db) }
        db = nil
        if let options { rocksdb_options_destroy(options) }
        options = nil
        if let table { rocksdb_block_based_options_destroy(table) }
        table = nil
        if let cache { rocksdb_cache_destroy(cache) }
        cache = nil
        if let readOptions { rocksdb_readoptions_destroy(readOptions) }
        readOptions = nil
        if let writeOptions { rocksdb_writeoptions_destroy(writeOptions) }
        writeOptions = nil
        if let flushOptions { rocksdb_flushoptions_destroy(flushOptions) }
        flushOptions = nil
    }

    // MARK: Keys

    private static func key(_ kind: UInt8, _ name: String) -> [UInt8] {
        var k: [UInt8] = [kind]
        k.append(contentsOf: name.utf8)
        return k
    }

    /// Calls `body` with the bytes of each key of `kind` and its value, in key order.
    private func forEach(
        _ kind: UInt8, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) {
        guard let db else { return }
        let it = rocksdb_create_iterator_cf(db, readOptions, family)
        defer { rocksdb_iter_destroy(it) }
        var start = kind
        withUnsafeBytes(of: &start) { rocksdb_iter_seek(it, $0.baseAddress?.assumingMemoryBound(to: CChar.self), 1) }
        while rocksdb_iter_valid(it) != 0 {
            var kl = 0, vl = 0
            guard let k = rocksdb_iter_key(it, &kl), kl > 0 else { break }
            let keyBytes = UnsafeRawBufferPointer(start: k, count: kl)
            guard keyBytes[0] == kind else { break }
            let v = rocksdb_iter_value(it, &vl)
            try body(UnsafeRawBufferPointer(rebasing: keyBytes[1...]), UnsafeRawBufferPointer(start: v, count: vl))
            rocksdb_iter_next(it)
        }
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_iter_get_error(it, &error)
        if error != nil { throw failure("cannot read the database", error) }
    }

    /// Calls `body` with the value of `key` where RocksDB holds it; nil when there is none.
    private func withValue<R>(_ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws(StateFile.Failure) -> R) throws(StateFile.Failure)
        -> R?
    {
        guard let db else { return nil }
        var error: UnsafeMutablePointer<CChar>?
        let slice = key.withUnsafeBytes {
            rocksdb_get_pinned_cf(db, readOptions, family, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, &error)
        }
        if error != nil { throw failure("cannot read the database", error) }
        guard let slice else { return nil }
        defer { rocksdb_pinnableslice_destroy(slice) }
        var n = 0
        guard let v = rocksdb_pinnableslice_value(slice, &n) else { return nil }
        return try body(UnsafeRawBufferPointer(start: v, count: n))
    }

    // MARK: Raw entries (state split and merge)

    /// Calls `body` with each key of `kind` (`0` meta, `1` account, `2` due time), without
    /// its first byte, and its value as stored, in key order, through one iterator: nothing
    /// is decoded and the state is never held whole.
    ///
    /// - Throws: `StateFile.Failure` when the database cannot be read, or what `body` throws.
    package func forEachRawEntry(
        kind: UInt8, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) {
        try forEach(kind, body)
    }

    /// The device and mark counts of the account stored as `value` under `id`, read with
    /// `rules` (or the other rules the state recorded).
    ///
    /// - Throws: `StateFile.Failure` when the value is damaged.
    package func storedCounts(id: String, value: UnsafeRawBufferPointer, rules: RuleSet) throws(StateFile.Failure) -> (
        devices: Int, marks: Int
    ) {
        let a = try decode(id, value, rules: rules)
        return (a.devices.count, a.tree.markCount)
    }

    /// Records `partition` (a part of a split state) as its meta entries
    /// (``StatePartition/metaRows``).
    ///
    /// - Throws: `StateFile.Failure` when the write fails.
    package func recordPartition(_ partition: StatePartition) throws(StateFile.Failure) {
        try writeMeta(Dictionary(uniqueKeysWithValues: partition.metaRows))
    }

    package func recordMeta(_ entries: [String: String]) throws(StateFile.Failure) {
        try writeMeta(entries.filter { meta[$0.key] != $0.value })
    }

    /// Writes the meta entries `entries` in one batch, as they are.
    ///
    /// - Throws: `StateFile.Failure` when the write fails.
    package func writeMeta(_ entries: [String: String]) throws(StateFile.Failure) {
        guard !entries.isEmpty else { return }
        try write(meta: entries, into: nil)
        shared.withLock { $0.meta.merge(entries) { _, new in new } }
    }

    /// A `WriteBatch` of raw entries for a store opened to write, written (as a checkpoint
    /// is) whenever it holds `limit` bytes of keys and values, and by `finish()`.
    package final class RawBatch {
        /// The bytes of keys and values after which the batch is written.
        package let limit: Int
        private let store: RocksDBStore
        private var batch: OpaquePointer?
        private var bytes = 0
        private var key: [UInt8] = []

        /// A batch writing into `store`, written every `limit` bytes (8 MiB unless told).
        package init(_ store: RocksDBStore, limit: Int = 8 << 20) {
            self.store = store
            self.limit = limit
            batch = rocksdb_writebatch_create()
        }

        deinit { if let batch { rocksdb_writebatch_destroy(batch) } }

        /// Puts `value` under the key `kind` + `name`.
        ///
        /// - Throws: `StateFile.Failure` when a full batch cannot be written.
        package func put(kind: UInt8, _ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StateFile.Failure) {
            key.removeAll(keepingCapacity: true)
            key.append(kind)
            key.append(contentsOf: name)
            key.withUnsafeBytes { k in
                rocksdb_writebatch_put_cf(
                    batch, store.family, k.baseAddress?.assumingMemoryBound(to: CChar.self), k.count,
                    value.baseAddress?.assumingMemoryBound(to: CChar.self), value.count)
            }
            bytes += key.count + value.count
            if bytes >= limit { try finish() }
        }

        /// Writes what the batch holds.
        ///
        /// - Throws: `StateFile.Failure` when the write fails.
        package func finish() throws(StateFile.Failure) {
            guard bytes > 0 else { return }
            try store.write(batch, what: "cannot write a batch of copied entries")
            rocksdb_writebatch_clear(batch)
            bytes = 0
        }
    }

    // MARK: Meta

    private func load() throws(StateFile.Failure) {
        var meta: [String: String] = [:]
        try forEach(0) { k, v in meta[String(decoding: k, as: UTF8.self)] = String(decoding: v, as: UTF8.self) }
        if meta.isEmpty {
            // No meta: a new database, or another program's.
            var any = false
            if let db {
                let it = rocksdb_create_iterator_cf(db, readOptions, family)
                rocksdb_iter_seek_to_first(it)
                any = rocksdb_iter_valid(it) != 0
                rocksdb_iter_destroy(it)
            }
            guard !any else {
                throw StateFile.Failure(
                    file: path, at: "meta.format", message: "not a BadgeFlow state (a RocksDB database without its meta keys)")
            }
            meta = Self.newMeta
            if !isReadOnly { try write(meta: meta, into: nil) }
            shared.withLock { $0.meta = meta }
            return
        }
        guard meta["format"] == StateFile.format else {
            throw StateFile.Failure(file: path, at: "meta.format", message: "not a BadgeFlow state (no format \(StateFile.format))")
        }
        guard let version = meta["version"], StateFile.databaseVersions.contains(version),
            meta["layout"] == String(Self.layout) || meta["layout"] == "1"
        else {
            throw StateFile.Failure(
                file: path, at: "meta.version",
                message:
                    "state version \(meta["version"] ?? "none") (layout \(meta["layout"] ?? "none")) is not supported; this BadgeFlow reads version \(StateFile.version) or \(StateFile.settingsVersion), layout 1 or \(Self.layout)"
            )
        }
        shared.withLock { $0.meta = meta }
    }

    /// The meta of a new state.
    private static let newMeta = [
        "format": StateFile.format, "version": String(StateFile.version), "layout": String(RocksDBStore.layout),
        "seq": "0", "input": "", "accounts": "0", "devices": "0", "marks": "0",
    ]

    /// Puts `meta` into `batch`, or (nil) writes it in a batch of its own.
    private func write(meta: [String: String], into batch: OpaquePointer?) throws(StateFile.Failure) {
        let b = batch ?? rocksdb_writebatch_create()
        for (name, value) in meta { put(b, Self.key(0, name), Array(value.utf8)) }
        guard batch == nil else { return }
        defer { rocksdb_writebatch_destroy(b) }
        try write(b, what: "cannot write meta")
    }

    private func put(_ batch: OpaquePointer?, _ key: [UInt8], _ value: [UInt8]) {
        key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                rocksdb_writebatch_put_cf(
                    batch, family, k.baseAddress?.assumingMemoryBound(to: CChar.self), k.count,
                    v.baseAddress?.assumingMemoryBound(to: CChar.self), v.count)
            }
        }
    }

    private func delete(_ batch: OpaquePointer?, _ key: [UInt8]) {
        key.withUnsafeBytes { k in
            rocksdb_writebatch_delete_cf(batch, family, k.baseAddress?.assumingMemoryBound(to: CChar.self), k.count)
        }
    }

    /// Writes `batch` as a checkpoint is written (``durability``).
    private func write(_ batch: OpaquePointer?, what: String) throws(StateFile.Failure) {
        guard let db else { throw StateFile.Failure(file: path, at: "", message: "\(what): the database is closed") }
        guard !isReadOnly else { throw StateFile.Failure(file: path, at: "", message: "\(what): opened read-only") }
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_write(db, writeOptions, batch, &error)
        if error != nil { throw failure(what, error) }
        if Self.durability == .flushedTables {
            rocksdb_flush_cf(db, flushOptions, family, &error)
            if error != nil { throw failure(what, error) }
        }
    }

    /// The number of input lines whose results were written when the last checkpoint committed.
    public var seq: Int { Int(meta["seq"] ?? "") ?? 0 }
    /// What those lines were read from; empty when unknown.
    public var input: String { meta["input"] ?? "" }
    /// The number of accounts stored.
    public var accountCount: Int { Int(meta["accounts"] ?? "") ?? 0 }
    /// The number of devices of all stored accounts.
    public var deviceCount: Int { Int(meta["devices"] ?? "") ?? 0 }
    /// The number of marks of all stored accounts.
    public var markCount: Int { Int(meta["marks"] ?? "") ?? 0 }
    /// The bytes of the folder's files (tables, logs, manifest).
    public var size: Int64 {
        guard let dir = opendir(path) else { return 0 }
        defer { closedir(dir) }
        var total: Int64 = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            var st = stat()
            if stat(path + "/" + name, &st) == 0, st.st_mode & S_IFMT == S_IFREG { total += Int64(st.st_size) }
        }
        return total
    }

    /// The rules the state was written with; nil when none were recorded.
    ///
    /// - Throws: `StateFile.Failure` when the recorded rules do not compile.
    public func recordedRules() throws(StateFile.Failure) -> RuleSet? {
        guard let text = meta["rules"], !text.isEmpty else { return nil }
        do { return try RuleSet.parse(text, file: path + " (recorded rules)") } catch {
            throw StateFile.Failure(file: path, at: "meta.rules" + error.at, message: error.message)
        }
    }

    /// The meta entries that record `rules` (`rules` and `rules@SEED`); empty for rules
    /// built in code or already recorded.
    private func rulesMeta(_ text: String?, seed: UInt64) -> [String: String] {
        guard let text, meta["rules"] != text else { return [:] }
        return ["rules": text, "rules@" + String(seed, radix: 16): text]
    }

    /// Records the rules' JSON text (nothing for rules built in code).
    ///
    /// - Throws: `StateFile.Failure` when the write fails.
    public func recordRules(_ rules: RuleSet) throws(StateFile.Failure) {
        let entries = rulesMeta(rules.sourceValue?.serialized(pretty: true), seed: rules.storeSeed)
        guard !entries.isEmpty else { return }
        try write(meta: entries, into: nil)
        shared.withLock { $0.meta.merge(entries) { _, new in new } }
    }

    // MARK: Accounts

    /// The account stored as `value` under `id`, read with `rules`, with its stored counts.
    /// A value written under other rules the state recorded is read with those and then
    /// through its JSON with `rules` (every mark checked as a JSON state's would be).
    private func decode(_ id: String, _ value: UnsafeRawBufferPointer, rules: RuleSet) throws(StateFile.Failure) -> Account {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        var account: Account
        // Layout 2: the check, then the binary form; layout 1: the form behind an FNV hash.
        let layout2 = value.count > Self.valueHeader && value[0] == Self.valueTag
        let stored = layout2 ? UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 1, as: UInt64.self)) : 0
        let body = UnsafeRawBufferPointer(rebasing: value[min(Self.valueHeader, value.count)...])
        func read(_ seed: UInt64, _ rules: RuleSet) -> Account? {
            guard layout2 else { return RowCache.decode(value, json: none, seed: seed, rules: rules) }
            return Self.check(seed, body) == stored ? AccountCodec.decode(body, rules: rules) : nil
        }
        if let a = read(rules.storeSeed, rules) {
            account = a
        } else if let (old, a) = otherRules(except: rules.storeSeed).lazy.compactMap({ seed, old in
            read(seed, old).map { (old, $0) }
        }).first {
            _ = old
            var w = JSONWriter(capacity: 1024)
            StateFile.writeAccount(a, compact: true, into: &w)
            let parser = JSONParser()
            let read: Result<Account, StateFile.Failure> = w.withUnsafeBytes { text in
                do throws(StateFile.Failure) {
                    return .success(
                        try StateFile.decodeAccount(text: text, with: parser, at: "accounts[\"\(id)\"]", file: path, rules: rules))
                } catch {
                    return .failure(error)
                }
            }
            account = try read.get()
        } else {
            throw StateFile.Failure(
                file: path, at: "accounts[\"\(id)\"]",
                message: "the stored value is damaged, or was written under rules this state did not record")
        }
        return account
    }

    /// Replaces `out` with the value (layout 2, ``valueTag``) of `account`, written under
    /// rules whose seed is `seed`.
    ///
    /// - Returns: the account's devices and marks, counted while encoding it.
    @discardableResult
    static func encode(_ account: Account, seed: UInt64, into out: inout [UInt8]) -> (devices: Int, marks: Int) {
        withUnsafePointer(to: account) { encode(at: $0, seed: seed, into: &out) }
    }

    /// ``encode(_:seed:into:)`` of the account at `account`, read where it is (a box's:
    /// passed by value, it was copied first, a retain of each of its parts).
    @discardableResult
    static func encode(at account: UnsafePointer<Account>, seed: UInt64, into out: inout [UInt8]) -> (devices: Int, marks: Int) {
        var w = CompactWriter(capacity: max(out.count * 2, 256))
        w.byte(valueTag)
        for _ in 0..<8 { w.byte(0) }
        let counts = AccountCodec.encode(at: account, into: &w)
        w.withWritten { bytes in
            let h = check(seed, UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: bytes[valueHeader...])))
            for i in 0..<8 { bytes[1 + i] = UInt8(truncatingIfNeeded: h >> (8 * UInt64(i))) }
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: bytes)
        }
        return counts
    }

    /// The rules of the state's `rules@SEED` entries other than `seed`, compiled once.
    private func otherRules(except seed: UInt64) -> [(UInt64, RuleSet)] {
        let meta = self.meta
        return shared.withLock { shared in
            var out: [(UInt64, RuleSet)] = []
            for (name, text) in meta where name.hasPrefix("rules@") {
                guard let s = UInt64(name.dropFirst(6), radix: 16), s != seed else { continue }
                if shared.rulesBySeed[s] == nil, let r = try? RuleSet.parse(text, file: path + " (recorded rules)") {
                    shared.rulesBySeed[s] = r
                }
                if let r = shared.rulesBySeed[s] { out.append((s, r)) }
            }
            return out
        }
    }

    /// Loads account `id` (``AccountSource``).
    public func loadAccount(_ id: String, rules: RuleSet) throws(StateFile.Failure) -> Account? {
        try withValue(Self.key(1, id)) { (value) throws(StateFile.Failure) in try decode(id, value, rules: rules) }
    }

    /// Reads the accounts `ids` with `MultiGet`, a thousand keys at a time: each id with its
    /// account, or with nil when the state has none. An id that could not be read or decoded
    /// is left out (the applying thread loads it again, and the line that needs it reports
    /// the error).
    public func loadAccounts(_ ids: [String], rules: RuleSet) -> [String: Account?] {
        readAccounts(ids, rules: rules).dictionary()
    }

    /// ``loadAccounts(_:rules:)`` in the order of `ids` (``AccountStore``).
    package func readAccounts(_ ids: [String], rules: RuleSet) -> ReadAccounts {
        var found = ReadAccounts(capacity: ids.count)
        guard let db, !ids.isEmpty else { return found }
        Self.countNothing()
        let chunk = 1024
        var slices = [OpaquePointer?](repeating: nil, count: chunk)
        var errors = [UnsafeMutablePointer<CChar>?](repeating: nil, count: chunk)
        var start = 0
        while start < ids.count {
            let part = ids[start..<min(start + chunk, ids.count)]
            start += part.count
            // The keys back to back, with their lengths.
            var bytes: [UInt8] = []
            var lengths: [Int] = []
            lengths.reserveCapacity(part.count)
            for id in part {
                bytes.append(1)
                bytes.append(contentsOf: id.utf8)
                lengths.append(id.utf8.count + 1)
            }
            bytes.withUnsafeBytes { all in
                guard let base = all.baseAddress?.assumingMemoryBound(to: CChar.self) else { return }
                var keys: [UnsafePointer<CChar>?] = []
                keys.reserveCapacity(part.count)
                var offset = 0
                for n in lengths {
                    keys.append(UnsafePointer(base + offset))
                    offset += n
                }
                rocksdb_batched_multi_get_cf(db, readOptions, family, part.count, keys, lengths, &slices, &errors, false)
            }
            for (i, id) in part.enumerated() {
                if let e = errors[i] {
                    rocksdb_free(e)
                    errors[i] = nil
                    if let s = slices[i] { rocksdb_pinnableslice_destroy(s) }
                    slices[i] = nil
                    continue
                }
                guard let s = slices[i] else {
                    found.append(id, nil)
                    continue
                }
                var n = 0
                if let v = rocksdb_pinnableslice_value(s, &n) {
                    if let a = try? decode(id, UnsafeRawBufferPointer(start: v, count: n), rules: rules) { found.append(id, a) }
                } else {
                    found.append(id, nil)
                }
                rocksdb_pinnableslice_destroy(s)
                slices[i] = nil
            }
        }
        return found
    }

    /// Replaces the stored value of account `id` with `bytes` as they are (for tests of
    /// damaged values).
    func overwrite(account id: String, with bytes: [UInt8]) throws(StateFile.Failure) {
        let batch = rocksdb_writebatch_create()
        defer { rocksdb_writebatch_destroy(batch) }
        put(batch, Self.key(1, id), bytes)
        try write(batch, what: "cannot write account \"\(id)\"")
    }

    /// The stored JSON of account `id` (`StateFile.encodeAccount(_:compact:)`, as an SQLite
    /// state's row holds it), read with the recorded rules; nil when absent.
    public func accountJSON(_ id: String) throws(StateFile.Failure) -> String? {
        let rules = try recordedRules() ?? RuleSet.builtIn
        guard let a = try loadAccount(id, rules: rules) else { return nil }
        var w = JSONWriter(capacity: 1024)
        StateFile.writeAccount(a, compact: true, into: &w)
        return w.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Every stored account id with its account read with `rules`, in byte order of id.
    private func forEachAccount(rules: RuleSet, _ body: (String, Account) throws(StateFile.Failure) -> Void) throws(StateFile.Failure) {
        try forEach(1) { (k, v) throws(StateFile.Failure) in
            let id = String(decoding: k, as: UTF8.self)
            try body(id, try decode(id, v, rules: rules))
        }
    }

    /// Every stored account read with `rules`, one value at a time, in byte order of id
    /// (``AccountSource``: a fleet-wide `reconcile`).
    public func forEachStoredAccount(
        rules: RuleSet, _ body: (String, consuming Account) throws(StateFile.Failure) -> Void
    ) throws(StateFile.Failure) {
        try forEachAccount(rules: rules) { (id, account) throws(StateFile.Failure) in try body(id, account) }
    }

    /// Every stored account id with its JSON (read with the recorded rules), in id order.
    ///
    /// - Throws: `StateFile.Failure` when a value cannot be read, or when `body` throws.
    public func forEachAccount(_ body: (String, String) throws(StateFile.Failure) -> Void) throws(StateFile.Failure) {
        var w = JSONWriter(capacity: 1024)
        try forEachAccount(rules: try recordedRules() ?? RuleSet.builtIn) { (id, a) throws(StateFile.Failure) in
            w.removeAll()
            StateFile.writeAccount(a, compact: true, into: &w)
            try body(id, w.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// Checks that every stored account still fits `rules` (a state opened with rules other
    /// than the recorded ones): every mark's path is valid in their tree, under the same root.
    ///
    /// - Throws: `StateFile.Failure` naming the first account (in id order) and mark that
    ///   does not fit, and why; or when the values cannot be read.
    public func checkFits(_ rules: RuleSet) throws(StateFile.Failure) {
        try forEachAccount(rules: rules) { _, _ in }
    }

    /// A stream holding the stored accounts `ids` (those that exist), or every account when
    /// `ids` is nil; its accounts count as unchanged.
    ///
    /// - Throws: `StateFile.Failure` when a value cannot be read or decoded.
    public func stream(rules: RuleSet, accounts ids: [String]? = nil, compact: Bool = false) throws(StateFile.Failure) -> BadgeStream {
        var stream = BadgeStream(rules: rules)
        if let ids {
            for id in ids {
                if let a = try loadAccount(id, rules: rules) { stream.addLoaded(a, as: id, compact: compact, stored: true) }
            }
            return stream
        }
        try forEachAccount(rules: rules) { id, a in stream.addLoaded(a, as: id, compact: compact, stored: true) }
        return stream
    }

    /// The accounts stored with a mark that may be due at or before `time` (``AccountSource``):
    /// read from the due entries, not from the accounts.
    public func accountsDue(through time: Double) throws(StateFile.Failure) -> [String] {
        var ids: [String] = []
        try forEach(2) { k, v in
            guard v.count == 8 else { return }
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(v[i]) << (8 * UInt64(i)) }
            if Double(bitPattern: bits) <= time { ids.append(String(decoding: k, as: UTF8.self)) }
        }
        return ids
    }

    /// Writes every account of `stream` (e.g. one loaded from a JSON state) and records its
    /// rules, in batches of 50,000 accounts, each with the meta of what is written so far.
    ///
    /// - Throws: `StateFile.Failure` when a write fails.
    public func store(_ stream: BadgeStream) throws(StateFile.Failure) {
        try recordRules(stream.rules)
        var part: [ChangedAccount] = []
        func flush() throws(StateFile.Failure) {
            _ = try commit(part, seq: seq, input: input, rules: stream.rules, returningCounts: false)
            part.removeAll(keepingCapacity: true)
        }
        for c in stream.table.residentForStore {
            part.append(c)
            if part.count == 50_000 { try flush() }
        }
        for id in stream.compacted.ids {
            guard let a = try stream.compacted.account(id, rules: stream.rules) else { continue }
            part.append(ChangedAccount(id: id, account: a))
            if part.count == 50_000 { try flush() }
        }
        if !part.isEmpty { try flush() }
    }

    /// One checkpoint: writes the accounts of `stream` changed since its last checkpoint and
    /// `seq` read from `input`, in one batch; the accounts then count as unchanged.
    ///
    /// - Throws: `StateFile.Failure` when the write fails; nothing of it is then kept, and
    ///   the accounts count as changed again.
    public func checkpoint(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {
        let changed = stream.takeChanged()
        let owed = stream.table.beginDeliveries()
        let stored: [(String, (Int, Int))]
        do throws(StateFile.Failure) {
            stored = try commit(changed, owed: owed, seq: seq, input: input, rules: stream.rules)
        } catch {
            stream.abortCommit(changed.lazy.map(\.id))
            stream.table.abortDeliveries()
            throw error
        }
        stream.endCommit(stored)
        stream.table.endDeliveries()
    }

    /// The indices of `changed` in the bytewise order of their ids (the order of their
    /// keys): sorted by each id's first 8 bytes as one number, the rest compared only
    /// between ids that share those.
    static func keyOrder(_ changed: [ChangedAccount]) -> [Int] {
        var items: [(prefix: UInt64, index: Int)] = []
        items.reserveCapacity(changed.count)
        for i in changed.indices {
            var prefix: UInt64 = 0
            var n = 0
            for byte in changed[i].id.utf8 {
                guard n < 8 else { break }
                prefix |= UInt64(byte) << (56 - 8 * n)
                n += 1
            }
            items.append((prefix, i))
        }
        items.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return changed[a.index].id.utf8.lexicographicallyPrecedes(changed[b.index].id.utf8)
        }
        return items.map(\.index)
    }

    /// Makes `key` the key of `kind` + `name`, reusing its storage.
    private static func setKey(_ key: inout [UInt8], _ kind: UInt8, _ name: String) {
        key.removeAll(keepingCapacity: true)
        key.append(kind)
        key.append(contentsOf: name.utf8)
    }

    /// Writes `changed` and `seq` read from `input` in one `WriteBatch` with the meta, and
    /// `rules` (under whose seed the values are checked) when they are not the recorded
    /// ones; returns each account's stored device and mark counts.
    ///
    /// - Throws: `StateFile.Failure` when the write fails; nothing of it is then kept.
    func commit(
        _ changed: [ChangedAccount], owed: [Deliveries.Owed] = [], seq: Int, input: String, rules: RuleSet,
        returningCounts: Bool = true
    ) throws(StateFile.Failure) -> [(String, (Int, Int))] {
        Self.countNothing()
        var accounts = accountCount, devices = deviceCount, marks = markCount
        // Accounts whose stored counts are unknown (not loaded from here): read, if stored.
        // Ids only: filtering the accounts would copy each one kept.
        var unknown: [String] = []
        for i in changed.indices where changed[i].storedCounts == nil { unknown.append(changed[i].id) }
        var previous: [String: (Int, Int)] = [:]
        if !unknown.isEmpty {
            let found = readAccounts(unknown, rules: rules)
            for (i, id) in found.ids.enumerated() {
                if let a = found.accounts[i] { previous[id] = (a.devices.count, a.tree.markCount) }
            }
        }
        let batch = rocksdb_writebatch_create()
        defer { rocksdb_writebatch_destroy(batch) }
        var value: [UInt8] = []
        var key: [UInt8] = []
        // Numbers a fleet-wide reconcile sent to stored accounts: each value read, changed and
        // put in the batch, one at a time, before the changed accounts (which hold theirs
        // already; a later put of a key wins). Its counts stay as they were.
        let seed = rules.storeSeed
        for o in owed {
            for i in o.deliveries.ids.indices where !o.skipped[i] {
                let id = o.deliveries.ids[i]
                guard var account = try loadAccount(id, rules: rules) else { continue }
                o.deliveries.apply(i, to: &account)
                Self.encode(account, seed: seed, into: &value)
                Self.setKey(&key, 1, id)
                put(batch, key, value)
            }
        }
        // Each account's device and mark counts, counted while encoding it.
        var counts = [(Int, Int)](repeating: (0, 0), count: returningCounts ? changed.count : 0)
        // In key order: the memtable's skip list then puts each key just after the one
        // before (it keeps where the last insert went) instead of searching from its top.
        let order = Self.keyOrder(changed)
        // By index, each account read where its box holds it (``encode(at:seed:into:)``):
        // an array's element, or its account passed by value, is copied, a retain and release
        // of each of its parts.
        var settings = false
        for i in order {
            if !changed[i].account.contributions.isEmpty { settings = true }
            let (d, m) = Self.encode(at: changed[i].box.address, seed: seed, into: &value)
            if returningCounts { counts[i] = (d, m) }
            if let (od, om) = changed[i].storedCounts.map({ ($0.devices, $0.marks) }) ?? previous[changed[i].id] {
                devices += d - od
                marks += m - om
            } else {
                accounts += 1
                devices += d
                marks += m
            }
            Self.setKey(&key, 1, changed[i].id)
            put(batch, key, value)
        }
        // The due index after the accounts (its keys sort after theirs), in the same order.
        for i in order {
            if let due = changed[i].account.tree.earliestPendingExpiry {
                var bits = due.bitPattern
                let bytes = withUnsafeBytes(of: &bits) { Array($0) }
                Self.setKey(&key, 2, changed[i].id)
                put(batch, key, UInt64(1).littleEndian == 1 ? bytes : bytes.reversed())
            } else if changed[i].dueStale {
                Self.setKey(&key, 2, changed[i].id)
                delete(batch, key)
            }
        }
        var entries = rulesMeta(rules.sourceValue?.serialized(pretty: true), seed: rules.storeSeed)
        entries["seq"] = String(seq)
        // Settings per account: builds that read only version 2 must refuse the state.
        if settings { entries["version"] = String(StateFile.settingsVersion) }
        // A layout 1 state becomes layout 2 with the first values of the new form.
        entries["layout"] = String(Self.layout)
        entries["input"] = input
        entries["accounts"] = String(accounts)
        entries["devices"] = String(devices)
        entries["marks"] = String(marks)
        entries["writer"] = SQLiteStore.processToken
        try write(meta: entries, into: batch)
        try write(batch, what: "cannot write a checkpoint")
        shared.withLock { $0.meta.merge(entries) { _, new in new } }
        guard returningCounts else { return [] }
        // In the order of `changed` (the stream matches them to its commit by position).
        var stored: [(String, (Int, Int))] = []
        stored.reserveCapacity(changed.count)
        for i in changed.indices { stored.append((changed[i].id, counts[i])) }
        return stored
    }
}
