import BadgeFlowTestSupport
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

@Suite struct AtomicWriterTargetTests {
    /// A FIFO is written in place: a rename would put a regular file where it was.
    @Test func aFIFOIsWrittenInPlaceAndStaysAFIFO() throws {
        let folder = try TemporaryFolder()
        let fifo = folder.file("out")
        try #require(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(reader >= 0)
        defer { close(reader) }
        let writer = try FileIO.AtomicWriter(fifo)
        try writer.write(Array("first ".utf8))
        try writer.prepare()
        try writer.write(Array("second".utf8))
        try writer.commit()
        var st = stat()
        #expect(lstat(fifo, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO)
        #expect(FileIO.isWrittenInPlace(fifo))
        var buf = [UInt8](repeating: 0, count: 64)
        let n = read(reader, &buf, buf.count)
        #expect(n > 0 && String(decoding: buf[0..<max(n, 0)], as: UTF8.self) == "first second")
        #expect(try folder.names() == ["out"])
    }

    /// A regular file (and a new one) is still replaced through a temporary file.
    @Test func aRegularFileIsNotWrittenInPlace() throws {
        let folder = try TemporaryFolder()
        #expect(!FileIO.isWrittenInPlace(folder.file("new")))
        let path = try folder.write("old", Array("a".utf8))
        #expect(!FileIO.isWrittenInPlace(path))
        try FileIO.writeAtomically(Array("b".utf8), to: path)
        #expect(try FileIO.readString(path) == "b")
    }

    /// Unsynced (`filter --metrics`), a file is still replaced by a rename: a new inode with
    /// the old mode, and no temporary file left.
    @Test func anUnsyncedWriteStillReplacesTheFileByARename() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("m.prom", Array("old\n".utf8))
        #expect(chmod(path, 0o640) == 0)
        var before = stat()
        #expect(stat(path, &before) == 0)
        // Held open, the old inode cannot be reused for the new file.
        let old = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(old) }
        try FileIO.writeAtomically(Array("new\n".utf8), to: path, synced: false)
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_ino != before.st_ino)
        #expect(after.st_mode & 0o7777 == 0o640)
        #expect(try FileIO.readString(path) == "new\n")
        #expect(try folder.names() == ["m.prom"])
    }
}
