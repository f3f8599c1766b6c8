import BadgeFlowTestSupport
import Testing

@testable import BadgeFlow

/// A decrement lists every mark the event removed and every mark that expired before it:
/// a dot that expired (it lowers nothing by itself) is listed when the event lowered the
/// total.
@Suite struct ExpiredDotDecrementTests {
    @Test func anExpiredDotIsListedWithTheEventsDecrement() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"set","path":"root.news","ttl":5,"at":0}"#)
        session.feed(#"{"op":"set","path":"root.inbox","count":2,"at":0}"#)
        session.feed(#"{"op":"clear","path":"root.inbox","at":10}"#)
        let out = String(decoding: session.output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(out[2].contains(#""expired":["root.news"]"#), "\(out[2])")
        #expect(out[2].contains(#""decrement":{"by":2,"paths":["root.inbox","root.news"]}"#), "\(out[2])")
    }

    /// Random streams of leaf marks (dots and counts, some with a ttl) and clears: whenever a
    /// result has a decrement, its paths are the union of `expired` and the marks the event
    /// itself removed that had reached the root, in byte order.
    @Test(arguments: Array(UInt64(1)...UInt64(40)))
    func decrementPathsAreTheExpiredAndTheClearedMarks(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        let leaves = ["root.a", "root.b", "root.c.x", "root.c.y", "root.d"]
        var session = FilterSession(rules: .builtIn)
        var time = 0
        for seq in 1...200 {
            time += Int.random(in: 0...4, using: &g)
            let path = leaves.randomElement(using: &g) ?? "root.a"
            let ttl = Bool.random(using: &g) ? #","ttl":\#(Int.random(in: 0...8, using: &g))"# : ""
            let line: String
            // The mark the event itself removes or lowers, when it lowers the total: the
            // path's own count (unless it expired first, checked below against `expired`).
            var cleared: [String] = []
            let held = try session.stream.account("")?.tree.mark(of: path)
            switch Int.random(in: 0..<6, using: &g) {
            case 0, 1: line = #"{"op":"set","path":"\#(path)"\#(ttl),"at":\#(time)}"#
            case 2, 3:
                let n = Int.random(in: 1...3, using: &g)
                line = #"{"op":"set","path":"\#(path)","count":\#(n)\#(ttl),"at":\#(time)}"#
                if case .count(let m)? = held, m > n { cleared = [path] }
            default:
                line = #"{"op":"clear","path":"\#(path)","at":\#(time)}"#
                if case .count? = held { cleared = [path] }
            }
            let mark = session.output.bytes.count
            session.feed(line)
            let text = String(decoding: session.output.bytes[mark...], as: UTF8.self)
            let result = try JSONValue.parse(text)
            guard case .object(let fields) = result else { Issue.record("not an object: \(text)"); continue }
            func strings(_ v: JSONValue?) -> [String] {
                guard case .array(let items)? = v else { return [] }
                return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            }
            let expired = strings(fields.first { $0.0 == "expired" }?.1)
            guard case .object(let decrement)? = fields.first(where: { $0.0 == "decrement" })?.1 else { continue }
            let paths = strings(decrement.first { $0.0 == "paths" }?.1)
            let own = cleared.filter { !expired.contains($0) }
            let expected = Set(expired + own).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            #expect(paths == expected, "seed \(seed), seq \(seq): \(text)")
        }
    }
}
