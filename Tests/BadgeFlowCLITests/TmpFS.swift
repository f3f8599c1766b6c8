import BadgeFlowTestSupport
import Foundation

/// A small tmpfs mounted on a fresh folder, for full-disk and read-only tests (which need
/// root, as on this machine and in CI). The tests that use it are tagged `.requiresTmpfs` and
/// run only where a tmpfs can be mounted (`.requires(.tmpfs)`: elsewhere they are reported
/// as not run, by name); a mount that fails where one can is an error, never a skip.
final class TmpFS {
    /// Why a tmpfs could not be set up or changed.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The mount point.
    let path: String
    private var mounted = false

    /// Mounts a tmpfs of `size` (as mount(8) takes it: `4m`, `512k`) on `folder/name`.
    init(in folder: String, name: String = "disk", size: String) throws {
        path = folder + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let run = Self.command("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard run.status == 0 else {
            throw Failure(
                description:
                    "cannot mount a tmpfs of \(size) on \(path) (mount exit \(run.status): \(run.output)); these tests need root and mount(8)"
            )
        }
        mounted = true
    }

    /// The folder made by ``scratch(size:)`` that holds the mount point (nil otherwise).
    private var scratchFolder: String?

    /// The folder the mount point is in.
    var folder: String { (path as NSString).deletingLastPathComponent }

    /// A tmpfs of `size` on `disk` in a fresh temporary folder (``folder``), for files beside
    /// the mount too; ``release()`` unmounts it and removes the folder.
    static func scratch(size: String) throws -> TmpFS {
        let folder = try TemporaryFolder.make()
        do {
            let disk = try TmpFS(in: folder, size: size)
            disk.scratchFolder = folder
            return disk
        } catch {
            TemporaryFolder.remove(folder)
            throw error
        }
    }

    /// Unmounts, and removes the folder of a tmpfs from ``scratch(size:)``.
    func release() {
        unmount()
        if let scratchFolder { TemporaryFolder.remove(scratchFolder) }
        scratchFolder = nil
    }

    /// Runs `executable ARGS`; its status and stdout and stderr together.
    @discardableResult
    static func command(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `mount -o remount,OPTIONS` (e.g. `ro`, `rw,size=64m`).
    func remount(_ options: String) throws {
        let run = Self.command("/usr/bin/mount", ["-o", "remount," + options, path])
        guard run.status == 0 else {
            throw Failure(description: "cannot remount \(path) with \(options) (mount exit \(run.status): \(run.output))")
        }
    }

    /// Fills the tmpfs with `filler` (zeros, written until the disk is full); returns its size.
    @discardableResult
    func fill(_ name: String = "filler") throws -> Int {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(description: "\(file): cannot create: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == ENOSPC { break }
            if n <= 0 { throw Failure(description: "\(file): cannot write: \(String(cString: strerror(errno)))") }
            total += n
        }
        // A second try, a byte: the disk must now take nothing more.
        let probe = write(fd, chunk, 1)
        guard probe < 0 && errno == ENOSPC else { throw Failure(description: "\(path) is not full after writing \(total) bytes") }
        return total
    }

    /// Sets (`true`) or clears the immutable attribute of `folder` (`chattr +i`): an
    /// immutable folder takes no new entry and loses none, even from root, while files
    /// already in it can still be written.
    static func setImmutable(_ folder: String, _ on: Bool) throws {
        let run = command("/usr/bin/chattr", [on ? "+i" : "-i", folder])
        guard run.status == 0 else {
            throw Failure(description: "cannot chattr \(on ? "+i" : "-i") \(folder) (exit \(run.status): \(run.output))")
        }
    }

    /// The names in the mount point, sorted.
    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

    /// Unmounts (lazily when busy, so a failed test leaves no mount behind).
    func unmount() {
        guard mounted else { return }
        mounted = false
        if Self.command("/usr/bin/umount", [path]).status != 0 { Self.command("/usr/bin/umount", ["-l", path]) }
    }

    deinit { unmount() }
}
