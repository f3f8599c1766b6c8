import Foundation

/// A fresh folder under the system's temporary folder, for one test: removed with everything
/// in it when the test drops it (or, for a path from ``make()``, by ``remove(_:)``).
public final class TemporaryFolder: @unchecked Sendable {
    /// What every folder's name starts with (``remove(_:)`` removes nothing else).
    public static let prefix = "badgeflow-tests-"

    /// The folder.
    public let path: String

    /// Makes a fresh folder.
    public init() throws { path = try Self.make() }

    deinit { Self.remove(path) }

    /// The folder as a file URL.
    public var url: URL { URL(fileURLWithPath: path) }

    /// The path of `name` inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The names in the folder (hidden ones included), sorted.
    public func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

    /// Makes a fresh folder and returns its path; the caller removes it with ``remove(_:)``
    /// (in a `defer`), or uses ``with(_:)``.
    public static func make() throws -> String {
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes a folder made by ``make()`` with everything in it (a symbolic link in it is
    /// removed, not followed).
    public static func remove(_ path: String) {
        guard path.hasPrefix(NSTemporaryDirectory() + prefix) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `body` with a fresh folder, removed afterwards whatever happens.
    public static func with<T>(_ body: (String) throws -> T) throws -> T {
        let path = try make()
        defer { remove(path) }
        return try body(path)
    }

    /// Runs `body` with a fresh folder, removed afterwards whatever happens.
    public static func with<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = try make()
        defer { remove(path) }
        return try await body(path)
    }
}

/// Writes `text` to `path`, making the folders on the way that are missing.
public func writeFile(_ text: String, _ path: String) throws {
    let folder = (path as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}
