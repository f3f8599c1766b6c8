import Testing
@testable import BadgeTree

@Suite struct PathIndexTests {
    /// Paths of every length from 1 to 40 bytes (the hash's tail has its own cases below
    /// and above eight bytes), non-ASCII ones too.
    private static let paths: [String] = (0..<3_000).map { n in
        let name = String(repeating: "ab", count: n % 20) + "\(n)"
        return n % 7 == 0 ? "root.é\(name)" : (n % 2 == 0 ? "root.\(name)" : name)
    }

    @Test func findsEveryInsertedPathAndNoOther() {
        var index = PathIndex()
        #expect(index.isEmpty)
        #expect(index.find("root") { _ in true } == nil)
        let paths = Self.paths
        for (i, p) in paths.enumerated() { index.insert(p, Int32(i)) }
        for (i, p) in paths.enumerated() {
            #expect(index.find(p) { paths[Int($0)] == p } == Int32(i), "\(p)")
        }
        for absent in ["", "root.x", "root.ab0x", "zz", "root.é"] {
            #expect(index.find(absent) { paths[Int($0)] == absent } == nil, "\(absent)")
        }
    }

    @Test func equalTextHashesAlikeWhateverItsStorage() {
        // A small (inline) string, a native one and a bridged slice of the same text.
        let long = "root.chat.a-thread-name-longer-than-fifteen-bytes"
        let sliced = String(("xx" + long).dropFirst(2))
        #expect(PathIndex.hash(long) == PathIndex.hash(sliced))
        #expect(PathIndex.hash("root.chat") == PathIndex.hash(String("root.chat.x".dropLast(2))))
    }

    @Test func aTreeWithManyNodesFindsThemAfterTheIndexIsBuilt() throws {
        // Past `smallTree` nodes the tree switches from scanning to the index: every node
        // made before and after the switch is found again, counts intact.
        var tree = BadgeTree()
        for n in 0..<500 { try tree.increment("root.chat.t\(n)", by: n % 5 + 1) }
        for n in 0..<500 {
            #expect(tree.state(of: "root.chat.t\(n)").count == n % 5 + 1)
        }
        #expect(tree.state(of: "root.chat.t500").count == 0)
        #expect(tree.total == (0..<500).reduce(0) { $0 + $1 % 5 + 1 })
    }
}
