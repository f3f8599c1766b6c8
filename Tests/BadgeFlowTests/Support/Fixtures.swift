import BadgeFlow

/// Paths into the repository's `Fixtures/` folder, found from this file's location.
enum Fixtures {
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        // …/Tests/BadgeFlowTests/Support/Fixtures.swift → …/Fixtures
        parts.removeLast(4)
        return parts.joined(separator: "/") + "/Fixtures"
    }()

    static func path(_ relative: String) -> String { root + "/" + relative }

    static func text(_ relative: String) throws -> String { try FileIO.readString(path(relative)) }

    static func bytes(_ relative: String) throws -> [UInt8] { try FileIO.readBytes(path(relative)) }
}
