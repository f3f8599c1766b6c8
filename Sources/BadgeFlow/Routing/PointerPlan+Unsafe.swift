// PointerPlan is itself a raw-memory type: its steps and NUL-terminated key bytes sit in
// memory it allocates in init and frees in deinit, read through pointers while routing.
// Relies on the plan outliving every use of its steps (a rule set holds it), and on each
// step's key pointing inside keyBytes.

/// How routing reads the values at a rule set's pointers: each pointer one step from the
/// value of its parent pointer, so a prefix that several pointers share (`/aps` of
/// `/aps/thread-id` and `/aps/category`) is looked up once per payload.
///
/// The slots of the rule set's pointer table keep their numbers; every prefix that is not
/// in the table gets a slot after them. Steps and key bytes sit in memory the plan owns, so
/// routing reads them without retaining anything.
///
/// Unchecked Sendable: the steps and key bytes are written in `init` and only read after it
/// (every filter worker routes with its own copy of the rules anyway); `deinit` frees them.
final class PointerPlan: @unchecked Sendable {
    /// One step: the member (or array element) of the parent slot's value.
    struct Step {
        /// The slot whose value this step starts from; -1 for the payload itself.
        let parent: Int
        /// The member name, NUL-terminated; nil for the whole-document pointer `""`.
        let key: UnsafePointer<CChar>?
        /// json-c's hash of `key`.
        let hash: UInt
        /// The array index the token denotes, or -1.
        let index: Int
    }

    /// The steps, by slot: the table's pointers first, then the prefixes added for them.
    let steps: UnsafeBufferPointer<Step>
    /// The slot of `/aps`, whose value the payload checker has already looked up; -1 when no
    /// rule reads under it.
    let apsSlot: Int
    private let keyBytes: UnsafeMutableBufferPointer<CChar>
    private let stepStorage: UnsafeMutableBufferPointer<Step>

    init(_ pointers: [JSONPointer]) {
        // Slots by token path; the table's pointers keep their numbers.
        var slotOf: [[String]: Int] = [:]
        var paths: [[String]] = []
        var tokens: [JSONPointer.Token] = []  // the last token of each slot's path
        for p in pointers {
            let path = p.tokens.map(\.key)
            if slotOf[path] == nil { slotOf[path] = paths.count }
            paths.append(path)
            tokens.append(p.tokens.last ?? JSONPointer.Token(key: "", index: nil))
        }
        // Every proper prefix of a pointer gets a slot too (appended, so the loop sees them).
        var parents: [Int] = []
        var i = 0
        while i < paths.count {
            let path = paths[i]
            if path.count <= 1 {
                parents.append(-1)
            } else {
                let prefix = Array(path.dropLast())
                if let s = slotOf[prefix] {
                    parents.append(s)
                } else {
                    let s = paths.count
                    slotOf[prefix] = s
                    paths.append(prefix)
                    let prefixPointer = JSONPointer(prefix.map { "/" + JSONPointer.escape($0) }.joined())
                    tokens.append(prefixPointer?.tokens.last ?? JSONPointer.Token(key: prefix.last ?? "", index: nil))
                    parents.append(s)
                }
            }
            i += 1
        }
        // Key bytes back to back, each NUL-terminated.
        var bytes: [CChar] = []
        var offsets: [Int] = []
        for t in tokens {
            offsets.append(bytes.count)
            bytes += t.hashed.cString
        }
        keyBytes = .allocate(capacity: max(bytes.count, 1))
        _ = keyBytes.initialize(from: bytes)
        stepStorage = .allocate(capacity: max(paths.count, 1))
        for s in paths.indices {
            let key = paths[s].isEmpty ? nil : UnsafePointer(keyBytes.baseAddress.map { $0 + offsets[s] })
            stepStorage.initializeElement(
                at: s, to: Step(parent: parents[s], key: key, hash: tokens[s].hashed.hash, index: tokens[s].index ?? -1))
        }
        steps = UnsafeBufferPointer(rebasing: stepStorage[0..<paths.count])
        apsSlot = slotOf[["aps"]] ?? -1
    }

    deinit {
        keyBytes.deallocate()
        stepStorage.deallocate()
    }
}
