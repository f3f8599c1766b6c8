import BadgeFlow
import BadgeFlowTestSupport

extension TemporaryFolder {
    /// Writes `bytes` to `name` (as the library writes files) and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try FileIO.writeAtomically(bytes, to: file(name))
        return file(name)
    }
}
