#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension BadgeCenter {
    /// Everything a center keeps: the tree (configuration and marks), the sync policy's
    /// state, the run-time settings that differ from the code's, the login and the server
    /// events not yet acknowledged. `Codable`, so it can also travel inside an app's own
    /// storage.
    public struct Archive: Sendable, Codable, Equatable {
        /// The archive format's version: 2 (with settings, login and events); 1 is still read.
        public var version: Int
        /// The badge tree, under the settings in force (the code's, with ``overrides``).
        public var tree: BadgeTree
        /// The unread-sync policy's state.
        public var sync: SyncPolicy
        /// Run-time settings (mutes, display changes) that differ from the code's
        /// configuration; they apply on top of it wherever the archive is opened.
        public var overrides: SettingOverrides
        /// The account the center was given at login (``BadgeCenter/login(account:device:)``).
        public var account: String?
        /// The device the center was given at login.
        public var device: String?
        /// The server events not yet acknowledged, oldest first.
        public var events: [ServerEvent]
        /// The ``ServerEvent/seq`` the next event gets.
        public var nextEventSeq: UInt64

        /// Creates an archive.
        public init(
            tree: BadgeTree, sync: SyncPolicy, overrides: SettingOverrides = .init(), account: String? = nil,
            device: String? = nil, events: [ServerEvent] = [], nextEventSeq: UInt64 = 1
        ) {
            version = 2
            self.tree = tree
            self.sync = sync
            self.overrides = overrides
            self.account = account
            self.device = device
            self.events = events
            self.nextEventSeq = nextEventSeq
        }

        private enum Key: String, CodingKey {
            case version, tree, sync, overrides, account, device, events, nextEventSeq
        }

        /// Decodes version 1 (tree and sync) or 2 (with settings, login and events).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            version = try c.decode(Int.self, forKey: .version)
            tree = try c.decode(BadgeTree.self, forKey: .tree)
            sync = try c.decode(SyncPolicy.self, forKey: .sync)
            overrides = try c.decodeIfPresent(SettingOverrides.self, forKey: .overrides) ?? .init()
            account = try c.decodeIfPresent(String.self, forKey: .account)
            device = try c.decodeIfPresent(String.self, forKey: .device)
            events = try c.decodeIfPresent([ServerEvent].self, forKey: .events) ?? []
            nextEventSeq = try c.decodeIfPresent(UInt64.self, forKey: .nextEventSeq) ?? 1
        }

        /// Encodes every part (`overrides`, `account`, `device` and `events` only when set).
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(version, forKey: .version)
            try c.encode(tree, forKey: .tree)
            try c.encode(sync, forKey: .sync)
            if !overrides.isEmpty { try c.encode(overrides, forKey: .overrides) }
            try c.encodeIfPresent(account, forKey: .account)
            try c.encodeIfPresent(device, forKey: .device)
            if !events.isEmpty { try c.encode(events, forKey: .events) }
            try c.encode(nextEventSeq, forKey: .nextEventSeq)
        }

        /// Two archives are equal when their configurations, marks, sync states, settings,
        /// logins and events are.
        public static func == (a: Archive, b: Archive) -> Bool {
            a.version == b.version && a.tree.configuration == b.tree.configuration
                && a.tree.marks.elementsEqual(b.tree.marks, by: { $0.path == $1.path && $0.mark == $1.mark })
                && a.sync == b.sync && a.overrides == b.overrides && a.account == b.account && a.device == b.device
                && a.events == b.events && a.nextEventSeq == b.nextEventSeq
        }
    }

    /// Run-time settings that differ from the code's configuration: what
    /// ``setContribution(_:of:)`` and ``setDisplay(_:of:)`` changed. Setting a path back to the
    /// configuration's value removes its entry.
    public struct SettingOverrides: Sendable, Codable, Equatable {
        /// Contributions by path.
        public var contribute: [String: Contribution]
        /// Display modes by path.
        public var display: [String: DisplayMode]

        /// Creates overrides.
        public init(contribute: [String: Contribution] = [:], display: [String: DisplayMode] = [:]) {
            self.contribute = contribute
            self.display = display
        }

        /// Whether there are none.
        public var isEmpty: Bool { contribute.isEmpty && display.isEmpty }

        private enum Key: String, CodingKey { case contribute, display }

        /// Entries that did not decode (an unknown mode, an empty custom badge): dropped when
        /// the overrides are applied, and reported.
        var unreadable: [BadgeCenter.DroppedSetting] = []

        private struct PathKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        /// Decodes `{contribute, display}` (each optional); an entry whose value is not a valid
        /// setting is kept aside (see ``BadgeCenter/droppedSettings``), not an error.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            contribute = [:]
            display = [:]
            if c.contains(.contribute) {
                let entries = try c.nestedContainer(keyedBy: PathKey.self, forKey: .contribute)
                for key in entries.allKeys {
                    if let mode = try? entries.decode(Contribution.self, forKey: key) {
                        contribute[key.stringValue] = mode
                    } else {
                        unreadable.append(.init(path: key.stringValue, kind: "contribute", reason: "not \"count\", \"dot\" or \"none\""))
                    }
                }
            }
            if c.contains(.display) {
                let entries = try c.nestedContainer(keyedBy: PathKey.self, forKey: .display)
                for key in entries.allKeys {
                    do {
                        display[key.stringValue] = try entries.decode(DisplayMode.self, forKey: key)
                    } catch {
                        unreadable.append(.init(path: key.stringValue, kind: "display", reason: "not a display mode: \(error)"))
                    }
                }
            }
        }

        /// Equal when the settings are.
        public static func == (a: Self, b: Self) -> Bool { a.contribute == b.contribute && a.display == b.display }

        /// Encodes `{contribute, display}`, each only when not empty.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            if !contribute.isEmpty { try c.encode(contribute, forKey: .contribute) }
            if !display.isEmpty { try c.encode(display, forKey: .display) }
        }
    }

    /// A run-time setting a file held that this build's configuration cannot take (a path
    /// outside its root, an empty custom badge): the file's marks load without it.
    public struct DroppedSetting: Sendable, Equatable, CustomStringConvertible {
        /// The setting's path.
        public var path: String
        /// `"contribute"` or `"display"`.
        public var kind: String
        /// Why it was dropped.
        public var reason: String

        /// `kind[path]: reason`.
        public var description: String { "\(kind)[\"\(path)\"]: \(reason)" }
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

    /// Everything the center keeps (tree, sync state, settings, login, pending events), taken
    /// under one lock.
    public var archive: Archive { snapshot() }

    /// Creates a center from an archive; the archive's settings without its ``Archive/overrides``
    /// count as the configuration.
    public convenience init(archive: Archive) {
        self.init(archive: archive, base: archive.overrides.base(of: archive.tree.configuration))
    }

    /// Writes the center's archive to `path` (the shared file's format, version 2, as one
    /// snapshot), atomically: readers (another process such as the app's Notification
    /// Service Extension) see the old file or the new one, never a part. To change a file
    /// another process also changes, use ``withSharedFile(_:configuration:_:)-(String,_,_)``.
    ///
    /// - Throws: ``PersistenceError`` when the file cannot be written.
    public func save(to path: String) throws(PersistenceError) {
        _ = try SharedFileFormat.writeSnapshot(archive, to: path)
    }

    /// Writes the center's archive to a file URL (see ``save(to:)-(String)``).
    public func save(to url: URL) throws(PersistenceError) { try save(to: url.path) }

    /// Restores a center saved with ``save(to:)-(String)`` (or changed through
    /// ``withSharedFile(_:configuration:_:)-(String,_,_)``), settings included, as they were saved.
    ///
    /// A missing file is an error here (``PersistenceError/Kind-swift.enum/missingFile``:
    /// the caller decides whether that means "start empty"); a 0-byte file is an empty
    /// center; a corrupt file is always an error, never an empty tree. An app whose settings
    /// come from its code uses ``init(contentsOf:configuration:)-(String,_)`` instead.
    ///
    /// - Throws: ``PersistenceError`` naming the file and which case it is.
    public convenience init(contentsOf path: String) throws(PersistenceError) {
        let loaded = try SharedFileFormat.load(path, configuration: nil)
        self.init(archive: loaded.archive)
        setDropped(loaded.dropped)
    }

    /// Restores the marks saved in `path` under the settings the code gives, with the
    /// run-time settings the file keeps (``Archive/overrides``: mutes) on top of them.
    ///
    /// ```swift
    /// let settings = try BadgeTree.Configuration(maxDisplay: 999, contribute: ["root.chat.muted": .none])
    /// let center = try BadgeCenter(contentsOf: badgesURL, configuration: settings)
    /// ```
    ///
    /// A stored setting this configuration cannot take (a path outside its root) is left out
    /// and listed in ``droppedSettings``; the marks load all the same.
    ///
    /// - Throws: ``PersistenceError``: ``PersistenceError/Kind-swift.enum/missingFile`` when
    ///   there is no file, ``PersistenceError/Kind-swift.enum/incompatible`` when a saved mark
    ///   is not under `configuration`'s root, and the cases of ``init(contentsOf:)-(String)``.
    public convenience init(contentsOf path: String, configuration: BadgeTree.Configuration) throws(PersistenceError) {
        let loaded = try SharedFileFormat.load(path, configuration: configuration)
        self.init(archive: loaded.archive, base: configuration)
        setDropped(loaded.dropped)
    }

    /// ``init(contentsOf:)-(String)`` for a file URL.
    public convenience init(contentsOf url: URL) throws(PersistenceError) { try self.init(contentsOf: url.path) }

    /// ``init(contentsOf:configuration:)-(String,_)`` for a file URL.
    public convenience init(contentsOf url: URL, configuration: BadgeTree.Configuration) throws(PersistenceError) {
        try self.init(contentsOf: url.path, configuration: configuration)
    }

    /// Opens `path` under `configuration`, or makes an empty center when there is no file
    /// yet (a first launch); any other problem throws.
    ///
    /// This is the first-launch pattern without a `catch … where` clause (which, in an
    /// initializer, crashes the Swift 6.3.1 compiler):
    ///
    /// ```swift
    /// final class Badges {
    ///     let center: BadgeCenter
    ///     init(url: URL, settings: BadgeTree.Configuration) throws {
    ///         center = try BadgeCenter.openOrCreate(url.path, configuration: settings)
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: ``PersistenceError`` for every case but ``PersistenceError/Kind-swift.enum/missingFile``.
    public static func openOrCreate(_ path: String, configuration: BadgeTree.Configuration) throws(PersistenceError) -> BadgeCenter {
        do {
            return try BadgeCenter(contentsOf: path, configuration: configuration)
        } catch {
            if error.kind == .missingFile { return BadgeCenter(configuration: configuration) }
            throw error
        }
    }

    /// Settings the file held that this build's configuration could not take, when the center
    /// was opened or last reloaded (see ``init(contentsOf:configuration:)-(String,_)``).
    public var droppedSettings: [DroppedSetting] { dropped() }
}

extension BadgeCenter.SettingOverrides {
    /// `effective` with the overridden paths back to the defaults: the configuration under
    /// these overrides, as far as it can be told from the result.
    func base(of effective: BadgeTree.Configuration) -> BadgeTree.Configuration {
        var base = effective
        for path in contribute.keys { base.contribute[path] = nil }
        for path in display.keys { base.display[path] = nil }
        return base
    }

    /// `base` with these overrides on top; the ones `base` cannot take are left out and
    /// returned.
    func applied(to base: BadgeTree.Configuration) -> (BadgeTree.Configuration, Self, [BadgeCenter.DroppedSetting]) {
        var effective = base
        var kept = Self()
        var dropped = unreadable
        func problem(_ path: String) -> String? {
            do {
                try BadgeTree(configuration: base).validate(path)
                return nil
            } catch {
                return error.reason
            }
        }
        for (path, mode) in contribute.sorted(by: { $0.key < $1.key }) {
            if let reason = problem(path) {
                dropped.append(.init(path: path, kind: "contribute", reason: reason))
            } else if mode != (base.contribute[path] ?? .count) {
                effective.contribute[path] = mode
                kept.contribute[path] = mode
            }
        }
        for (path, mode) in display.sorted(by: { $0.key < $1.key }) {
            if let reason = problem(path) {
                dropped.append(.init(path: path, kind: "display", reason: reason))
            } else if case .custom(let name) = mode, name.isEmpty {
                dropped.append(.init(path: path, kind: "display", reason: "a custom badge needs a non-empty name"))
            } else if mode != (base.display[path] ?? .number) {
                effective.display[path] = mode
                kept.display[path] = mode
            }
        }
        return (effective, kept, dropped)
    }
}
