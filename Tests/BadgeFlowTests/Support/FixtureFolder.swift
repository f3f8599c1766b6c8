#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum FixtureFolder {
    struct Failure: Error { let path: String }

    /// The names of the regular files in a folder, sorted.
    static func list(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw Failure(path: path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}
