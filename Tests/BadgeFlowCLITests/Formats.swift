import BadgeFlow

/// The state formats a test runs over, from the registry (``StateFormat/all``): a new
/// format is tested wherever every format is, without a list to extend here.
enum Formats {
    /// Every format's usual extension, without its dot.
    static var all: [String] { StateFormat.all.map(\.ext) }
    /// The extensions of the formats with checkpoints.
    static var checkpointing: [String] { StateFormat.checkpointing.map(\.ext) }
    /// The extensions of the formats that can be read live (`serve`).
    static var live: [String] { StateFormat.liveReadable.map(\.ext) }
    /// `stem.EXT` for every format.
    static func files(_ stem: String) -> [String] { all.map { stem + "." + $0 } }
    /// Whether a state at `path` is a folder (its format's).
    static func isFolder(_ path: String) -> Bool { StateFormat.of(path).isFolder }
    /// The name of the format of the state at `path`, as the CLI tells them apart.
    static func name(of path: String) -> String { StateFormat.of(path).name }
}
