import BadgeFlow

/// Finds batch inputs below the command-line PATHs, in a stable order.
///
/// Only regular files (and symbolic links to regular files) are found: a FIFO, a socket or a
/// device inside a walked folder is skipped, as reading it could block forever. As with
/// find(1), a symbolic link to a folder inside a walked folder is not followed (a PATH given
/// on the command line is), so a link such as `ln -s .. d/up` cannot make a loop; a folder
/// met again below itself (a bind mount) is skipped with a warning. Names are kept as bytes while walking;
/// a file whose path is not valid UTF-8 cannot be named on to the readers, so it is listed
/// apart (``Found/undecodable``) for the command to report.
enum FileWalk {
    /// What a walk found.
    struct Found {
        /// Regular files, sorted by path bytes.
        var files: [String] = []
        /// Regular files whose path is not valid UTF-8, shown with `\xHH` for each invalid byte.
        var undecodable: [String] = []
        /// Entries that are neither regular files nor folders (FIFOs, sockets, devices), each
        /// with its kind, skipped.
        var special: [(path: String, kind: String)] = []
        /// Folders met again below themselves (a bind mount), not walked twice.
        var loops: [String] = []
    }

    /// Whether `path` is a folder.
    static func isDirectory(_ path: String) -> Bool {
        System.status(path)?.isFolder ?? false
    }

    /// Every regular file below `path` (or `path` itself when it is not a folder: a file
    /// named on the command line is read whatever its kind), sorted by path bytes.
    static func walk(_ path: String) -> Found {
        var found = Found()
        guard isDirectory(path) else {
            found.files = [path]
            return found
        }
        var base = Array(path.utf8)
        while base.count > 1 && base.last == UInt8(ascii: "/") { base.removeLast() }
        var ancestors: [Identity] = []
        walk(folder: base, ancestors: &ancestors, into: &found)
        return found
    }

    /// A folder's identity, to find loops.
    private struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    private static func identity(_ st: System.FileStatus) -> Identity {
        Identity(device: st.device, inode: UInt64(bitPattern: st.inode))
    }

    private static func walk(folder: [UInt8], ancestors: inout [Identity], into found: inout Found) {
        guard let st = System.status(bytes: folder) else { return }
        ancestors.append(identity(st))
        defer { ancestors.removeLast() }
        guard let read = System.folderNames(bytes: folder) else { return }
        // Hidden entries (and `.`, `..`) are never inputs.
        let names = read.filter { name in name.first != UInt8(ascii: ".") && !name.isEmpty }
        let prefix = folder == [UInt8(ascii: "/")] ? folder : folder + [UInt8(ascii: "/")]
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let path = prefix + name
            guard let target = System.status(bytes: path) else {
                // A dangling link: named, so that reading it reports why.
                add(path, to: &found)
                continue
            }
            switch target.kind {
            case .regular:
                add(path, to: &found)
            case .folder:
                if System.linkStatus(bytes: path)?.kind == .link {
                    // Like find(1): a link to a folder is not followed (only a PATH given is).
                    continue
                }
                if ancestors.contains(identity(target)) {
                    found.loops.append(display(path))
                } else {
                    walk(folder: path, ancestors: &ancestors, into: &found)
                }
            case .fifo: found.special.append((display(path), "a FIFO"))
            case .socket: found.special.append((display(path), "a socket"))
            case .characterDevice: found.special.append((display(path), "a character device"))
            case .blockDevice: found.special.append((display(path), "a block device"))
            case .link, .other: found.special.append((display(path), "not a regular file"))
            }
        }
    }

    private static func add(_ path: [UInt8], to found: inout Found) {
        if let name = String(validating: path, as: UTF8.self) {
            found.files.append(name)
        } else {
            found.undecodable.append(display(path))
        }
    }

    /// `bytes` as text, each byte that is not part of valid UTF-8 shown as `\xHH`.
    static func display(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var out = ""
        var i = 0
        while i < bytes.count {
            var length = 0
            for k in 1...4 where i + k <= bytes.count {
                if let s = String(validating: bytes[i..<(i + k)], as: UTF8.self) {
                    out += s
                    length = k
                    break
                }
            }
            if length == 0 {
                let hex = Array("0123456789ABCDEF")
                out += "\\x" + String(hex[Int(bytes[i] >> 4)]) + String(hex[Int(bytes[i] & 0xF)])
                length = 1
            }
            i += length
        }
        return out
    }

    /// Prints a warning on stderr for each folder loop, and for each special file whose name
    /// `inputs` takes (a FIFO named `a.json`): skipped, not read.
    static func warn(about found: Found, inputs: (String) -> Bool) {
        for link in found.loops {
            Console.error("badgeflow: warning: \(link): not walked: the folder holds itself (a loop)")
        }
        for (path, kind) in found.special where inputs(path) {
            Console.error("badgeflow: warning: \(path): skipped: \(kind), not a regular file")
        }
    }

    /// Creates `path` and its missing parents.
    static func makeDirectories(_ path: String) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            _ = System.makeFolder(current, mode: 0o755)
        }
    }
}
