/// `badgeflow state split` and `state merge`: a state split by account into the parts a
/// partitioned run uses (``StatePartition``), and the parts joined back into one state.
///
/// Both stream: a JSON state is read through a mapping, front to back, and each account's
/// text is copied to its part as it stands (never decoded into a tree), so memory stays at
/// the buffers of the parts plus a window of the file; a database state is read in key
/// order and its rows or keys written into the parts in bounded batches. `merge` takes the
/// parts' accounts in byte order of id (a k-way merge), so a state that BadgeFlow wrote
/// comes back byte for byte, or row for row. Each format's split and merge live in its
/// folder and are its entry's `StateFormat/split` and `StateFormat/merge`.
public enum StateSplit {
    /// Why a split or merge did not happen.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The command was given something it cannot do (exit 2).
        case usage(String)
        /// A state or part that is unreadable, foreign, or does not fit the others (exit 3).
        case state(StateFile.Failure)
        /// Writing failed (exit 4).
        case io(FileIO.Failure)

        /// The message the CLI prints.
        public var description: String {
            switch self {
            case .usage(let text): return text
            case .state(let f): return "state file \(f.description)"
            case .io(let f): return f.description
            }
        }
    }

    /// The format of `path` (`StateFormat/of(_:)`, by the path's extension) with its split
    /// and merge.
    static func format(_ path: String) throws(Failure) -> (
        format: StateFormat, split: (String, [String]) throws(Failure) -> Void, merge: ([String], String) throws(Failure) -> Void
    ) {
        let format = StateFormat.of(path)
        guard let split = format.split, let merge = format.merge else {
            let able = StateFormat.all.filter { $0.split != nil && $0.merge != nil }.map(\.name)
            throw .usage(
                "\(path): a state of format \(format.name) cannot be split or merged by this build (\(StateFormat.list(able, "and")) can)")
        }
        return (format, split, merge)
    }

    /// Splits the state `file` into `parts` states in `folder` (`part-00000.json` …, named
    /// with the extension of `file`'s format), each holding the accounts that
    /// ``StatePartition/index(of:parts:)`` puts in it and recording its ``StatePartition``
    /// and `file`'s rules. `folder` is created when missing and must otherwise be empty.
    /// A part of a format with checkpoints also keeps `file`'s `seq` and `input`.
    ///
    /// - Returns: the parts' paths, by index.
    /// - Throws: ``Failure``: `file` missing, corrupt, foreign, or already a part; `folder`
    ///   not empty; a write that failed. No part is left behind.
    @discardableResult
    public static func split(_ file: String, parts: Int, into folder: String) throws(Failure) -> [String] {
        let (format, split, _) = try Self.format(file)
        guard parts >= 1 else { throw .usage("--parts must be 1 or more, got \(parts)") }
        guard parts <= 100_000 else { throw .usage("--parts must be at most 100000, got \(parts)") }
        guard FileIO.exists(file) else {
            throw .state(StateFile.Failure(file: file, at: "", message: "no such state file"))
        }
        try prepareFolder(folder)
        let paths = (0..<parts).map { folder + "/" + StatePartition.fileName(index: $0, ext: format.ext) }
        try split(file, paths)
        return paths
    }

    /// Joins the parts of a split state into the state `out` (which must not exist), of the
    /// parts' format: every account of every part, in byte order of id, under the parts'
    /// rules, with no partition record. A result with checkpoints has the parts' `seq` and `input`
    /// when they all agree; otherwise `seq` is the highest (the last line a partitioned run
    /// answered) and `input` is empty.
    ///
    /// - Throws: ``Failure``: a part without a partition record, parts of different P,
    ///   hash, rules or format, a missing or repeated index, an account in two parts or in a
    ///   part it does not belong to; each message names the part and why. `out` is then
    ///   not written.
    public static func merge(_ parts: [String], into out: String) throws(Failure) {
        guard !parts.isEmpty else { throw .usage("merge needs at least one PART") }
        let (format, _, merge) = try Self.format(out)
        for part in parts where try Self.format(part).format != format {
            throw .usage("\(part): a \(try Self.format(part).format.ext) part cannot be merged into \(out), a \(format.ext) state")
        }
        guard System.linkStatus(out) == nil else {
            throw .usage("\(out) exists; merge writes a new state (remove it first)")
        }
        try merge(parts, out)
    }

    /// Checks that the parts, each with its record, make one whole: the same P (and as many
    /// parts as P), every index once. Returns the parts in index order.
    static func ordered<T>(_ parts: [(path: String, partition: StatePartition?, value: T)]) throws(Failure) -> [(
        path: String, partition: StatePartition, value: T
    )] {
        var byIndex: [Int: (path: String, partition: StatePartition, value: T)] = [:]
        var first: (path: String, partition: StatePartition)? = nil
        for part in parts {
            guard let p = part.partition else {
                throw .state(
                    StateFile.Failure(
                        file: part.path, at: "", message: "not a part of a split state (no partition record); `state split` makes parts"))
            }
            if let first, first.partition.parts != p.parts {
                throw .state(
                    StateFile.Failure(
                        file: part.path, at: "",
                        message: "\(p); \(first.path) is a part of \(first.partition.parts): parts of different splits cannot be merged"))
            }
            if first == nil { first = (part.path, p) }
            if let other = byIndex[p.index] {
                throw .state(StateFile.Failure(file: part.path, at: "", message: "\(p), as is \(other.path): index \(p.index) given twice"))
            }
            byIndex[p.index] = (part.path, p, part.value)
        }
        guard let first else { throw .usage("merge needs at least one PART") }
        let missing = (0..<first.partition.parts).filter { byIndex[$0] == nil }
        guard missing.isEmpty else {
            throw .state(
                StateFile.Failure(
                    file: first.path, at: "",
                    message:
                        "the split has \(first.partition.parts) parts; missing: index \(missing.prefix(10).map(String.init).joined(separator: ", "))\(missing.count > 10 ? " …" : "")"
                ))
        }
        return (0..<first.partition.parts).compactMap { byIndex[$0] }
    }

    /// Creates `folder` when missing; refuses one that holds anything.
    private static func prepareFolder(_ folder: String) throws(Failure) {
        guard let st = System.status(folder) else {
            guard System.makeFolder(folder, mode: 0o755) else {
                throw .io(FileIO.Failure(path: folder, message: "cannot create the folder: \(System.errorMessage)"))
            }
            return
        }
        guard st.isFolder else { throw .usage("\(folder) exists and is not a folder") }
        guard let names = System.folderNames(folder) else {
            throw .io(FileIO.Failure(path: folder, message: "cannot read the folder: \(System.errorMessage)"))
        }
        if let name = names.first {
            throw .usage("\(folder) is not empty (\(name)); split writes its parts into a new or empty folder")
        }
    }

    /// Removes the files of a split that failed.
    /// Refuses to split a database state whose meta (`partition.*` rows) says it is itself a
    /// part of a split state.
    static func refuseSplitPart(meta: [String: String], file: String) throws(Failure) {
        do throws(StateFile.Failure) {
            if let p = try StatePartition(meta: meta, file: file) {
                throw StateFile.Failure(file: file, at: "meta.partition", message: "already a split state's \(p); merge its parts first")
            }
        } catch {
            throw .state(error)
        }
    }

    static func removeAll(_ paths: [String]) {
        for p in paths {
            System.removeFile(p)
            System.removeFile(p + "-wal")
            System.removeFile(p + "-shm")
        }
    }

    /// A message naming account `id` that belongs elsewhere.
    static func misplaced(_ id: String, in part: StatePartition, path: String, at: String) -> Failure {
        .state(
            StateFile.Failure(
                file: path, at: at,
                message:
                    "account \(JSONValue.string(id).serialized()) belongs in part \(StatePartition.index(of: id, parts: part.parts)) of \(part.parts), not in this \(part); was the run's partition count the split's?"
            ))
    }
}
