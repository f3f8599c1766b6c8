#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds batch inputs below the command-line PATHs, in a stable order.
enum FileWalk {
    /// Whether `path` is a folder.
    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Every regular file below `path` (or `path` itself), sorted by path bytes.
    static func files(under path: String) -> [String] {
        guard isDirectory(path) else { return [path] }
        var out: [String] = []
        guard let dir = opendir(path) else { return [] }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." && !name.hasPrefix(".") { names.append(name) }
        }
        closedir(dir)
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out.append(contentsOf: files(under: base + "/" + name))
        }
        return out
    }

    /// Creates `path` and its missing parents.
    static func makeDirectories(_ path: String) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            mkdir(current, 0o755)
        }
    }
}
