/// The RocksDB format's entry in the registry of formats (``StateFormat/all``): a folder
/// that commits checkpoints, can be read live and has a block cache.
extension StateFormat {
    /// A RocksDB state (`FILE.rocksdb`, a folder).
    package static var rocksdb: StateFormat {
        StateFormat(
            name: RocksDBStateStore.name, title: "RocksDB", article: "a", extensions: [".rocksdb"], isFolder: true,
            store: RocksDBStateStore.self, stateHelp: "FILE.rocksdb a RocksDB folder", hasBlockCache: true,
            split: StateSplit.splitRocksDB, merge: StateSplit.mergeRocksDB, liveStamp: RocksDBStateStore.liveStamp,
            remove: StateFormat.removeFolder, rulesSeed: RocksDBStore.seed)
    }
}

extension RocksDBStateStore {
    /// What changes on disk when a checkpoint commits: the folder's inode, size and times
    /// (each checkpoint flushes a new table file) and those of `CURRENT` and the manifest it
    /// names.
    ///
    /// A live reader (``LiveState``) of a RocksDB state sees the checkpoints committed when
    /// its read-only handle was opened, so an account is at most one refresh behind. Each
    /// account is one value, written by one checkpoint's `WriteBatch`: never a torn account.
    static func liveStamp(_ path: String) -> [Int64] {
        var out: [Int64] = []
        StateFormat.addStamp(path, to: &out)
        StateFormat.addStamp(path + "/CURRENT", to: &out)
        if let current = try? FileIO.readString(path + "/CURRENT") {
            let name = current.split(separator: "\n").first.map(String.init) ?? ""
            if !name.isEmpty, !name.contains("/") { StateFormat.addStamp(path + "/" + name, to: &out) }
        }
        return out
    }
}

extension RuleSet {
    /// The seed of a RocksDB state's value check for these rules (``RocksDBStore/seed(_:)``,
    /// computed once when the rules are compiled; 0 for rules built in code): unlike
    /// ``rowCacheSeed``, the same in every release.
    var storeSeed: UInt64 { storeSeeds[RocksDBStateStore.name] ?? 0 }
}
