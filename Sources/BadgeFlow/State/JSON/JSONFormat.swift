/// The JSON format's entry in the registry of formats (``StateFormat/all``): one file,
/// loaded whole when a filter starts and saved at the end; the format of any path that no
/// other format claims (``StateFormat/fallback``).
extension StateFormat {
    /// A JSON state file (`FILE.json`).
    package static var json: StateFormat {
        StateFormat(
            name: JSONStateStore.name, title: "JSON", article: "a", extensions: [".json"], isFolder: false,
            store: JSONStateStore.self,
            stateHelp: "FILE.json is loaded at start and saved atomically at the end and on SIGINT/SIGTERM/SIGHUP",
            split: StateSplit.splitJSON, merge: StateSplit.mergeJSON, liveStamp: nil, remove: StateFormat.removeFile)
    }
}
