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
    /// saves them: load, change, save atomically, unlock. An app and its Notification Service
    /// Extension (two processes sharing an App Group container) that both change the file
    /// this way never lose each other's updates.
    ///
    /// ```swift
    /// // In the Notification Service Extension:
    /// let total = try BadgeCenter.withSharedFile(badgesURL.path, configuration: settings) { center in
    ///     try center.increment(BadgePath.root.child("chat").child(sender))
    ///     return center.total
    /// }
    /// content.badge = total as NSNumber
    /// ```
    ///
    /// The lock is `flock(2)` on a lock file beside the data, `path` + `".lock"` (the data
    /// file itself is replaced on every save, so it cannot carry the lock). A missing data file
    /// starts empty; a corrupt one is an error and is left as it is. The marks come back under
    /// `configuration`, as ``init(contentsOf:configuration:)-(String,_)`` does. When `body`
    /// throws, nothing is saved. A long-lived center in the other process picks the changes
    /// up with ``reload(from:)-(String)``.
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
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw PersistenceError(
                path: lockPath, kind: .unwritable, reason: "cannot open the lock file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw PersistenceError(
                    path: lockPath, kind: .unwritable, reason: "cannot lock the file: \(String(cString: strerror(errno)))")
            }
        }
        defer { flock(fd, LOCK_UN) }
        let center = try BadgeCenter(archive: readOrEmpty(path, configuration: configuration))
        let result = try body(center)
        try write(center.archive, to: path)
        return result
    }

    /// The archive in `path`, or an empty one when there is no file.
    private static func readOrEmpty(_ path: String, configuration: BadgeTree.Configuration) throws(PersistenceError) -> Archive {
        let result: Swift.Result<Archive, PersistenceError>
        do { result = .success(try read(path, configuration: configuration)) } catch { result = .failure(error) }
        switch result {
        case .success(let archive): return archive
        case .failure(let error) where error.kind == .missingFile:
            return Archive(tree: BadgeTree(configuration: configuration), sync: SyncPolicy(configuration: .init()))
        case .failure(let error): throw error
        }
    }

    /// ``withSharedFile(_:configuration:_:)-(String,_,_)`` for a file URL.
    @discardableResult
    public static func withSharedFile<Result>(
        _ url: URL, configuration: BadgeTree.Configuration = .init(),
        _ body: (BadgeCenter) throws -> Result
    ) throws -> Result {
        try withSharedFile(url.path, configuration: configuration, body)
    }

    /// Replaces this center's marks and sync state with those saved in `path`, in place:
    /// observers stay, and hear every state the reload changed; the center keeps its own
    /// settings (as ``init(contentsOf:configuration:)-(String,_)`` does).
    ///
    /// Call it when the other process may have changed the file, such as when the app comes
    /// to the foreground after its extension ran.
    ///
    /// - Returns: the changes, and the decrement when the total dropped.
    /// - Throws: ``PersistenceError`` as ``init(contentsOf:configuration:)-(String,_)``
    ///   does; the center is then left as it was.
    @discardableResult
    public func reload(from path: String) throws(PersistenceError) -> Outcome {
        replace(with: try Self.read(path, configuration: configuration))
    }

    /// ``reload(from:)-(String)`` for a file URL.
    @discardableResult
    public func reload(from url: URL) throws(PersistenceError) -> Outcome { try reload(from: url.path) }
}
