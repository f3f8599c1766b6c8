/// Split and merge of RocksDB states (folders): keys and values are copied as RocksDB holds
/// them, read through one iterator per state and written in bounded batches
/// (`RocksDBStore.RawBatch`); every RocksDB call is `RocksDBStore`'s.
extension StateSplit {
    /// Opens a RocksDB state to read and checks its recorded rules.
    private static func openedRocksDB(_ path: String) throws(Failure) -> (store: RocksDBStore, rules: RuleSet) {
        let store: RocksDBStore
        do { store = try RocksDBStore(path: path, readOnly: true) } catch { throw .state(error) }
        do { return (store, try store.recordedRules() ?? RuleSet.builtIn) } catch {
            store.close()
            throw .state(error)
        }
    }

    /// Removes the folders of a split or merge that failed.
    private static func removeFolders(_ paths: [String]) {
        for path in paths {
            guard let names = System.folderNames(path) else { continue }
            for name in names { System.removeFile(path + "/" + name) }
            System.removeEmptyFolder(path)
        }
    }

    static func splitRocksDB(_ file: String, into paths: [String]) throws(Failure) {
        let (source, rules) = try openedRocksDB(file)
        defer { source.close() }
        let meta = source.meta
        try refuseSplitPart(meta: meta, file: file)
        var done = false
        var parts: [RocksDBStore] = []
        defer {
            for p in parts { p.close() }
            if !done { removeFolders(paths) }
        }
        do throws(StateFile.Failure) {
            for path in paths { parts.append(try RocksDBStore(path: path)) }
            // 64 MiB of batches in all, 8 MiB a part at most and 1 MiB at least.
            let limit = min(8 << 20, max(1 << 20, (64 << 20) / paths.count))
            let batches = parts.map { RocksDBStore.RawBatch($0, limit: limit) }
            var counts = [(accounts: Int, devices: Int, marks: Int)](repeating: (0, 0, 0), count: paths.count)
            try source.forEachRawEntry(kind: 1) { (id, value) throws(StateFile.Failure) in
                let p = Int(StatePartition.crc32(id) % UInt32(paths.count))
                let c = try source.storedCounts(id: String(decoding: id, as: UTF8.self), value: value, rules: rules)
                counts[p].accounts += 1
                counts[p].devices += c.devices
                counts[p].marks += c.marks
                try batches[p].put(kind: 1, id, value)
            }
            try source.forEachRawEntry(kind: 2) { (id, value) throws(StateFile.Failure) in
                try batches[Int(StatePartition.crc32(id) % UInt32(paths.count))].put(kind: 2, id, value)
            }
            for (i, part) in parts.enumerated() {
                try batches[i].finish()
                var entries = meta.filter { !ownMeta.contains($0.key) }
                for (key, value) in StatePartition(parts: paths.count, index: i)?.metaRows ?? [] { entries[key] = value }
                entries["accounts"] = String(counts[i].accounts)
                entries["devices"] = String(counts[i].devices)
                entries["marks"] = String(counts[i].marks)
                try part.writeMeta(entries)
            }
        } catch {
            throw .state(error)
        }
        for p in parts { p.close() }
        parts = []
        if let first = paths.first { FileIO.syncFolder(of: first) }
        done = true
    }

    static func mergeRocksDB(_ paths: [String], into out: String) throws(Failure) {
        var opened: [(path: String, partition: StatePartition?, value: RocksDBStore)] = []
        defer { for part in opened { part.value.close() } }
        for path in paths {
            let (store, _) = try openedRocksDB(path)
            do { opened.append((path, try StatePartition(meta: store.meta, file: path), store)) } catch {
                store.close()
                throw .state(error)
            }
        }
        let parts = try ordered(opened)
        let first = parts[0]
        for part in parts where part.value.meta["rules"] != first.value.meta["rules"] {
            throw .state(
                StateFile.Failure(
                    file: part.path, at: "meta.rules",
                    message: "its rules differ from \(first.path)'s; the parts of one split were run with the same rules"))
        }
        let temp = out + ".tmp.\(System.processID)"
        var done = false
        removeFolders([temp])
        defer { if !done { removeFolders([temp]) } }
        do throws(StateFile.Failure) {
            let target = try RocksDBStore(path: temp)
            defer { target.close() }
            let batch = RocksDBStore.RawBatch(target)
            var accounts = 0
            var devices = 0
            var marks = 0
            for part in parts {
                let store = part.value
                try store.forEachRawEntry(kind: 1) { (id, value) throws(StateFile.Failure) in
                    guard Int(StatePartition.crc32(id) % UInt32(part.partition.parts)) == part.partition.index else {
                        throw StateFile.Failure(
                            file: part.path, at: "accounts",
                            message:
                                "account \(JSONValue.string(String(decoding: id, as: UTF8.self)).serialized()) belongs in part \(StatePartition.crc32(id) % UInt32(part.partition.parts)) of \(part.partition.parts), not in this \(part.partition); was the run's partition count the split's?"
                        )
                    }
                    accounts += 1
                    try batch.put(kind: 1, id, value)
                }
                try store.forEachRawEntry(kind: 2) { (id, value) throws(StateFile.Failure) in
                    guard Int(StatePartition.crc32(id) % UInt32(part.partition.parts)) == part.partition.index else {
                        throw StateFile.Failure(
                            file: part.path, at: "due",
                            message:
                                "the due entry of account \(JSONValue.string(String(decoding: id, as: UTF8.self)).serialized()) belongs in part \(StatePartition.crc32(id) % UInt32(part.partition.parts)), not in this \(part.partition)"
                        )
                    }
                    try batch.put(kind: 2, id, value)
                }
                devices += store.deviceCount
                marks += store.markCount
            }
            try batch.finish()
            var entries = first.value.meta.filter { !ownMeta.contains($0.key) }
            for part in parts {
                for (key, value) in part.value.meta where key.hasPrefix("rules@") { entries[key] = value }
            }
            let seqs = Set(parts.map { $0.value.meta["seq"] ?? "0" })
            if seqs.count > 1 { entries["seq"] = String(seqs.compactMap { Int($0) }.max() ?? 0) }
            if Set(parts.map { $0.value.meta["input"] ?? "" }).count > 1 { entries["input"] = "" }
            // Every input any part recorded, and a queue offset when any part's seq is one.
            entries.merge(StateRecords(merging: parts.map { StateRecords(meta: $0.value.meta) }).meta) { _, new in new }
            // The values are copied as they are, so the merge holds the newest form any part
            // holds: a part that has checkpointed since the split is layout 2, one that has
            // not is still layout 1, and layout 2 covers both.
            entries["layout"] = String(parts.map { Int($0.value.meta["layout"] ?? "") ?? 1 }.max() ?? RocksDBStore.layout)
            // A part holding settings per account (version 3) makes the merge version 3.
            entries["version"] = String(parts.compactMap { Int64($0.value.meta["version"] ?? "") }.max() ?? StateFile.version)
            entries["accounts"] = String(accounts)
            entries["devices"] = String(devices)
            entries["marks"] = String(marks)
            try target.writeMeta(entries)
        } catch {
            throw .state(error)
        }
        guard System.rename(temp, over: out) else {
            throw .io(FileIO.Failure(path: out, message: "cannot rename \(temp) over it: \(System.errorMessage)"))
        }
        FileIO.syncFolder(of: out)
        done = true
    }
}
