import Testing

@testable import BadgeFlow

/// The registry's entries pinned by hand: tests that iterate ``StateFormat/all`` take each
/// format's capabilities from the registry itself, so a wrongly set one would pass them.
@Suite struct StateFormatTests {
    @Test func theRegistryHoldsTheThreeFormatsWithTheirCapabilities() {
        struct Row: Equatable {
            var name: String, title: String, extensions: [String], isFolder: Bool
            var checkpoints: Bool, live: Bool, blockCache: Bool, splits: Bool, seed: Bool
        }
        let rows = StateFormat.all.map {
            Row(
                name: $0.name, title: $0.title, extensions: $0.extensions, isFolder: $0.isFolder, checkpoints: $0.checkpoints,
                live: $0.isLiveReadable, blockCache: $0.hasBlockCache, splits: $0.split != nil && $0.merge != nil,
                seed: $0.rulesSeed != nil)
        }
        #expect(
            rows == [
                Row(
                    name: "json", title: "JSON", extensions: [".json"], isFolder: false, checkpoints: false, live: false,
                    blockCache: false, splits: true, seed: false),
                Row(
                    name: "sqlite", title: "SQLite", extensions: [".sqlite", ".db"], isFolder: false, checkpoints: true, live: true,
                    blockCache: false, splits: true, seed: false),
                Row(
                    name: "rocksdb", title: "RocksDB", extensions: [".rocksdb"], isFolder: true, checkpoints: true, live: true,
                    blockCache: true, splits: true, seed: true),
            ])
    }

    @Test(arguments: [
        ("s.json", "json"), ("s.sqlite", "sqlite"), ("s.db", "sqlite"), ("s.rocksdb", "rocksdb"), ("dir/s.rocksdb", "rocksdb"),
        ("s", "json"), ("s.txt", "json"), ("s.sqlite.json", "json"),
    ])
    func aPathsFormatIsItsExtensionsAndJSONOtherwise(path: String, name: String) {
        #expect(StateFormat.of(path).name == name)
    }

    @Test func theListsInHelpAndMessagesReadAsBefore() {
        #expect(StateFormat.titles() == "JSON, SQLite or RocksDB")
        #expect(StateFormat.checkpointing.map(\.name) == ["sqlite", "rocksdb"])
        #expect(StateFormat.liveReadable.map(\.name) == ["sqlite", "rocksdb"])
        #expect(StateFormat.withBlockCache.map(\.name) == ["rocksdb"])
    }
}
