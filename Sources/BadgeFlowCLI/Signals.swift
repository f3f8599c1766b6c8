#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BadgeFlow

/// Catches SIGINT, SIGTERM and SIGHUP (a closed terminal) without SA_RESTART, so a blocked read returns and the
/// filter can save its state before exiting (``receivedSignal``, which `FilterRun` reads); the handler also wakes a
/// reader about to wait for input (``SignalWake``). SIGPIPE is ignored: write errors are handled.
enum Signals {
    static func install() {
        SignalWake.open()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { sig in SignalWake.note(sig) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        sigaction(SIGHUP, &action, nil)
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these blocked (the mask is inherited).
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        sigprocmask(SIG_UNBLOCK, &set, nil)
    }

    /// What SIGBUS says. Only a JSON state file is read through a memory mapping, so SIGBUS
    /// means another program truncated it while it was being read (the pages past its new
    /// end are gone); the process stops at once, without writing anything.
    private static let truncatedMapping: StaticString =
        "badgeflow: error: state file: another program truncated it while it was being read (SIGBUS); nothing was written\n"

    /// Turns SIGBUS into exit 3 with a message, instead of a crash. The handler only
    /// writes a constant and exits (both async-signal-safe).
    static func installBusHandler() {
        // Initialized here, not first in the handler.
        _ = truncatedMapping.utf8CodeUnitCount
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            _ = write(2, Signals.truncatedMapping.utf8Start, Signals.truncatedMapping.utf8CodeUnitCount)
            _exit(3)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGBUS, &action, nil)
    }

    /// The exit status a shell reports for death by `sig` (128 + sig).
    static func status(_ sig: Int32) -> Int32 { 128 + sig }
}
