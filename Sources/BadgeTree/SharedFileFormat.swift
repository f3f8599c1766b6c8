// The shared file's format (version 2), its reader and its writers.
//
//     #badgetree-shared 2 <generation>\n      the header: format version, a random generation
//     <archive JSON, one line>\n              the snapshot: BadgeCenter.Archive, version 2
//     <change JSON, one line>\n               the journal: one line per change made through
//     …                                        withSharedFile, applied in order on the snapshot
//
// A change is appended under the lock; a line without its newline is a change whose writer
// was killed mid-write: readers ignore it and the next writer cuts it off. When the journal
// outgrows the snapshot, the writer writes a new snapshot to `FILE.tmp` and renames it over
// the file (a new generation). A file without the header is version 1 (one archive, JSON);
// a 0-byte file is an empty one.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One operation of a change, as the journal keeps it.
enum JournalOp: Sendable, Codable, Equatable {
    case set(path: String, count: Int?, expires: Double?, once: String?, timed: Bool)
    case increment(path: String, by: Int)
    case clear(path: String, force: Bool)
    case expire(through: Double)
    case contribute(path: String, mode: Contribution)
    case display(path: String, mode: DisplayMode)
}

/// One change made through `withSharedFile`: the journal's line.
struct JournalRecord: Sendable, Codable, Equatable {
    /// The tree operations, in order.
    var ops: [JournalOp] = []
    /// Server events the change recorded.
    var events: [ServerEvent]?
    /// Ids of the events the change acknowledged.
    var acknowledged: [String]?
    /// The sync policy's state after the change, when it changed.
    var sync: SyncPolicy?
    /// The login after the change, when it changed: `[account, device]`, or `[]` for a logout.
    var login: [String]?

    var isEmpty: Bool { ops.isEmpty && events == nil && acknowledged == nil && sync == nil && login == nil }
}

enum SharedFileFormat {
    static let magic = Array("#badgetree-shared ".utf8)
    static let version = 2

    /// An archive read from a file, and where its parts end.
    struct Loaded {
        var archive: BadgeCenter.Archive
        var dropped: [BadgeCenter.DroppedSetting]
        /// The header line, newline included (empty: no header, version 1 or no file).
        var header: [UInt8] = []
        /// Bytes of header and snapshot.
        var snapshotEnd = 0
        /// Bytes up to the end of the last complete change.
        var validEnd = 0
        /// Bytes in the file.
        var fileSize = 0
    }

    /// An empty archive under `configuration`.
    static func empty(_ configuration: BadgeTree.Configuration?) -> BadgeCenter.Archive {
        BadgeCenter.Archive(tree: BadgeTree(configuration: configuration ?? .init()), sync: SyncPolicy(configuration: .init()))
    }

    // MARK: Reading

    /// Reads `path`: a missing file is ``BadgeCenter/PersistenceError/Kind-swift.enum/missingFile``.
    static func load(_ path: String, configuration: BadgeTree.Configuration?) throws(BadgeCenter.PersistenceError) -> Loaded {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let missing = errno == ENOENT
            throw BadgeCenter.PersistenceError(
                path: path, kind: missing ? .missingFile : .unreadable,
                reason: missing ? "no such file" : "cannot read the file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        return try parse(readAll(fd, from: 0, path: path), path: path, configuration: configuration)
    }

    /// Parses a whole file.
    static func parse(
        _ bytes: [UInt8], path: String, configuration: BadgeTree.Configuration?
    ) throws(BadgeCenter.PersistenceError) -> Loaded {
        if bytes.isEmpty {
            return Loaded(archive: empty(configuration), dropped: [], fileSize: 0)
        }
        guard bytes.starts(with: magic) else {
            // Version 1: one archive.
            var loaded = try decodeArchive(bytes[...], path: path, configuration: configuration)
            loaded.snapshotEnd = bytes.count
            loaded.validEnd = bytes.count
            loaded.fileSize = bytes.count
            return loaded
        }
        guard let headerEnd = bytes.firstIndex(of: 0x0A) else {
            throw corrupt(path, "the header line is cut short")
        }
        let fields = bytes[magic.count..<headerEnd].split(separator: 0x20)
        guard let first = fields.first, let version = Int(String(decoding: first, as: UTF8.self)) else {
            throw corrupt(path, "the header line names no version")
        }
        guard version == Self.version else {
            throw BadgeCenter.PersistenceError(
                path: path, kind: .unsupportedVersion(version),
                reason: "shared file version \(version) is not supported (only 1 and 2)")
        }
        guard let snapshotEnd = bytes[(headerEnd + 1)...].firstIndex(of: 0x0A) else {
            throw corrupt(path, "the snapshot is cut short")
        }
        var loaded = try decodeArchive(bytes[(headerEnd + 1)..<snapshotEnd], path: path, configuration: configuration)
        loaded.header = Array(bytes[...headerEnd])
        loaded.snapshotEnd = snapshotEnd + 1
        loaded.fileSize = bytes.count
        let base = configuration ?? loaded.archive.overrides.base(of: loaded.archive.tree.configuration)
        loaded.validEnd = try replay(bytes, from: snapshotEnd + 1, onto: &loaded.archive, path: path, base: base)
        return loaded
    }

    /// Applies the complete changes in `bytes[from...]` to `archive`; returns where the
    /// last complete one ends.
    static func replay(
        _ bytes: [UInt8], from start: Int, onto archive: inout BadgeCenter.Archive, path: String,
        base configuration: BadgeTree.Configuration, offset: Int = 0
    ) throws(BadgeCenter.PersistenceError) -> Int {
        var at = start
        let decoder = JSONDecoder()
        while at < bytes.count, let end = bytes[at...].firstIndex(of: 0x0A) {
            let record: JournalRecord
            do {
                record = try decoder.decode(JournalRecord.self, from: Data(bytes[at..<end]))
            } catch {
                throw corrupt(path, "change at byte \(offset + at) is not readable: \(error)")
            }
            do {
                try apply(record, to: &archive, base: configuration)
            } catch {
                throw corrupt(path, "change at byte \(offset + at) does not apply: \(error)")
            }
            at = end + 1
        }
        return at
    }

    /// Applies one change to an archive.
    static func apply(_ record: JournalRecord, to archive: inout BadgeCenter.Archive, base: BadgeTree.Configuration)
        throws(BadgePathError)
    {
        for op in record.ops {
            _ = try BadgeCenter.apply(op, tree: &archive.tree, overrides: &archive.overrides, base: base)
        }
        if let events = record.events {
            archive.events.append(contentsOf: events)
            if let last = events.last { archive.nextEventSeq = max(archive.nextEventSeq, last.seq + 1) }
        }
        if let ids = record.acknowledged {
            let gone = Set(ids)
            archive.events.removeAll { gone.contains($0.id) }
        }
        if let sync = record.sync { archive.sync = sync }
        if let login = record.login {
            archive.account = login.count == 2 ? login[0] : nil
            archive.device = login.count == 2 ? login[1] : nil
        }
    }

    /// Decodes one archive, re-homed under `configuration` when given.
    static func decodeArchive(
        _ bytes: ArraySlice<UInt8>, path: String, configuration: BadgeTree.Configuration?
    ) throws(BadgeCenter.PersistenceError) -> Loaded {
        let data = Data(bytes)
        struct Version: Decodable { var version: Int }
        if let version = try? JSONDecoder().decode(Version.self, from: data), version.version != 1, version.version != 2 {
            throw BadgeCenter.PersistenceError(
                path: path, kind: .unsupportedVersion(version.version),
                reason: "archive version \(version.version) is not supported (only 1 and 2)")
        }
        var archive: BadgeCenter.Archive
        do {
            archive = try JSONDecoder().decode(BadgeCenter.Archive.self, from: data)
        } catch {
            throw corrupt(path, "not a BadgeCenter archive: \(error)")
        }
        let base = configuration ?? archive.overrides.base(of: archive.tree.configuration)
        let (effective, kept, dropped) = archive.overrides.applied(to: base)
        var tree = BadgeTree(configuration: effective)
        do {
            try tree.restore(contentsOf: archive.tree.records)
            for (p, tokens) in archive.tree.dismissedTokens { try tree.restoreDismissed(p, tokens: tokens) }
        } catch {
            throw BadgeCenter.PersistenceError(
                path: path, kind: .incompatible, reason: "a saved mark does not fit the code's settings: \(error)")
        }
        archive.tree = tree
        archive.overrides = kept
        archive.version = Self.version
        return Loaded(archive: archive, dropped: dropped)
    }

    static func corrupt(_ path: String, _ reason: String) -> BadgeCenter.PersistenceError {
        BadgeCenter.PersistenceError(path: path, kind: .corrupt, reason: reason)
    }

    // MARK: Writing

    /// The header line of a new generation.
    static func newHeader() -> [UInt8] {
        Array("#badgetree-shared \(version) \(ServerEvent.newID().prefix(16))\n".utf8)
    }

    /// The snapshot's bytes: header and archive, each a line.
    static func snapshotBytes(_ archive: BadgeCenter.Archive, header: [UInt8], path: String) throws(BadgeCenter.PersistenceError) -> [UInt8]
    {
        do {
            try archive.tree.configuration.validate()
        } catch {
            throw BadgeCenter.PersistenceError(path: path, kind: .unwritable, reason: "the settings could not be loaded back: \(error)")
        }
        var archive = archive
        archive.version = version
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(archive)
        } catch {
            throw BadgeCenter.PersistenceError(path: path, kind: .unwritable, reason: "cannot encode the badges: \(error)")
        }
        var out = header
        out.reserveCapacity(header.count + data.count + 1)
        out.append(contentsOf: data)
        out.append(0x0A)
        return out
    }

    /// A change's line, newline included; nil when it cannot be encoded (a time that is not
    /// finite): the writer then writes a snapshot instead.
    static func recordBytes(_ record: JournalRecord) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(record) else { return nil }
        var out = [UInt8](data)
        out.append(0x0A)
        return out
    }

    /// Writes a new snapshot of `archive` over `path`: `path.tmp`, then a rename.
    ///
    /// - Returns: the header, the bytes written and the new file's identity.
    static func writeSnapshot(_ archive: BadgeCenter.Archive, to path: String) throws(BadgeCenter.PersistenceError) -> (
        header: [UInt8], size: Int, identity: FileIdentity
    ) {
        let header = newHeader()
        let bytes = try snapshotBytes(archive, header: header, path: path)
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw unwritable(tmp, "cannot create the file") }
        var identity = FileIdentity()
        do {
            defer { close(fd) }
            try writeAll(fd, bytes, at: 0, path: tmp)
            identity = try FileIdentity(fd, path: tmp)
        } catch {
            unlink(tmp)
            throw error
        }
        guard rename(tmp, path) == 0 else {
            let e = unwritable(path, "cannot replace the file")
            unlink(tmp)
            throw e
        }
        return (header, bytes.count, identity)
    }

    static func unwritable(_ path: String, _ what: String) -> BadgeCenter.PersistenceError {
        BadgeCenter.PersistenceError(path: path, kind: .unwritable, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}

/// A file's device and inode: which file a path named when it was read.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64 = 0
    var inode: UInt64 = 0

    init() {}

    init(_ fd: Int32, path: String) throws(BadgeCenter.PersistenceError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SharedFileFormat.unwritable(path, "cannot stat the file") }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
