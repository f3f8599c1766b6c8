// BatchRunner's hand-off of raw memory: a whole `.json` file fed to the session from a
// borrowed buffer of its bytes. Relies on the session copying what it keeps (the line is
// parsed and answered within the call).

import BadgeFlow

extension BatchRunner {
    /// Feeds all of `bytes` to `session` as one line.
    static func feed(bytes: [UInt8], into session: inout FilterSession) {
        bytes.withUnsafeBytes { session.feed($0) }
    }
}
