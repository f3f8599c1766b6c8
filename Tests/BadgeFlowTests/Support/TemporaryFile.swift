import BadgeFlow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh temporary folder for one test, removed with its files when the test drops it.
final class TemporaryFolder {
    let path: String

    init() throws {
        var template = Array("/tmp/badgeflow-test-XXXXXX".utf8CString)
        guard
            let made = template.withUnsafeMutableBufferPointer({ buffer in
                buffer.baseAddress.flatMap { mkdtemp($0) }
            })
        else {
            throw FileIO.Failure(path: "/tmp", message: "mkdtemp failed")
        }
        path = String(cString: made)
    }

    /// The path of `name` inside the folder.
    func file(_ name: String) -> String { path + "/" + name }

    /// Writes `bytes` to `name` and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try FileIO.writeAtomically(bytes, to: file(name))
        return file(name)
    }

    /// The names in the folder, sorted.
    func names() throws -> [String] { try FixtureFolder.list(path) }

    deinit {
        for name in (try? FixtureFolder.list(path)) ?? [] { unlink(path + "/" + name) }
        rmdir(path)
    }
}
