@testable import BadgeFlow

extension SQLiteStore {
    /// One checkpoint on the calling thread and this connection: the accounts of `stream`
    /// changed since its last checkpoint and `seq`, read from `input`, in one transaction
    /// (what a `StoreCheckpointer` does on a thread of its own). On failure the accounts
    /// count as changed again.
    func checkpoint(_ stream: inout BadgeStream, seq: Int, input: String) throws(StateFile.Failure) {
        let changed = stream.takeChanged()
        let stored: [(String, (Int, Int))]
        do throws(StateFile.Failure) {
            stored = try commit(changed, seq: seq, input: input, cacheSeed: stream.rules.rowCacheSeed)
        } catch {
            stream.abortCommit(changed.lazy.map(\.id))
            throw error
        }
        stream.endCommit(stored)
    }
}
