/// `badgeflow state convert`: every account of a state written into a new state of another
/// format, with its rules, its resume point (committed seq and input) when both formats
/// keep one (`StateFormat/checkpoints`; a JSON state has none), and, for a part of a
/// split state, its ``StatePartition`` record.
///
/// A state whose format reads it in batches (``StateStore/streamedAccounts(rules:batch:into:)``:
/// JSON, through a mapping) going to a format with checkpoints is streamed: its accounts
/// decoded and written `batch` at a time, each batch one commit of the target, so memory
/// stays at one batch of accounts and a window of the file, whatever the state's size. Every other
/// pair is read whole, its accounts held compactly (~100 bytes an account), and written one
/// account at a time. A JSON file that the streamed read does not take (another layout, or
/// an error, which the whole read then names exactly) goes the whole way too.
package enum StateConversion {
    /// Accounts a streamed conversion decodes and writes at a time (~1.5 KB each while held).
    package static let batch = 20_000

    /// Writes the state `from` into the new state `to` (of another format).
    ///
    /// - Throws: `StateFile.Failure` when `from` cannot be read (missing, corrupt, foreign,
    ///   a mark that does not fit its rules) or `to` cannot be written; `to` is then removed.
    package static func convert(from: String, to: String, batch: Int = batch) throws(StateFile.Failure) {
        let source = try StateFormat.open(path: from, readOnly: true)
        defer { source.close() }
        let rules = try source.recordedRules() ?? RuleSet.builtIn
        var target = try create(to)
        var done = false
        defer {
            target.close()
            if !done { remove(to) }
        }
        if type(of: target).checkpoints {
            var wrote = false
            let streamed = try source.streamedAccounts(rules: rules, batch: batch) { (accounts: BadgeStream) throws(StateFile.Failure) in
                wrote = true
                try target.write(accounts)
            }
            if let rest = streamed {
                try target.write(rest)
                done = true
                return
            }
            // Not streamed after all: a new start, from an empty `to`.
            if wrote {
                target.close()
                remove(to)
                target = try create(to)
            }
        }
        try target.write(try source.stream(rules: rules, accounts: nil, compact: true))
        // A queue consumer that changes format resumes where it was, and a run of the same
        // input is refused as before.
        if let point = source.resumePoint, point.seq > 0, let database = target as? any DatabaseStateStore {
            try database.recordResume(point, rules: rules)
        }
        done = true
    }

    /// Opens the new state `path`; what an open that failed part-way created (a database
    /// file without its schema, a folder) is removed.
    private static func create(_ path: String) throws(StateFile.Failure) -> any StateStore {
        do { return try StateFormat.open(path: path, readOnly: false) } catch {
            remove(path)
            throw error
        }
    }

    /// Removes what a conversion that failed wrote: what the format of `path` keeps there
    /// (`StateFormat/remove`).
    private static func remove(_ path: String) { StateFormat.of(path).remove(path) }
}
