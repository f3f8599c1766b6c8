import BadgeFlow

/// `validate.json`: what a folder of payload templates declares for its files.
///
/// ```json
/// {"push-types": {"voip-*.json": "voip", "mdm/*.json": "mdm"},
///  "allowed-warnings": {"legacy-*.json": ["unknown-aps-key"]}}
/// ```
///
/// Patterns are fnmatch(3) globs over the file's path relative to the sidecar's folder (a
/// pattern without `/` matches the file name in any subfolder). The sidecar applies to its
/// folder and every folder below; for each setting the nearest sidecar with a matching pattern
/// wins, and within one sidecar the first matching pattern. An envelope's own `push-type` wins
/// over the sidecar, which wins over `--push-type`.
struct ValidateSidecar {
    /// The sidecar's file name.
    static let fileName = "validate.json"

    /// The file it was read from.
    let file: String
    /// `(pattern, push type)` in the file's order.
    var pushTypes: [(String, String)] = []
    /// `(pattern, warning codes)` in the file's order.
    var allowedWarnings: [(String, Set<String>)] = []

    /// Why a sidecar cannot be used.
    struct Failure: Error {
        let message: String
    }

    /// Reads `file`.
    static func read(_ file: String) throws(Failure) -> ValidateSidecar {
        let text: String
        do { text = try FileIO.readString(file) } catch { throw Failure(message: error.description) }
        let root: JSONValue
        do { root = try JSONValue.parse(text) } catch {
            throw Failure(message: "\(file): not valid JSON (\(error.located(in: text)))")
        }
        guard case .object(let members) = root else {
            throw Failure(message: "\(file): validate settings must be a JSON object, got \(root.typeName)")
        }
        var sidecar = ValidateSidecar(file: file)
        for (key, value) in members {
            let at = "/" + JSONPointer.escape(key)
            switch (key, value) {
            case ("push-types", .object(let patterns)):
                for (pattern, type) in patterns {
                    let p = at + "/" + JSONPointer.escape(pattern)
                    guard case .string(let t) = type else {
                        throw Failure(message: "\(file): at \(p): a push type must be a string, got \(type.typeName)")
                    }
                    guard PayloadLimits.pushTypes.contains(t) else {
                        throw Failure(
                            message:
                                "\(file): at \(p): \"\(t)\" is not an apns-push-type; expected one of \(PayloadLimits.pushTypes.joined(separator: ", "))"
                        )
                    }
                    sidecar.pushTypes.append((pattern, t))
                }
            case ("allowed-warnings", .object(let patterns)):
                for (pattern, codes) in patterns {
                    let p = at + "/" + JSONPointer.escape(pattern)
                    guard case .array(let list) = codes else {
                        throw Failure(message: "\(file): at \(p): must be an array of warning codes, got \(codes.typeName)")
                    }
                    var set = Set<String>()
                    for (i, c) in list.enumerated() {
                        guard case .string(let code) = c else {
                            throw Failure(message: "\(file): at \(p)/\(i): a warning code must be a string, got \(c.typeName)")
                        }
                        set.insert(code)
                    }
                    sidecar.allowedWarnings.append((pattern, set))
                }
            case ("push-types", _), ("allowed-warnings", _):
                throw Failure(message: "\(file): at \(at): must be an object of name patterns, got \(value.typeName)")
            default:
                throw Failure(message: "\(file): at \(at): unknown setting \"\(key)\"; expected push-types or allowed-warnings")
            }
        }
        return sidecar
    }

    /// Whether `pattern` matches `relative` (a path below the sidecar's folder).
    static func matches(_ pattern: String, _ relative: String) -> Bool {
        if pattern.contains("/") { return System.matches(pattern, relative) }
        let name = relative.split(separator: "/").last.map(String.init) ?? relative
        return System.matches(pattern, name)
    }

    /// What the sidecars say about one file.
    struct Settings: Equatable {
        /// The push type, and the sidecar that gave it.
        var pushType: (type: String, from: String)? = nil
        /// The warning codes allowed, and the sidecar that allowed them.
        var allowed: (codes: Set<String>, from: String)? = nil

        static func == (a: Settings, b: Settings) -> Bool {
            a.pushType?.type == b.pushType?.type && a.pushType?.from == b.pushType?.from && a.allowed?.codes == b.allowed?.codes
                && a.allowed?.from == b.allowed?.from
        }
    }

    /// Finds and caches the sidecars of the folders below one walked root.
    final class Resolver {
        private var cache: [String: ValidateSidecar?] = [:]
        /// Sidecars that could not be read, with why (each reported once).
        private(set) var failures: [String: String] = [:]

        /// The sidecar of `folder`, if it has one.
        private func sidecar(in folder: String) -> ValidateSidecar? {
            if let cached = cache[folder] { return cached }
            let file = (folder == "." ? "" : folder + "/") + ValidateSidecar.fileName
            var found: ValidateSidecar? = nil
            if FileIO.exists(file) {
                do { found = try ValidateSidecar.read(file) } catch { failures[file] = error.message }
            }
            cache[folder] = found
            return found
        }

        /// The settings for `file`, found below `root` (a folder given on the command line, or
        /// the file's own folder when the file was named).
        func settings(for file: String, root: String) -> Settings {
            var settings = Settings()
            var folder = BatchOptions.folder(file)
            var trimmedRoot = root
            while trimmedRoot.count > 1 && trimmedRoot.hasSuffix("/") { trimmedRoot.removeLast() }
            while true {
                if let s = sidecar(in: folder) {
                    let relative =
                        folder == "." ? file : String(file.dropFirst(folder.count + (folder.hasSuffix("/") ? 0 : 1)))
                    if settings.pushType == nil, let hit = s.pushTypes.first(where: { Self.match($0.0, relative) }) {
                        settings.pushType = (hit.1, s.file)
                    }
                    if settings.allowed == nil, let hit = s.allowedWarnings.first(where: { Self.match($0.0, relative) }) {
                        settings.allowed = (hit.1, s.file)
                    }
                }
                if folder == trimmedRoot || folder == "." || folder == "/" { break }
                let parent = BatchOptions.folder(folder)
                if parent == folder { break }
                folder = parent
            }
            return settings
        }

        private static func match(_ pattern: String, _ relative: String) -> Bool {
            ValidateSidecar.matches(pattern, relative)
        }
    }
}
