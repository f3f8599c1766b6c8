/// A state format and what it can do: the one registry of formats (``all``), which the
/// filter, `state`, `tree`, `serve`, the CLI's help and checks, and the tests ask instead
/// of naming a format.
///
/// Each format's code lives in its own folder under `State/` (its ``StateStore``, its split
/// and merge, its entry here as a `static var` in an extension); adding one is that folder,
/// one line in ``all``, its tests and its docs.
package struct StateFormat {
    /// The name `state info` prints (`json`, `sqlite`, `rocksdb`).
    package let name: String
    /// The name in help and messages (`JSON`, `SQLite`, `RocksDB`).
    package let title: String
    /// The article before ``title`` (`a`, `an`).
    package let article: String
    /// The endings of the paths of this format, the usual one first (`.sqlite`, `.db`).
    package let extensions: [String]
    /// Whether a state is a folder (true) or a file.
    package let isFolder: Bool
    /// The store that opens a state of this format.
    package let store: any StateStore.Type
    /// The filter's `--state` help for this format (`FILE.json is loaded at start and ...`).
    package let stateHelp: String
    /// Whether the store has a block cache (`filter --block-cache`, ``StateStore/setBlockCache(bytes:)``).
    package let hasBlockCache: Bool
    /// Splits the state at the first path into the parts at the second (`state split`;
    /// nil: not this format).
    package let split: ((String, [String]) throws(StateSplit.Failure) -> Void)?
    /// Merges the parts at the first paths into the new state at the second (`state merge`).
    package let merge: (([String], String) throws(StateSplit.Failure) -> Void)?
    /// What changes on disk when a checkpoint commits (``LiveState/refresh()``); nil: the
    /// format cannot be read live (it is saved whole at the end of a run).
    package let liveStamp: ((String) -> [Int64])?
    /// Removes what a conversion that failed wrote at a path (a file and what sits beside
    /// it, or a folder and what it holds).
    package let remove: (String) -> Void
    /// The seed of the stored values' check for a rule set, computed once when the rules
    /// are compiled (``RuleSet/storeSeeds``); nil: the format keeps none there.
    package let rulesSeed: ((RuleSet) -> UInt64)?

    /// Creates a registry entry (each format's folder makes its own).
    package init(
        name: String, title: String, article: String, extensions: [String], isFolder: Bool, store: any StateStore.Type,
        stateHelp: String, hasBlockCache: Bool = false,
        split: ((String, [String]) throws(StateSplit.Failure) -> Void)?,
        merge: (([String], String) throws(StateSplit.Failure) -> Void)?,
        liveStamp: ((String) -> [Int64])?, remove: @escaping (String) -> Void, rulesSeed: ((RuleSet) -> UInt64)? = nil
    ) {
        self.name = name
        self.title = title
        self.article = article
        self.extensions = extensions
        self.isFolder = isFolder
        self.store = store
        self.stateHelp = stateHelp
        self.hasBlockCache = hasBlockCache
        self.split = split
        self.merge = merge
        self.liveStamp = liveStamp
        self.remove = remove
        self.rulesSeed = rulesSeed
    }

    /// Whether states of this format commit checkpoints while a filter runs and keep a
    /// resume point (`--resume`, `--max-resident`).
    package var checkpoints: Bool { store.checkpoints }
    /// Whether a state of this format can be read while a filter writes it (`serve`).
    package var isLiveReadable: Bool { liveStamp != nil }
    /// The usual extension without its dot (`sqlite`): what `state split` names parts with.
    package var ext: String { String(extensions.first?.dropFirst() ?? "") }
}

extension StateFormat: Equatable {
    package static func == (a: StateFormat, b: StateFormat) -> Bool { a.name == b.name }
}

// MARK: - The registry

extension StateFormat {
    /// Every format, in the order help lists them. A new format is its folder and one entry
    /// here.
    package static var all: [StateFormat] { [.json, .sqlite, .rocksdb] }

    /// The format of a path that no format's extension ends: JSON.
    package static var fallback: StateFormat { .json }

    /// The format of the state at `path`: the first whose extension `path` ends with, else
    /// ``fallback``.
    package static func of(_ path: String) -> StateFormat {
        all.first { $0.extensions.contains(where: path.hasSuffix) } ?? fallback
    }

    /// Opens the state at `path` in its format.
    ///
    /// - Throws: `StateFile.Failure` when it cannot be opened, or (`readOnly`) a format that
    ///   needs a file finds none.
    package static func open(path: String, readOnly: Bool) throws(StateFile.Failure) -> any StateStore {
        try of(path).store.init(path: path, readOnly: readOnly)
    }

    /// The formats that commit checkpoints.
    package static var checkpointing: [StateFormat] { all.filter(\.checkpoints) }
    /// The formats that can be read live.
    package static var liveReadable: [StateFormat] { all.filter(\.isLiveReadable) }
    /// The formats with a block cache.
    package static var withBlockCache: [StateFormat] { all.filter(\.hasBlockCache) }

    /// The seeds of every format that keeps one for `rules` (``rulesSeed``), by name.
    static func seeds(_ rules: RuleSet) -> [String: UInt64] {
        var seeds: [String: UInt64] = [:]
        for format in all { if let seed = format.rulesSeed { seeds[format.name] = seed(rules) } }
        return seeds
    }
}

// MARK: - Texts that list formats (help and messages)

extension StateFormat {
    /// `a`, `a or b`, `a, b or c` (`joined: "or"`), or with `and`.
    package static func list(_ items: [String], _ conjunction: String) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }

    /// The titles of `formats` (`SQLite or RocksDB`).
    package static func titles(_ formats: [StateFormat] = all, _ conjunction: String = "or") -> String {
        list(formats.map(\.title), conjunction)
    }

    /// The titles of `formats` after the first one's article (`an SQLite or RocksDB`), with
    /// a capital first letter when `capital`.
    package static func titlesWithArticle(_ formats: [StateFormat], capital: Bool = false) -> String {
        let article = formats.first?.article ?? "a"
        return (capital ? article.prefix(1).uppercased() + article.dropFirst() : article) + " " + titles(formats)
    }

    /// Every format's extensions: `.json, .sqlite or .db, .rocksdb`.
    package static var extensionList: String {
        all.map { $0.extensions.joined(separator: " or ") }.joined(separator: ", ")
    }

    /// `A state file (.json, .sqlite or .db) or folder (.rocksdb).`
    package static var fileOrFolderHelp: String {
        func exts(_ formats: [StateFormat]) -> String { formats.map { $0.extensions.joined(separator: " or ") }.joined(separator: ", ") }
        let files = all.filter { !$0.isFolder }, folders = all.filter(\.isFolder)
        var text = "A state file (\(exts(files)))"
        if !folders.isEmpty { text += " or folder (\(exts(folders)))" }
        return text + "."
    }

    /// `FILE.sqlite (or FILE.db, FILE.rocksdb)`: the paths of a state with checkpoints.
    package static var checkpointingFiles: String {
        let files = checkpointing.flatMap(\.extensions).map { "FILE" + $0 }
        guard let first = files.first else { return "" }
        return files.count > 1 ? "\(first) (or \(files.dropFirst().joined(separator: ", ")))" : first
    }

    /// The filter's `--state` help, from each format's ``stateHelp``.
    package static var stateOptionHelp: String {
        let saved = all.filter { !$0.checkpoints }.map(\.stateHelp)
        let committed = checkpointing.map(\.stateHelp)
        var text = "Keep state in FILE: " + saved.joined(separator: "; ")
        if !committed.isEmpty {
            text += "; " + list(committed, "and") + (committed.count == 2 ? ", both" : committed.count > 2 ? ", all" : ",")
            text += " committed at checkpoints"
        }
        return text + ". One filter at a time per FILE (FILE.lock)."
    }

    /// `state split`'s parts: `OUTDIR/part-00000.json ... (or .sqlite, or .rocksdb folders, by FILE's format)`.
    package static var splitPartsHelp: String {
        let formats = all.filter { $0.split != nil }
        let others = formats.dropFirst().map { "." + $0.ext + ($0.isFolder ? " folders" : "") }
        return "OUTDIR/part-00000.\(formats.first?.ext ?? "") ... (or \(others.joined(separator: ", or ")), by FILE's format)"
    }

    /// Why `--block-cache` is refused without a state with a block cache.
    package static var blockCacheNeeded: String {
        let formats = withBlockCache
        let files = list(formats.map { "FILE" + ($0.extensions.first ?? "") }, "or")
        return "--block-cache needs --state \(files) (only \(titles(formats)) \(formats.count == 1 ? "has" : "have") a block cache)"
    }

    /// Why a state of `format` cannot be served live.
    package static func notLive(_ format: StateFormat) -> String {
        let live = liveReadable
        let first = live.first?.article ?? "a"
        let named = list(live.map { "\($0.title) (\($0.extensions.joined(separator: ", ")))" }, "or")
        return
            "\(format.article) \(format.title) state is saved whole at the end of a run, so it cannot be read live; serve \(first) \(named) state (badgeflow state convert)"
    }
}

// MARK: - Helpers the formats share

extension StateFormat {
    /// The size of the file at `path` in bytes (0: none).
    static func size(_ path: String) -> Int64 {
        System.status(path)?.size ?? 0
    }

    /// What a state file (or a file a folder state needs) of 0 bytes is: never a new empty
    /// state, since BadgeFlow's own saves never leave one (a truncated copy, a full disk
    /// while something else wrote it, `: > FILE`).
    static func emptyFile(_ path: String, _ what: String = "empty file") -> StateFile.Failure {
        StateFile.Failure(
            file: path, at: "",
            message:
                "not a BadgeFlow state: \(what) (BadgeFlow never leaves one; restore the state from a copy, or remove it to start from an empty state)"
        )
    }

    /// Refuses a regular file of 0 bytes at `path`; a missing path is a new state.
    static func refuseEmptyFile(_ path: String) throws(StateFile.Failure) {
        guard let st = System.status(path), st.isRegular, st.size == 0 else { return }
        throw emptyFile(path)
    }

    /// Adds the inode, size and modification time of `file` to `stamp` (-1: no such file),
    /// for a format's ``liveStamp``.
    static func addStamp(_ file: String, to stamp: inout [Int64]) {
        guard let st = System.status(file) else { return stamp.append(-1) }
        stamp.append(contentsOf: [st.inode, st.size, st.modified.seconds, st.modified.nanoseconds])
    }

    /// Removes the file at `path` (a format's ``remove``).
    static func removeFile(_ path: String) { System.removeFile(path) }

    /// Removes the folder at `path` and the files it holds (a folder format's ``remove``).
    static func removeFolder(_ path: String) {
        guard let st = System.linkStatus(path) else { return }
        guard st.isFolder else { return removeFile(path) }
        for name in System.folderNames(path) ?? [] { System.removeFile(path + "/" + name) }
        System.removeEmptyFolder(path)
    }
}
