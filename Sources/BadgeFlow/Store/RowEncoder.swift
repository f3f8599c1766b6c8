import Dispatch

/// The rows of consecutive accounts, encoded for writing: each one's JSON and its cache
/// (``RowCache``), back to back.
struct EncodedRows: Sendable {
    private var json = JSONWriter(capacity: 1 << 16)
    private var cache: [UInt8] = []
    /// Where each row's JSON is, and where its cache ends (the next one's starts). Rows'
    /// JSON texts are kept apart by a newline: the writer would put a comma between them.
    private var rows: [(json: Range<Int>, cacheEnd: Int)] = []

    /// The rows of `items`; with `seed` nil, no caches.
    init(_ items: ArraySlice<(id: String, account: Account)>, seed: UInt64?) {
        rows.reserveCapacity(items.count)
        var one: [UInt8] = []
        for (_, a) in items {
            if json.count > 0 { json.newline() }
            let start = json.count
            StateFile.writeAccount(a, compact: true, into: &json)
            if let seed {
                json.withUnsafeBytes { all in
                    RowCache.encode(a, json: UnsafeRawBufferPointer(rebasing: all[start...]), seed: seed, into: &one)
                }
                cache.append(contentsOf: one)
            }
            rows.append((start..<json.count, cache.count))
        }
    }

    /// Calls `body` with row `i`'s JSON and cache (empty without a seed).
    func withRow<R>(_ i: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> R) -> R {
        let cacheStart = i == 0 ? 0 : rows[i - 1].cacheEnd
        return json.withUnsafeBytes { j in
            cache.withUnsafeBytes { c in
                body(
                    UnsafeRawBufferPointer(rebasing: j[rows[i].json]),
                    UnsafeRawBufferPointer(rebasing: c[cacheStart..<rows[i].cacheEnd]))
            }
        }
    }
}

/// Encodes a large commit's rows a chunk ahead of the writer, on a thread of its own, so
/// that encoding (most of a commit's own work) overlaps SQLite writing the chunk before.
///
/// Memory beyond the commit's accounts is two chunks of rows.
final class RowEncoder: @unchecked Sendable {
    /// Accounts per chunk.
    static let chunk = 1024
    private let queue = DispatchQueue(label: "badgeflow.sqlite.encode")

    private final class Box: @unchecked Sendable {
        var rows: EncodedRows?
    }

    /// Calls `body` with each chunk of `items` in order (its range in `items` and its rows),
    /// the next chunk being encoded meanwhile. When `body` throws, the chunk being encoded
    /// is waited for and dropped.
    func forEachChunk<E: Error>(
        _ items: [(id: String, account: Account)], seed: UInt64?,
        _ body: (Range<Int>, EncodedRows) throws(E) -> Void
    ) throws(E) {
        var start = 0
        var current = EncodedRows(items[0..<min(Self.chunk, items.count)], seed: seed)
        while start < items.count {
            let end = min(start + Self.chunk, items.count)
            let box = Box()
            let done = DispatchSemaphore(value: 0)
            if end < items.count {
                let next = items[end..<min(end + Self.chunk, items.count)]
                queue.async {
                    box.rows = EncodedRows(next, seed: seed)
                    done.signal()
                }
            } else {
                done.signal()
            }
            do throws(E) {
                try body(start..<end, current)
            } catch {
                done.wait()
                throw error
            }
            done.wait()
            start = end
            guard let rows = box.rows else { break }
            current = rows
        }
    }
}
