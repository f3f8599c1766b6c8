@testable import BadgeFlow

/// The state formats a test runs over, from the registry (``StateFormat/all``): a new
/// format is tested wherever every format is, without a list to extend here.
enum Formats {
    /// Every format's usual extension, without its dot.
    static var all: [String] { StateFormat.all.map(\.ext) }
    /// The extensions of the formats with checkpoints.
    static var checkpointing: [String] { StateFormat.checkpointing.map(\.ext) }
    /// `stem.EXT` for every format.
    static func files(_ stem: String) -> [String] { all.map { stem + "." + $0 } }
    /// `stem.EXT` for every format that can be read live.
    static func liveFiles(_ stem: String) -> [String] { StateFormat.liveReadable.map { stem + "." + $0.ext } }
    /// Every ordered pair of two formats with checkpoints.
    static var checkpointingPairs: [(String, String)] {
        checkpointing.flatMap { a in checkpointing.filter { $0 != a }.map { (a, $0) } }
    }
}
