/// Primitives of the compact binary forms (a tree's here, an account's in the stream):
/// LEB128 varints, zigzag for signed values, strings as their UTF-8 length and bytes, times
/// as a varint of twice their value when they are a whole number of seconds within ±2^52
/// (and not -0), else the varint 1 and their 8 bytes (so -0, infinities and NaN keep every
/// bit). They carry no version of their own: BadgeFlow keeps them in memory and caches
/// them in SQLite rows behind a format byte it changes with them.
package enum CompactCoding {
    /// Appends `value` as a LEB128 varint.
    @inlinable package static func varint(_ value: UInt64, _ out: inout [UInt8]) {
        appending(to: &out) { $0.varint(value) }
    }

    /// `n` zigzagged: small negative numbers stay small.
    @inlinable package static func zigzag(_ n: Int) -> UInt64 { UInt64(bitPattern: Int64((n << 1) ^ (n >> 63))) }

    /// Appends `n` zigzagged as a varint.
    @inlinable package static func signed(_ n: Int, _ out: inout [UInt8]) { varint(zigzag(n), &out) }

    /// Appends a string: its UTF-8 length and bytes.
    @inlinable package static func string(_ s: String, _ out: inout [UInt8]) {
        appending(to: &out) { $0.string(s) }
    }

    /// Appends a time.
    @inlinable package static func time(_ t: Double, _ out: inout [UInt8]) {
        appending(to: &out) { $0.time(t) }
    }

    /// Appends to `out` what `write` writes with a ``CompactWriter``, which holds each
    /// form's one implementation.
    @inlinable static func appending(to out: inout [UInt8], _ write: (inout CompactWriter) -> Void) {
        var w = CompactWriter(capacity: 16)
        write(&w)
        w.withWritten { out.append(contentsOf: $0) }
    }
}

/// Writes ``CompactCoding``'s forms straight into a buffer it owns, through a pointer: no
/// uniqueness or capacity check of an array per byte, no copy of a string to reach its bytes.
/// The buffer grows as needed and is freed with the writer; ``written`` are its bytes.
package struct CompactWriter: ~Copyable {
    @usableFromInline var start: UnsafeMutablePointer<UInt8>
    @usableFromInline var at: UnsafeMutablePointer<UInt8>
    @usableFromInline var end: UnsafeMutablePointer<UInt8>

    /// A writer with room for `capacity` bytes before it first grows.
    @inlinable package init(capacity: Int = 256) {
        let n = max(capacity, 16)
        start = .allocate(capacity: n)
        at = start
        end = start + n
    }

    deinit { start.deallocate() }

    /// Calls `body` with the bytes written so far.
    @inlinable package func withWritten<R>(_ body: (UnsafeMutableBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeMutableBufferPointer(start: start, count: at - start))
    }

    /// Makes room for `n` more bytes.
    @inlinable @inline(__always) mutating func room(_ n: Int) {
        if end - at < n { grow(n) }
    }

    @usableFromInline mutating func grow(_ n: Int) {
        let used = at - start, capacity = max(2 * (end - start), used + n)
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        bigger.update(from: start, count: used)
        start.deallocate()
        start = bigger
        at = bigger + used
        end = bigger + capacity
    }

    /// One byte.
    @inlinable package mutating func byte(_ b: UInt8) {
        room(1)
        at.pointee = b
        at += 1
    }

    /// A LEB128 varint.
    @inlinable package mutating func varint(_ value: UInt64) {
        room(10)
        var v = value
        while v >= 0x80 {
            at.pointee = UInt8(truncatingIfNeeded: v) | 0x80
            at += 1
            v >>= 7
        }
        at.pointee = UInt8(truncatingIfNeeded: v)
        at += 1
    }

    /// `n` zigzagged as a varint.
    @inlinable package mutating func signed(_ n: Int) { varint(CompactCoding.zigzag(n)) }

    /// Bytes as a string's are written: their count, then themselves.
    @inlinable package mutating func counted(_ bytes: UnsafeBufferPointer<UInt8>) {
        room(10 + bytes.count)
        varint(UInt64(bytes.count))
        if let base = bytes.baseAddress { at.update(from: base, count: bytes.count) }
        at += bytes.count
    }

    /// A string: its UTF-8 length and bytes.
    @inlinable @inline(__always) package mutating func string(_ s: String) { string(s, from: 0) }

    /// The part of `s` after its first `skip` UTF-8 bytes, as a string.
    @inlinable @inline(__always) package mutating func string(_ s: String, from skip: Int) {
        // A native or small string's bytes are read where they are; others through a copy.
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { b in
            counted(UnsafeBufferPointer(rebasing: b[min(skip, b.count)...]))
        }
        if done == nil {
            var copy = s
            copy.withUTF8 { b in counted(UnsafeBufferPointer(rebasing: b[min(skip, b.count)...])) }
        }
    }

    /// A time (the form ``CompactCoding`` describes).
    @inlinable package mutating func time(_ t: Double) {
        if abs(t) < 0x1p52, t == t.rounded(.towardZero), !(t == 0 && t.sign == .minus) {
            varint(CompactCoding.zigzag(Int(t)) << 1)
        } else {
            room(9)
            at.pointee = 1
            var bits = t.bitPattern
            for i in 1...8 {
                at[i] = UInt8(truncatingIfNeeded: bits)
                bits >>= 8
            }
            at += 9
        }
    }
}

/// Reads what ``CompactCoding`` wrote, front to back; past the end (or on anything that
/// cannot have been written), every read gives 0 or "" and sets ``failed``: a damaged form
/// is refused, never trapped on.
package struct CompactReader {
    /// What a decode that found the bytes malformed throws (the reader is then failed).
    package struct Malformed: Error {
        package init() {}
    }

    /// The bytes read.
    @usableFromInline package let bytes: UnsafeRawBufferPointer
    /// Where the next read starts.
    @usableFromInline package internal(set) var at = 0
    /// Set by a read past the end or of a malformed value.
    @usableFromInline package var failed = false

    /// A reader at the start of `bytes`.
    @inlinable package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether every byte was read and none failed.
    @inlinable package var isDone: Bool { !failed && at == bytes.count }

    /// One byte.
    @inlinable package mutating func byte() -> UInt8 {
        guard at < bytes.count else {
            failed = true
            return 0
        }
        at += 1
        return bytes[at - 1]
    }

    /// A varint.
    @inlinable package mutating func varint() -> UInt64 {
        var value: UInt64 = 0, shift: UInt64 = 0
        while shift < 64 {
            let b = byte()
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
        failed = true
        return 0
    }

    /// A count of things still to read, each at least one byte long (larger counts fail).
    @inlinable package mutating func count() -> Int {
        let n = varint()
        guard n <= UInt64(bytes.count - at) else {
            failed = true
            return 0
        }
        return Int(n)
    }

    /// A varint below `limit` (an index); others fail and give 0.
    @inlinable package mutating func index(below limit: Int) -> Int {
        let n = varint()
        guard n < UInt64(max(limit, 0)) else {
            failed = true
            return 0
        }
        return Int(n)
    }

    /// A zigzagged varint.
    @inlinable package mutating func signed() -> Int {
        let v = varint()
        return Int(Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1))
    }

    /// The next `n` bytes.
    @inlinable package mutating func raw(_ n: Int) -> UnsafeRawBufferPointer {
        guard n >= 0, n <= bytes.count - at else {
            failed = true
            return UnsafeRawBufferPointer(rebasing: bytes[0..<0])
        }
        at += n
        return UnsafeRawBufferPointer(rebasing: bytes[at - n..<at])
    }

    /// A string.
    @inlinable package mutating func string() -> String { String(decoding: raw(count()), as: UTF8.self) }

    /// A time.
    @inlinable package mutating func time() -> Double {
        let v = varint()
        if v & 1 == 0 {
            let n = v >> 1
            return Double(Int64(bitPattern: n >> 1) ^ -Int64(bitPattern: n & 1))
        }
        guard v == 1 else {
            failed = true
            return 0
        }
        var bits: UInt64 = 0
        for (i, x) in raw(8).enumerated() { bits |= UInt64(x) << (8 * UInt64(i)) }
        return Double(bitPattern: bits)
    }
}

extension BadgeTree {
    /// Appends the tree's compact form: its nodes as they are (each as its parent's index and
    /// the last segment of its path, with its own mark, contribution, display mode, provenance
    /// and expiry), the rule names they refer to and the once tokens. ``decodeCompact(configuration:from:)``
    /// makes the same nodes in the same order from it, without hashing or checking a path.
    package func writeCompact(into out: inout [UInt8]) {
        var w = CompactWriter()
        writeCompact(into: &w)
        w.withWritten { out.append(contentsOf: $0) }
    }

    /// Writes the tree's compact form (what `writeCompact(into:)` appends to an array) with `w`.
    ///
    /// - Returns: the number of marks (``markCount``), counted on the way.
    @discardableResult
    package func writeCompact(into w: inout CompactWriter) -> Int {
        withUnsafePointer(to: self) { Self.writeCompact(at: $0, into: &w) }
    }

    /// Writes the compact form of the tree at `tree` with `w`, reading its parts where they
    /// are: a tree passed by value from memory that another call might change (a box's, on a
    /// commit's thread) is copied first, a retain of each of its parts, on tables every
    /// account shares.
    ///
    /// - Returns: the number of marks (``markCount``), counted on the way.
    package static func writeCompact(at tree: UnsafePointer<BadgeTree>, into w: inout CompactWriter) -> Int {
        w.varint(UInt64(tree.pointee.nodes.count))
        w.varint(UInt64(tree.pointee.origins.count))
        tree.pointee.origins.withUnsafeBufferPointer { origins in
            for i in origins.indices { w.string(origins[i]) }
        }
        var marks = 0
        // The nodes read where they are: no copy (and retain) of a node or its path.
        tree.pointee.nodes.withUnsafeBufferPointer { nodes in
            for i in nodes.indices {
                if i == 0 {
                    w.string(nodes[0].path)
                } else {
                    let parent = Int(nodes[i].parent)
                    w.varint(UInt64(parent))
                    // The last segment: the path after the parent's and its dot.
                    w.string(nodes[i].path, from: nodes[parent].path.utf8.count + 1)
                }
                let own = nodes[i].own
                if own >= 0 { marks += 1 }
                w.signed(own)
                let contribution: UInt8
                switch nodes[i].contribution {
                case .count: contribution = 0
                case .dot: contribution = 1
                case .none: contribution = 2
                }
                let mode: UInt8
                switch nodes[i].mode {
                case .number: mode = 0
                case .dot: mode = 4
                case .custom: mode = 8
                }
                let origin = nodes[i].origin, expires = nodes[i].expires
                w.byte(contribution | mode | (origin != 0 ? 16 : 0) | (expires.isFinite ? 32 : 0))
                if case .custom(let name) = nodes[i].mode { w.string(name) }
                if origin != 0 {
                    w.varint(UInt64(origin))
                    w.signed(nodes[i].seq)
                    w.time(nodes[i].at)
                }
                if expires.isFinite { w.time(expires) }
            }
        }
        w.varint(UInt64(tree.pointee.tokens.count))
        for (node, t) in tree.pointee.tokens {
            w.varint(UInt64(node))
            if let held = t.held {
                w.varint(1)
                w.string(held)
            } else {
                w.varint(0)
            }
            w.varint(UInt64(t.dismissed.count))
            for d in t.dismissed { w.string(d) }
        }
        return marks
    }

    /// The tree `writeCompact(into:)` wrote, read from `reader`; throws (with the reader
    /// failed) when the bytes are not such a form.
    ///
    /// A static func that fills a local tree and returns it (a move), not an init: an init,
    /// failable or throwing, built the tree in a temporary and copied it into its result (a
    /// retain and release of each of its parts, ~0.5k instructions a tree under callgrind).
    package static func decodeCompact(configuration: Configuration, from r: inout CompactReader) throws(CompactReader.Malformed)
        -> BadgeTree
    {
        var t = BadgeTree(decoding: configuration)
        let count = r.count()
        t.nodes.reserveCapacity(count)
        let originCount = r.count()
        if originCount > 0 { t.origins.reserveCapacity(originCount) }
        for _ in 0..<originCount { t.origins.append(r.string()) }
        guard count >= 1, !r.failed else {
            r.failed = true
            throw CompactReader.Malformed()
        }
        for i in 0..<count {
            // Each node read whole, then appended once: its path made in one piece.
            let path: String, parent: Int, depth: UInt8
            if i == 0 {
                guard Self.isRoot(r.raw(r.count()), of: configuration), !r.failed else {
                    r.failed = true
                    throw CompactReader.Malformed()
                }
                path = configuration.root
                parent = -1
                depth = 1
            } else {
                parent = r.index(below: i)
                let name = r.raw(r.count())
                // A segment is never empty and holds no dot; a path keeps BadgePath's limits.
                guard !r.failed, !name.isEmpty, !name.contains(UInt8(ascii: ".")),
                    Int(t.nodes[parent].depth) < BadgePath.maxSegments,
                    t.nodes[parent].path.utf8.count + 1 + name.count <= BadgePath.maxBytes
                else {
                    r.failed = true
                    throw CompactReader.Malformed()
                }
                path = Self.path(t.nodes[parent].path, name)
                depth = t.nodes[parent].depth &+ 1
            }
            // -1 (no mark), 0 (a dot) or a count up to maxCount, as the tree keeps them: sums
            // of larger ones could overflow.
            let own = r.signed()
            guard own >= -1, own <= Self.maxCount else {
                r.failed = true
                throw CompactReader.Malformed()
            }
            let flags = r.byte()
            let contribution: Contribution
            switch flags & 3 {
            case 0: contribution = .count
            case 1: contribution = .dot
            default: contribution = .none
            }
            let mode: DisplayMode
            switch flags & 12 {
            case 0: mode = .number
            case 4: mode = .dot
            default: mode = .custom(r.string())
            }
            var origin: UInt16 = 0, seq = 0, at: Double = 0, expires = Double.infinity
            if flags & 16 != 0 {
                let o = r.index(below: t.origins.count + 1)
                guard o > 0 else {
                    r.failed = true
                    throw CompactReader.Malformed()
                }
                origin = UInt16(truncatingIfNeeded: o)
                seq = r.signed()
                at = r.time()
            }
            if flags & 32 != 0 { expires = r.time() }
            guard !r.failed else { throw CompactReader.Malformed() }
            t.nodes.append(
                Node(
                    path: path, parent: Int32(parent), nextSibling: parent >= 0 ? t.nodes[parent].firstChild : -1, own: own,
                    depth: depth, contribution: contribution, origin: origin, seq: seq, at: at, expires: expires, mode: mode))
            if parent >= 0 { t.nodes[parent].firstChild = Int32(i) }
        }
        for _ in 0..<r.count() {
            let node = r.index(below: count)
            var once = OnceTokens()
            if r.varint() != 0 { once.held = r.string() }
            for _ in 0..<r.count() { once.dismissed.append(r.string()) }
            guard !r.failed else { throw CompactReader.Malformed() }
            t.tokens[Int32(node)] = once
        }
        t.recomputeAggregates()
        if t.nodes.count > Self.smallTree {
            for n in t.nodes.indices { t.index.insert(t.nodes[n].path, Int32(n)) }
        }
        if t.origins.count > 8 {
            for (i, o) in t.origins.enumerated() { t.originIndex[o] = UInt16(truncatingIfNeeded: i + 1) }
        }
        for n in t.nodes.indices where t.nodes[n].own >= 0 && t.nodes[n].expires.isFinite {
            t.siftUp(appending: PendingExpiry(time: t.nodes[n].expires, node: Int32(n)))
        }
        // Moved out: a plain `return t` copied the tree and then destroyed the local.
        return consume t
    }

    /// A tree with `configuration` and no nodes, for ``decodeCompact(configuration:from:)``
    /// to fill.
    private init(decoding configuration: Configuration) { self.configuration = configuration }

    /// Whether `bytes` are the UTF-8 of the root `configuration` names (compared as strings
    /// when the bytes differ: a root written in another normalization still matches).
    private static func isRoot(_ bytes: UnsafeRawBufferPointer, of configuration: Configuration) -> Bool {
        let same: Bool? = configuration.root.utf8.withContiguousStorageIfAvailable { root in
            root.count == bytes.count && root.elementsEqual(bytes)
        }
        return same == true || String(decoding: bytes, as: UTF8.self) == configuration.root
    }

    /// `parent`, a dot and `name`, made in one piece (UTF-8 that is not valid repaired, as
    /// `String(decoding:as:)` does).
    private static func path(_ parent: String, _ name: UnsafeRawBufferPointer) -> String {
        let n = parent.utf8.count
        return String(unsafeUninitializedCapacity: n + 1 + name.count) { out in
            guard let o = out.baseAddress else { return 0 }
            let copied: Void? = parent.utf8.withContiguousStorageIfAvailable { p in
                if let b = p.baseAddress { o.update(from: b, count: n) }
            }
            if copied == nil {
                for (i, b) in parent.utf8.enumerated() { o[i] = b }
            }
            o[n] = UInt8(ascii: ".")
            if let b = name.baseAddress { UnsafeMutableRawPointer(o + n + 1).copyMemory(from: b, byteCount: name.count) }
            return n + 1 + name.count
        }
    }
}
