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

extension BadgeCenter {
    /// Runs `body` on the badges saved in `path` under an exclusive lock of the file, then
    /// records what it changed: an app and its Notification Service Extension (two processes
    /// sharing an App Group container) that both change the file this way never lose each
    /// other's updates.
    ///
    /// ```swift
    /// // In the Notification Service Extension:
    /// let total = try BadgeCenter.withSharedFile(badgesURL.path, configuration: settings) { center in
    ///     center.root.child(escaping: "chat").child(escaping: sender).increment()
    ///     return center.total
    /// }
    /// content.badge = total as NSNumber
    /// ```
    ///
    /// The lock is `flock(2)` on a lock file beside the data, `path` + `".lock"`. A change
    /// costs what it changed, not what the file holds: its operations are appended to the
    /// file's journal as one line, and a process that changed the file before reads only the
    /// lines added since. When the journal outgrows the snapshot it is folded into a new one
    /// (written to `path` + `".tmp"`, then renamed over the file). A writer killed at any
    /// instant leaves a file that opens with every completed change and nothing of the cut
    /// one (the next writer cuts it off; a `.tmp` left behind is removed at the next lock). See
    /// <doc:SharedFileFormat>.
    ///
    /// A missing or 0-byte data file starts empty; a corrupt one is an error and is left as
    /// it is. The marks come back under `configuration`, with the file's run-time settings
    /// (mutes) on top, as ``init(contentsOf:configuration:)-(String,_)`` does. Reads and
    /// settings made in `body` record server events in the file, naming the login the file
    /// holds. When `body` throws, nothing is saved. A long-lived center in the other process
    /// picks the changes up with ``reload(from:)-(String)``, or makes its own changes with
    /// ``withSharedFile(_:_:)``.
    ///
    /// - Parameters:
    ///   - path: the data file, in a container both processes can write.
    ///   - configuration: the settings the marks are read under.
    ///   - body: the change; it gets a center of its own, valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: ``PersistenceError`` when the file cannot be locked, read or written, or what
    ///   `body` throws.
    @discardableResult
    public static func withSharedFile<Result>(
        _ path: String, configuration: BadgeTree.Configuration = .init(),
        _ body: (BadgeCenter) throws -> Result
    ) throws -> Result {
        try sharedChange(path, configuration: configuration, clock: nil, body).result
    }

    /// ``withSharedFile(_:configuration:_:)-(String,_,_)`` for a file URL.
    @discardableResult
    public static func withSharedFile<Result>(
        _ url: URL, configuration: BadgeTree.Configuration = .init(),
        _ body: (BadgeCenter) throws -> Result
    ) throws -> Result {
        try withSharedFile(url.path, configuration: configuration, body)
    }

    /// Changes the shared file (as ``withSharedFile(_:configuration:_:)-(String,_,_)`` does, under
    /// this center's configuration and event clock), then takes the file's state on, in
    /// place: observers hear what changed, and the server events the change (or another
    /// process since the last reload) recorded are announced once.
    ///
    /// The app's own changes go this way, so the file stays the one record both processes
    /// share:
    ///
    /// ```swift
    /// try center.withSharedFile(badgesPath) { shared in try shared.clear("root.chat.alice") }
    /// try center.withSharedFile(badgesPath) { shared in try shared.setContribution(.none, of: "root.chat.bob") }
    /// try center.withSharedFile(badgesPath) { shared in shared.acknowledgeEvents(sentIDs) }
    /// ```
    ///
    /// - Throws: ``PersistenceError`` when the file cannot be locked, read or written, or what
    ///   `body` throws (the center is then left as it was).
    @discardableResult
    public func withSharedFile<Result>(_ path: String, _ body: (BadgeCenter) throws -> Result) throws -> Result {
        let (result, archive, dropped) = try Self.sharedChange(path, configuration: baseConfiguration, clock: eventClock, body)
        adopt(archive, dropped: dropped)
        return result
    }

    /// Replaces this center's marks, sync state, settings, login and events with those saved
    /// in `path`, in place: observers stay, and hear every state the reload changed; the
    /// center keeps its own configuration, with the file's run-time settings on top.
    ///
    /// Call it when the other process may have changed the file, such as when the app comes
    /// to the foreground after its extension ran. Server events the file holds that this
    /// center has not seen are announced (``serverEvents()``, ``decrements()``); events
    /// acknowledged here stay gone.
    ///
    /// - Returns: the changes (never a decrement: the reads are server events).
    /// - Throws: ``PersistenceError`` as ``init(contentsOf:configuration:)-(String,_)``
    ///   does; the center is then left as it was.
    @discardableResult
    public func reload(from path: String) throws(PersistenceError) -> Outcome {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let missing = errno == ENOENT
            throw PersistenceError(
                path: path, kind: missing ? .missingFile : .unreadable,
                reason: missing ? "no such file" : "cannot read the file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let file = try Self.readShared(path, fd: fd, configuration: baseConfiguration, cut: false)
        Self.sharedFiles.withLock { $0[path] = file }
        return adopt(file.archive, dropped: file.dropped)
    }

    /// ``reload(from:)-(String)`` for a file URL.
    @discardableResult
    public func reload(from url: URL) throws(PersistenceError) -> Outcome { try reload(from: url.path) }

    // MARK: - The journal

    /// What this process last read of a shared file: a later read starts where it ended
    /// when the file is the same (same inode, same generation) and only grew.
    struct SharedFileState: Sendable {
        var identity = FileIdentity()
        /// The header line (empty: version 1 or 0-byte file, rewritten at the next change).
        var header: [UInt8] = []
        var snapshotEnd = 0
        var validEnd = 0
        var configuration: BadgeTree.Configuration
        var archive: Archive
        var dropped: [DroppedSetting] = []
    }

    /// The shared files this process has read, by path.
    static let sharedFiles = Locked<[String: SharedFileState]>([:])

    /// The file's journal grows to at least this many bytes before it is folded into a new
    /// snapshot (a small snapshot is not rewritten every few changes).
    static let journalMinimum = 16_384

    /// Reads the shared file open at `fd`: only what was appended since this process last
    /// read it when it can, else all of it. With `cut` (the lock is held), a change cut short
    /// by a killed writer is removed from the file.
    static func readShared(
        _ path: String, fd: Int32, configuration: BadgeTree.Configuration, cut: Bool
    ) throws(PersistenceError) -> SharedFileState {
        let identity = try FileIdentity(fd, path: path)
        var info = stat()
        _ = fstat(fd, &info)
        let size = Int(info.st_size)
        let cached = sharedFiles.withLock { $0.removeValue(forKey: path) }
        var file: SharedFileState
        if var c = cached, c.identity == identity, c.configuration == configuration, !c.header.isEmpty, size >= c.validEnd,
            try SharedFileFormat.readAll(fd, from: 0, count: c.header.count, path: path) == c.header
        {
            let tail = try SharedFileFormat.readAll(fd, from: c.validEnd, path: path)
            let end = try SharedFileFormat.replay(
                tail, from: 0, onto: &c.archive, path: path, base: configuration, offset: c.validEnd)
            c.validEnd += end
            file = c
        } else {
            let bytes = try SharedFileFormat.readAll(fd, from: 0, path: path)
            let loaded = try SharedFileFormat.parse(bytes, path: path, configuration: configuration)
            file = SharedFileState(
                identity: identity, header: loaded.header, snapshotEnd: loaded.snapshotEnd, validEnd: loaded.validEnd,
                configuration: configuration, archive: loaded.archive, dropped: loaded.dropped)
        }
        if cut, size > file.validEnd, !file.header.isEmpty {
            _ = ftruncate(fd, off_t(file.validEnd))
        }
        return file
    }

    /// The change under the lock: read (what is new), run `body` on a center of its own,
    /// append the change (or write a snapshot), remember what was written.
    static func sharedChange<Result>(
        _ path: String, configuration: BadgeTree.Configuration, clock: (@Sendable () -> Double)?,
        _ body: (BadgeCenter) throws -> Result
    ) throws -> (result: Result, archive: Archive, dropped: [DroppedSetting]) {
        let lockPath = path + ".lock"
        let lockFD = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else {
            throw PersistenceError(
                path: lockPath, kind: .unwritable, reason: "cannot open the lock file: \(String(cString: strerror(errno)))")
        }
        defer { close(lockFD) }
        guard retryingOnEINTR({ flock(lockFD, LOCK_EX) }) == 0 else {
            throw PersistenceError(
                path: lockPath, kind: .unwritable, reason: "cannot lock the file: \(String(cString: strerror(errno)))")
        }
        defer { flock(lockFD, LOCK_UN) }
        // A snapshot a killed writer left half written.
        unlink(path + ".tmp")
        let fd = open(path, O_RDWR | O_CLOEXEC)
        if fd < 0, errno != ENOENT {
            throw PersistenceError(path: path, kind: .unreadable, reason: "cannot open the file: \(String(cString: strerror(errno)))")
        }
        defer { if fd >= 0 { close(fd) } }
        var file: SharedFileState
        if fd >= 0 {
            file = try readShared(path, fd: fd, configuration: configuration, cut: true)
        } else {
            _ = sharedFiles.withLock { $0.removeValue(forKey: path) }
            file = SharedFileState(configuration: configuration, archive: SharedFileFormat.empty(configuration))
        }
        let center = BadgeCenter(archive: file.archive, base: configuration, fileBacked: false)
        file.archive = SharedFileFormat.empty(configuration)  // the center holds the only copy
        if let clock { center.setEventClock(clock) }
        center.startRecording()
        let result = try body(center)
        let (record, archive) = center.finishRecording()
        file.archive = archive
        if !record.isEmpty {
            let journal = file.validEnd - file.snapshotEnd
            if fd >= 0, !file.header.isEmpty, journal <= max(file.snapshotEnd, journalMinimum),
                let line = SharedFileFormat.recordBytes(record)
            {
                try SharedFileFormat.writeAll(fd, line, at: file.validEnd, path: path)
                file.validEnd += line.count
            } else {
                let written = try SharedFileFormat.writeSnapshot(archive, to: path)
                file.identity = written.identity
                file.header = written.header
                file.snapshotEnd = written.size
                file.validEnd = written.size
            }
        }
        let dropped = file.dropped
        sharedFiles.withLock { $0[path] = file }
        return (result, archive, dropped)
    }
}
