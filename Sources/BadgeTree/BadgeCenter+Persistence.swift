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

    /// Why a center could not be saved or restored: the file and what went wrong.
    public struct PersistenceError: Error, Sendable, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// What went wrong.
        public let reason: String

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
    /// never a part.
    ///
    /// - Throws: ``PersistenceError`` when the file cannot be written.
    public func save(to path: String) throws(PersistenceError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(archive)
        } catch {
            throw PersistenceError(path: path, reason: "cannot encode the badges: \(error)")
        }
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw PersistenceError(path: path, reason: "cannot write the file: \(error)")
        }
    }

    /// Restores a center saved with ``save(to:)``.
    ///
    /// A missing file is an error here (the caller decides whether that means "start
    /// empty"); a corrupt file is always an error, never an empty tree.
    ///
    /// - Throws: ``PersistenceError`` naming the file and what is wrong with it.
    public convenience init(contentsOf path: String) throws(PersistenceError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PersistenceError(path: path, reason: "cannot read the file: \(error)")
        }
        let archive: Archive
        do {
            archive = try JSONDecoder().decode(Archive.self, from: data)
        } catch {
            throw PersistenceError(path: path, reason: "not a BadgeCenter archive: \(error)")
        }
        guard archive.version == 1 else {
            throw PersistenceError(path: path, reason: "archive version \(archive.version) is not supported (only 1)")
        }
        self.init(archive: archive)
    }
}
