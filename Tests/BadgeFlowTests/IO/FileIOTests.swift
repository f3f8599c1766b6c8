import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import BadgeFlow

@Suite struct FileIOTests {
    /// Every name of one file resolves to one path: the writers' lock is taken there.
    @Test func theNamesOfOneStateResolveToOnePath() throws {
        let folder = try TemporaryFolder()
        #expect(mkdir(folder.file("real"), 0o755) == 0)
        let state = try folder.write("real/s.json", Array("{}".utf8))
        let real = FileIO.resolved(state)
        #expect(real.hasSuffix("/real/s.json"))
        #expect(symlink("real/s.json", folder.file("link.json")) == 0)
        #expect(symlink("link.json", folder.file("chain.json")) == 0)
        #expect(symlink(folder.file("real"), folder.file("dir")) == 0)
        for name in ["link.json", "chain.json", "dir/s.json", "real/./s.json", "real/../real/s.json"] {
            #expect(FileIO.resolved(folder.file(name)) == real, "\(name)")
        }
        // A file not there yet: its folder resolved, and a link to it followed.
        let missing = FileIO.resolved(folder.file("real/new.sqlite"))
        #expect(missing == String(real.dropLast("s.json".count)) + "new.sqlite")
        #expect(FileIO.resolved(folder.file("dir/new.sqlite")) == missing)
        #expect(symlink("real/new.sqlite", folder.file("pending.sqlite")) == 0)
        #expect(FileIO.resolved(folder.file("pending.sqlite")) == missing)
        // A link to itself ends without an answer of its own: the path as given.
        #expect(symlink("loop", folder.file("loop")) == 0)
        #expect(FileIO.resolved(folder.file("loop")).hasSuffix("/loop"))
        // A folder that does not exist: the name as given.
        #expect(FileIO.resolved("/nonexistent-badgeflow/x.json") == "/nonexistent-badgeflow/x.json")
    }
}
