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

    deinit { Self.remove(path) }

    /// Removes `path` with everything under it (hidden entries and subfolders too; a
    /// symbolic link is removed, not followed).
    static func remove(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            unlink(path)
            return
        }
        if let dir = opendir(path) {
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names { remove(path + "/" + name) }
        }
        rmdir(path)
    }
}
