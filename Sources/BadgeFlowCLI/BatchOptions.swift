import BadgeFlow

/// A fixture's options, read from its sidecar files.
///
/// Per folder: `rules.json` (the folder's rules) and `batch.json` (options); per fixture:
/// `NAME.rules.json` (its rules) and `NAME.batch.json` (options). A fixture's own sidecars win
/// over its folder's, which win over the folders' above it up to the PATH walked (the nearest
/// sidecar wins), which win over the command line. `batch.json` and `NAME.batch.json`
/// hold `{"rules": FILE, "stamp": BOOL, "numbered": BOOL, "state": FILE.state.json,
/// "expected-errors": [CODE…]}` (every key optional; paths relative to the sidecar). None of
/// these files, nor `*.state.json`, `*.expected.ndjson` or `*.actual.ndjson`, is ever an input.
struct BatchOptions {
    var rules: RuleSet
    /// Where the rules came from: a sidecar or `--rules` file, or `built-in rules`; every
    /// failure names it.
    var rulesName = "built-in rules"
    var stamp = false
    var numbered = false
    /// A starting state (`*.state.json`), or nil for empty state.
    var state: String? = nil
    /// Error codes the fixture's output may hold (`--strict` fails any other).
    var expectedErrors: Set<String> = []

    /// True for sidecar file names (never inputs).
    static func isSidecar(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if name == "rules.json" || name == "batch.json" || name == "state.json" || name == ValidateSidecar.fileName {
            return true
        }
        return name.hasSuffix(".rules.json") || name.hasSuffix(".batch.json") || name.hasSuffix(".state.json")
            || name.hasSuffix(".expected.ndjson") || name.hasSuffix(".actual.ndjson")
    }

    /// The fixture's stem: `a/b.ndjson` → `a/b`.
    static func stem(_ file: String) -> String {
        file.hasSuffix(".ndjson") ? String(file.dropLast(7)) : String(file.dropLast(5))
    }

    /// The folder part of `file` (`.` when it has none).
    static func folder(_ file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "." }
        return slash == file.startIndex ? "/" : String(file[..<slash])
    }

    /// Why a sidecar cannot be used.
    struct Failure: Error {
        let message: String
    }

    /// The options one sidecar file sets (nil fields: not set).
    struct Layer {
        var rulesFile: String? = nil
        var stamp: Bool? = nil
        var numbered: Bool? = nil
        var state: String? = nil
        var expectedErrors: Set<String>? = nil

        /// Reads `file` (missing: an empty layer).
        static func read(_ file: String) throws(Failure) -> Layer {
            guard FileIO.exists(file) else { return Layer() }
            let text: String
            do { text = try FileIO.readString(file) } catch { throw Failure(message: error.description) }
            let root: JSONValue
            do { root = try JSONValue.parse(text) } catch {
                throw Failure(message: "\(file): not valid JSON (\(error.located(in: text)))")
            }
            guard case .object(let members) = root else {
                throw Failure(message: "\(file): batch options must be a JSON object, got \(root.typeName)")
            }
            let dir = BatchOptions.folder(file)
            func relative(_ p: String) -> String { p.hasPrefix("/") || dir == "." ? p : dir + "/" + p }
            var layer = Layer()
            for (key, value) in members {
                let at = "/" + JSONPointer.escape(key)
                func bad(_ why: String) -> Failure { Failure(message: "\(file): at \(at): \(why)") }
                switch (key, value) {
                case ("rules", .string(let p)): layer.rulesFile = relative(p)
                case ("stamp", .bool(let b)): layer.stamp = b
                case ("numbered", .bool(let b)): layer.numbered = b
                case ("state", .string(let p)):
                    guard p.hasSuffix(".state.json") || p == "state.json" || p.hasSuffix("/state.json") else {
                        throw bad("a starting state must be named *.state.json (so batch never runs it as a fixture), got \"\(p)\"")
                    }
                    guard FileIO.exists(relative(p)) else {
                        throw bad("the starting state \(relative(p)) does not exist (a fixture would start from an empty state)")
                    }
                    layer.state = relative(p)
                case ("expected-errors", .array(let codes)):
                    var set = Set<String>()
                    for (i, c) in codes.enumerated() {
                        guard case .string(let code) = c else {
                            throw Failure(message: "\(file): at \(at)/\(i): an error code must be a string, got \(c.typeName)")
                        }
                        set.insert(code)
                    }
                    layer.expectedErrors = set
                case ("rules", _), ("state", _):
                    throw bad("must be a file name (string), got \(value.typeName)")
                case ("stamp", _), ("numbered", _):
                    throw bad("must be true or false, got \(value.typeName)")
                case ("expected-errors", _):
                    throw bad("must be an array of error codes, got \(value.typeName)")
                default:
                    throw bad("unknown option \"\(key)\"; expected rules, stamp, numbered, state or expected-errors")
                }
            }
            return layer
        }
    }

    /// Resolves every fixture's options; folder sidecars are read and compiled once.
    final class Resolver {
        let base: RuleSet
        let baseName: String
        /// The folders walked (command-line PATHs): folder settings are inherited below them.
        private let roots: [String]
        private var folders: [String: Result<Folder, Failure>] = [:]

        /// A folder's settings, its own over those inherited.
        struct Folder {
            var layer: Layer
            var rules: (set: RuleSet, name: String)?
        }

        init(base: RuleSet, baseName: String = "built-in rules", roots: [String] = []) {
            self.base = base
            self.baseName = baseName
            self.roots = roots.map { r in
                var r = r
                while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
                return r
            }
        }

        private static func rules(_ file: String) throws(Failure) -> RuleSet {
            do { return try RuleSet.load(file: file) } catch { throw Failure(message: error.description) }
        }

        /// Rules from a `rules.json`-style sidecar and/or a layer's `rules`; both is an error.
        private static func rules(sidecar: String, layer: Layer, layerFile: String) throws(Failure) -> (RuleSet, String)? {
            let own = FileIO.exists(sidecar)
            if own, layer.rulesFile != nil {
                throw Failure(message: "\(layerFile): at /rules: \(sidecar) already gives the rules; keep one of them")
            }
            if own { return (try rules(sidecar), sidecar) }
            if let f = layer.rulesFile { return (try rules(f), f) }
            return nil
        }

        /// The folder whose settings `dir` inherits: its parent, while that is a walked
        /// folder or below one.
        private func inheritedParent(_ dir: String) -> String? {
            if roots.contains(dir) { return nil }
            let parent = BatchOptions.folder(dir)
            guard parent != dir else { return nil }
            for r in roots {
                if parent == r || (r == "." && !parent.hasPrefix("/")) || parent.hasPrefix(r == "/" ? "/" : r + "/") {
                    return parent
                }
            }
            return nil
        }

        private func folder(_ dir: String) throws(Failure) -> Folder {
            if let cached = folders[dir] { return try cached.get() }
            let prefix = dir == "." ? "" : dir == "/" ? "/" : dir + "/"
            let result: Result<Folder, Failure>
            do {
                var layer = try Layer.read(prefix + "batch.json")
                var rules = try Self.rules(sidecar: prefix + "rules.json", layer: layer, layerFile: prefix + "batch.json")
                    .map { (set: $0.0, name: $0.1) }
                if let parent = inheritedParent(dir) {
                    let above = try folder(parent)
                    layer.stamp = layer.stamp ?? above.layer.stamp
                    layer.numbered = layer.numbered ?? above.layer.numbered
                    layer.state = layer.state ?? above.layer.state
                    layer.expectedErrors = layer.expectedErrors ?? above.layer.expectedErrors
                    rules = rules ?? above.rules
                }
                result = .success(Folder(layer: layer, rules: rules))
            } catch {
                result = .failure(error)
            }
            folders[dir] = result
            return try result.get()
        }

        /// The options for `file`.
        func options(for file: String) throws(Failure) -> BatchOptions {
            let shared = try folder(BatchOptions.folder(file))
            let stem = BatchOptions.stem(file)
            let own = try Layer.read(stem + ".batch.json")
            let ownRules = try Self.rules(sidecar: stem + ".rules.json", layer: own, layerFile: stem + ".batch.json")
            var o = BatchOptions(rules: ownRules?.0 ?? shared.rules?.set ?? base)
            o.rulesName = ownRules?.1 ?? shared.rules?.name ?? baseName
            o.stamp = own.stamp ?? shared.layer.stamp ?? false
            o.numbered = own.numbered ?? shared.layer.numbered ?? false
            o.state = own.state ?? shared.layer.state
            o.expectedErrors = own.expectedErrors ?? shared.layer.expectedErrors ?? []
            return o
        }
    }
}
