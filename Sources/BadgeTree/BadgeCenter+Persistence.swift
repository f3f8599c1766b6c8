#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension BadgeCenter {
    /// Everything a center keeps: the tree (configuration and marks) and the sync policy's
    /// state. `Codable`, so it can also travel inside an app's own storage.
    public struct Archive: Sendable, Codable, Equatable {
        /// The archive format's version; 1 is the only one.
        public var version: Int
        /// The badge tree.
        public var tree: BadgeTree
        /// The unread-sync policy's state.
        public var sync: SyncPolicy

        /// Creates an archive.
        public init(tree: BadgeTree, sync: SyncPolicy) {
            version = 1
            self.tree = tree
            self.sync = sync
        }

        /// Two archives are equal when their configurations, marks and sync states are.
        public static func == (a: Archive, b: Archive) -> Bool {
            a.version == b.version && a.tree.configuration == b.tree.configuration
                && a.tree.marks.elementsEqual(b.tree.marks, by: { $0.path == $1.path && $0.mark == $1.mark })
                && a.sync == b.sync
        }
    }

    /// Why a center could not be saved or restored: the file, which case it is, and the
    /// details.
    ///
    /// ```swift
    /// do {
    ///     center = try BadgeCenter(contentsOf: url, configuration: settings)
    /// } catch let error where error.kind == .missingFile {
    ///     center = BadgeCenter(configuration: settings)     // first launch
    /// }                                                      // anything else: report it
    /// ```
    public struct PersistenceError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Which case a persistence error is.
        public enum Kind: Sendable, Equatable {
            /// There is no file at the path (yet): a first launch.
            case missingFile
            /// The file exists but cannot be read (permissions, I/O).
            case unreadable
            /// The file is not a center's archive, or holds values no center could have written.
            case corrupt
            /// The archive was written by a newer format version.
            case unsupportedVersion(Int)
            /// The archive's marks do not fit the configuration the code gives (another root).
            case incompatible
            /// The file (or its lock file) cannot be written.
            case unwritable
        }

        /// The file's path.
        public let path: String
        /// Which case this is.
        public let kind: Kind
        /// What went wrong, in words.
        public let reason: String

        /// Creates an error.
        public init(path: String, kind: Kind, reason: String) {
            self.path = path
            self.kind = kind
            self.reason = reason
        }

        /// `path: reason`.
        public var description: String { "\(path): \(reason)" }
    }

    /// The tree and sync state as they are now, taken under one lock.
    public var archive: Archive { Archive(tree: tree, sync: syncPolicy) }

    /// Creates a center from an archive.
    public convenience init(archive: Archive) {
        self.init(tree: archive.tree, sync: archive.sync)
    }

    /// Writes the center's archive to `path` as JSON, atomically: readers (another process
    /// such as the app's Notification Service Extension) see the old file or the new one,
    /// never a part. To change a file another process also changes, use
    /// ``withSharedFile(_:configuration:_:)-(String,_,_)``.
    ///
    /// - Throws: ``PersistenceError`` when the file cannot be written.
    public func save(to path: String) throws(PersistenceError) {
        try Self.write(archive, to: path)
    }

    /// Writes the center's archive to a file URL (see ``save(to:)-(String)``).
    public func save(to url: URL) throws(PersistenceError) { try save(to: url.path) }

    /// Restores a center saved with ``save(to:)-(String)``, settings included, as they were saved.
    ///
    /// A missing file is an error here (``PersistenceError/Kind-swift.enum/missingFile``:
    /// the caller decides whether that means "start empty"); a corrupt file is always an
    /// error, never an empty tree. An app whose settings come from its code uses
    /// ``init(contentsOf:configuration:)-(String,_)`` instead.
    ///
    /// - Throws: ``PersistenceError`` naming the file and which case it is.
    public convenience init(contentsOf path: String) throws(PersistenceError) {
        self.init(archive: try Self.read(path))
    }

    /// Restores the marks saved in `path` under the settings the code gives: the file's
    /// own settings (written by an older version of the app, say) are ignored.
    ///
    /// ```swift
    /// let settings = try BadgeTree.Configuration(maxDisplay: 999, contribute: ["root.chat.muted": .none])
    /// let center = try BadgeCenter(contentsOf: badgesURL, configuration: settings)
    /// ```
    ///
    /// - Throws: ``PersistenceError``: ``PersistenceError/Kind-swift.enum/missingFile`` when
    ///   there is no file, ``PersistenceError/Kind-swift.enum/incompatible`` when a saved mark
    ///   is not under `configuration`'s root, and the cases of ``init(contentsOf:)-(String)``.
    public convenience init(contentsOf path: String, configuration: BadgeTree.Configuration) throws(PersistenceError) {
        self.init(archive: try Self.read(path, configuration: configuration))
    }

    /// ``init(contentsOf:)-(String)`` for a file URL.
    public convenience init(contentsOf url: URL) throws(PersistenceError) { try self.init(contentsOf: url.path) }

    /// ``init(contentsOf:configuration:)-(String,_)`` for a file URL.
    public convenience init(contentsOf url: URL, configuration: BadgeTree.Configuration) throws(PersistenceError) {
        try self.init(contentsOf: url.path, configuration: configuration)
    }

    // MARK: - Internals

    static func write(_ archive: Archive, to path: String) throws(PersistenceError) {
        do {
            try archive.tree.configuration.validate()
        } catch {
            throw PersistenceError(path: path, kind: .unwritable, reason: "the settings could not be loaded back: \(error)")
        }
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(archive)
        } catch {
            throw PersistenceError(path: path, kind: .unwritable, reason: "cannot encode the badges: \(error)")
        }
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw PersistenceError(path: path, kind: .unwritable, reason: "cannot write the file: \(error)")
        }
    }

    /// Reads an archive; with `configuration`, its marks re-homed under those settings.
    static func read(_ path: String, configuration: BadgeTree.Configuration? = nil) throws(PersistenceError) -> Archive {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let missing = (try? FileManager.default.attributesOfItem(atPath: path)) == nil
            throw PersistenceError(
                path: path, kind: missing ? .missingFile : .unreadable,
                reason: missing ? "no such file" : "cannot read the file: \(error)")
        }
        struct Version: Decodable { var version: Int }
        if let version = try? JSONDecoder().decode(Version.self, from: data), version.version != 1 {
            throw PersistenceError(
                path: path, kind: .unsupportedVersion(version.version),
                reason: "archive version \(version.version) is not supported (only 1)")
        }
        var archive: Archive
        do {
            archive = try JSONDecoder().decode(Archive.self, from: data)
        } catch {
            throw PersistenceError(path: path, kind: .corrupt, reason: "not a BadgeCenter archive: \(error)")
        }
        guard let configuration else { return archive }
        var tree = BadgeTree(configuration: configuration)
        do {
            try tree.restore(contentsOf: archive.tree.records)
            for (p, tokens) in archive.tree.dismissedTokens { try tree.restoreDismissed(p, tokens: tokens) }
        } catch {
            throw PersistenceError(
                path: path, kind: .incompatible, reason: "a saved mark does not fit the code's settings: \(error)")
        }
        archive.tree = tree
        return archive
    }
}
