// A batch's hot loops: the analysing thread reads each line in place from the batch's own
// bytes (`data`, not changed while it runs), and the applying thread moves each result out
// of `results` through its buffer (each slot is left initialized with `.blank`). The batch
// is owned by one thread at a time (see `Batch`), so no other thread sees these buffers.

extension Batch {
    /// Calls `body` with each result in order, moved out of the batch (a `.blank` is left in
    /// its place), the line's given number (0 when it has none) and, with
    /// ``collectsAccountIDs``, the hash of an event's account id (else nil): applying a
    /// result then copies none of its strings and arrays, nor hashes the id again.
    func takeEachResult(_ body: (consuming LineResult, Int, Int?) -> Void) {
        let numbered = !numbers.isEmpty
        let hashed = !accountHashes.isEmpty
        var k = 0
        results.withUnsafeMutableBufferPointer { results in
            guard let base = results.baseAddress else { return }
            for i in results.indices {
                let result = (base + i).move()
                (base + i).initialize(to: .blank)
                var hash: Int? = nil
                if hashed, case .event = result, k < accountHashes.count {
                    hash = accountHashes[k]
                    k += 1
                }
                body(result, numbered ? max(numbers[i], 0) : 0, hash)
            }
        }
    }

    func analyze(with analyzer: LineAnalyzer, maxLineBytes: Int) {
        results.reserveCapacity(ends.count)
        data.withUnsafeBytes { all in
            var start = 0
            for i in 0..<ends.count {
                let end = ends[i]
                if !numbers.isEmpty, numbers[i] == Self.invalidNumber {
                    results.append(.rejected(LineNumber.invalid))
                } else if overlong[i] >= 0 {
                    results.append(
                        .rejected(
                            .error(
                                .lineTooLong, "line is \(overlong[i]) bytes, more than the \(maxLineBytes) bytes a line may have", at: "")))
                } else {
                    let result = analyzer.analyze(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                    if collectsAccountIDs, case .event(let e) = result {
                        accountIDs.append(e.accountID)
                        accountHashes.append(IDIndex.hash(e.accountID))
                        if e.op == .expire || e.isFleetWide { hasFleetLines = true }
                    }
                    results.append(result)
                }
                start = end
            }
        }
        // The line bytes are no longer needed; the buffer stays for the batch's next use.
        data.removeAll(keepingCapacity: true)
    }
}
