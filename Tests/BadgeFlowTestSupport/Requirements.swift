import Foundation
import Testing

extension Tag {
    /// Tests that need to run as root (to mount, to `chattr +i`).
    @Tag public static var requiresRoot: Self
    /// Tests that mount a tmpfs of their own (root and mount(8)).
    @Tag public static var requiresTmpfs: Self
}

/// What an end-to-end test needs of the machine beyond the package: CI (and `make deps` as
/// root) provides all of it. Where a need is absent the test is not run and Swift Testing
/// reports it as skipped, by name, with ``reason`` as its comment; under CI (the `CI`
/// environment variable set) it always runs, so a missing need fails there instead of
/// passing unseen.
public enum Need: Sendable {
    /// Running as root.
    case root
    /// A tmpfs can be mounted (root, mount(8), and a kernel that lets this process mount):
    /// found by mounting a small one once and unmounting it.
    case tmpfs

    /// Whether the machine has it (or the run is CI's, which must).
    public var isMet: Bool {
        if let ci = ProcessInfo.processInfo.environment["CI"], !ci.isEmpty, ci != "false" { return true }
        switch self {
        case .root: return getuid() == 0
        case .tmpfs: return Self.canMountTmpfs
        }
    }

    /// Why a test that needs it was not run.
    public var reason: String {
        switch self {
        case .root: "not run: needs root (CI runs as root; so does `sudo swift test`)"
        case .tmpfs: "not run: needs to mount a tmpfs (root and /usr/bin/mount, as in CI)"
        }
    }

    private static let canMountTmpfs: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/mount"),
            let folder = try? TemporaryFolder.make()
        else { return false }
        defer { TemporaryFolder.remove(folder) }
        guard (try? ChildProcess.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", folder]))?.status == 0
        else { return false }
        if (try? ChildProcess.run("/usr/bin/umount", [folder]))?.status != 0 {
            _ = try? ChildProcess.run("/usr/bin/umount", ["-l", folder])
        }
        return true
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs the test (or suite) only where `need` is met (see ``Need``); elsewhere it is
    /// reported as skipped with the need as its comment. Pair it with the need's tag:
    /// `@Suite(.tags(.requiresTmpfs), .requires(.tmpfs))`.
    public static func requires(_ need: Need) -> Self {
        .enabled(if: need.isMet, Comment(rawValue: need.reason))
    }
}
