/// Primitives of the compact binary forms (a tree's here, an account's in the stream):
/// LEB128 varints, zigzag for signed values, strings as their UTF-8 length and bytes, times
/// as a varint of twice their value when they are a whole number of seconds within ±2^52
/// (and not -0), else the varint 1 and their 8 bytes (so -0, infinities and NaN keep every
/// bit). They carry no version of their own: BadgeFlow keeps them in memory and caches
/// them in SQLite rows behind a format byte it changes with them.
package enum CompactCoding {
    /// Appends `value` as a LEB128 varint.
    @inlinable package static func varint(_ value: UInt64, _ out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// `n` zigzagged: small negative numbers stay small.
    @inlinable package static func zigzag(_ n: Int) -> UInt64 { UInt64(bitPattern: Int64((n << 1) ^ (n >> 63))) }

    /// Appends `n` zigzagged as a varint.
    @inlinable package static func signed(_ n: Int, _ out: inout [UInt8]) { varint(zigzag(n), &out) }

    /// Appends a string: its UTF-8 length and bytes.
    @inlinable package static func string(_ s: String, _ out: inout [UInt8]) {
        var s = s
        s.withUTF8 { bytes in
            varint(UInt64(bytes.count), &out)
            out.append(contentsOf: bytes)
        }
    }

    /// Appends a time.
    @inlinable package static func time(_ t: Double, _ out: inout [UInt8]) {
        if abs(t) < 0x1p52, t == t.rounded(.towardZero), !(t == 0 && t.sign == .minus) {
            varint(zigzag(Int(t)) << 1, &out)
        } else {
            varint(1, &out)
            var bits = t.bitPattern
            for _ in 0..<8 {
                out.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        }
    }
}

/// Reads what ``CompactCoding`` wrote, front to back; past the end (or on anything that
/// cannot have been written), every read gives 0 or "" and sets ``failed``: a damaged form
/// is refused, never trapped on.
package struct CompactReader {
    /// The bytes read.
    package let bytes: UnsafeRawBufferPointer
    /// Where the next read starts.
    package private(set) var at = 0
    /// Set by a read past the end or of a malformed value.
    package var failed = false

    /// A reader at the start of `bytes`.
    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether every byte was read and none failed.
    package var isDone: Bool { !failed && at == bytes.count }

    /// One byte.
    package mutating func byte() -> UInt8 {
        guard at < bytes.count else {
            failed = true
            return 0
        }
        at += 1
        return bytes[at - 1]
    }

    /// A varint.
    package mutating func varint() -> UInt64 {
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
    package mutating func count() -> Int {
        let n = varint()
        guard n <= UInt64(bytes.count - at) else {
            failed = true
            return 0
        }
        return Int(n)
    }

    /// A varint below `limit` (an index); others fail and give 0.
    package mutating func index(below limit: Int) -> Int {
        let n = varint()
        guard n < UInt64(max(limit, 0)) else {
            failed = true
            return 0
        }
        return Int(n)
    }

    /// A zigzagged varint.
    package mutating func signed() -> Int {
        let v = varint()
        return Int(Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1))
    }

    /// The next `n` bytes.
    package mutating func raw(_ n: Int) -> UnsafeRawBufferPointer {
        guard n >= 0, n <= bytes.count - at else {
            failed = true
            return UnsafeRawBufferPointer(rebasing: bytes[0..<0])
        }
        at += n
        return UnsafeRawBufferPointer(rebasing: bytes[at - n..<at])
    }

    /// A string.
    package mutating func string() -> String { String(decoding: raw(count()), as: UTF8.self) }

    /// A time.
    package mutating func time() -> Double {
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
    /// and expiry), the rule names they refer to and the once tokens. ``init(configuration:compact:)``
    /// makes the same nodes in the same order from it, without hashing or checking a path.
    package func writeCompact(into out: inout [UInt8]) {
        CompactCoding.varint(UInt64(nodes.count), &out)
        CompactCoding.varint(UInt64(origins.count), &out)
        for o in origins { CompactCoding.string(o, &out) }
        for i in nodes.indices {
            if i == 0 {
                CompactCoding.string(nodes[0].path, &out)
            } else {
                let parent = Int(nodes[i].parent)
                CompactCoding.varint(UInt64(parent), &out)
                // The last segment: the path after the parent's and its dot.
                let skip = nodes[parent].path.utf8.count + 1
                var path = nodes[i].path
                path.withUTF8 { bytes in
                    let name = UnsafeBufferPointer(rebasing: bytes[min(skip, bytes.count)...])
                    CompactCoding.varint(UInt64(name.count), &out)
                    out.append(contentsOf: name)
                }
            }
            CompactCoding.signed(nodes[i].own, &out)
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
            out.append(contribution | mode | (origin != 0 ? 16 : 0) | (expires.isFinite ? 32 : 0))
            if case .custom(let name) = nodes[i].mode { CompactCoding.string(name, &out) }
            if origin != 0 {
                CompactCoding.varint(UInt64(origin), &out)
                CompactCoding.signed(nodes[i].seq, &out)
                CompactCoding.time(nodes[i].at, &out)
            }
            if expires.isFinite { CompactCoding.time(expires, &out) }
        }
        CompactCoding.varint(UInt64(tokens.count), &out)
        for (node, t) in tokens {
            CompactCoding.varint(UInt64(node), &out)
            if let held = t.held {
                CompactCoding.varint(1, &out)
                CompactCoding.string(held, &out)
            } else {
                CompactCoding.varint(0, &out)
            }
            CompactCoding.varint(UInt64(t.dismissed.count), &out)
            for d in t.dismissed { CompactCoding.string(d, &out) }
        }
    }

    /// The tree ``writeCompact(into:)`` wrote, read from `reader`; nil (with the reader
    /// failed) when the bytes are not such a form.
    package init?(configuration: Configuration, compact r: inout CompactReader) {
        self.init(configuration: configuration, noNodes: ())
        let count = r.count()
        nodes.reserveCapacity(count)
        let originCount = r.count()
        origins.reserveCapacity(originCount)
        for _ in 0..<originCount { origins.append(r.string()) }
        guard count >= 1, !r.failed else {
            r.failed = true
            return nil
        }
        for i in 0..<count {
            if i == 0 {
                guard r.string() == configuration.root else {
                    r.failed = true
                    return nil
                }
                nodes.append(Node(path: configuration.root, parent: -1, depth: 1, mode: .number))
            } else {
                let parent = r.index(below: i)
                let name = r.raw(r.count())
                // A segment is never empty and holds no dot; a path keeps BadgePath's limits.
                guard !r.failed, !name.isEmpty, !name.contains(UInt8(ascii: ".")),
                    Int(nodes[parent].depth) < BadgePath.maxSegments,
                    nodes[parent].path.utf8.count + 1 + name.count <= BadgePath.maxBytes
                else {
                    r.failed = true
                    return nil
                }
                var path = nodes[parent].path
                path.append(".")
                path.append(String(decoding: name, as: UTF8.self))
                nodes.append(
                    Node(
                        path: path, parent: Int32(parent), nextSibling: nodes[parent].firstChild,
                        depth: nodes[parent].depth &+ 1, mode: .number))
                nodes[parent].firstChild = Int32(i)
            }
            // -1 (no mark), 0 (a dot) or a count up to maxCount, as the tree keeps them: sums
            // of larger ones could overflow.
            let own = r.signed()
            guard own >= -1, own <= Self.maxCount else {
                r.failed = true
                return nil
            }
            nodes[i].own = own
            let flags = r.byte()
            switch flags & 3 {
            case 0: nodes[i].contribution = .count
            case 1: nodes[i].contribution = .dot
            default: nodes[i].contribution = .none
            }
            switch flags & 12 {
            case 0: nodes[i].mode = .number
            case 4: nodes[i].mode = .dot
            default: nodes[i].mode = .custom(r.string())
            }
            if flags & 16 != 0 {
                let origin = r.index(below: origins.count + 1)
                guard origin > 0 else {
                    r.failed = true
                    return nil
                }
                nodes[i].origin = UInt16(truncatingIfNeeded: origin)
                nodes[i].seq = r.signed()
                nodes[i].at = r.time()
            }
            if flags & 32 != 0 { nodes[i].expires = r.time() }
            guard !r.failed else { return nil }
        }
        for _ in 0..<r.count() {
            let node = r.index(below: count)
            var t = OnceTokens()
            if r.varint() != 0 { t.held = r.string() }
            for _ in 0..<r.count() { t.dismissed.append(r.string()) }
            guard !r.failed else { return nil }
            tokens[Int32(node)] = t
        }
        recomputeAggregates()
        if nodes.count > Self.smallTree {
            for n in nodes.indices { index.insert(nodes[n].path, Int32(n)) }
        }
        if origins.count > 8 {
            for (i, o) in origins.enumerated() { originIndex[o] = UInt16(truncatingIfNeeded: i + 1) }
        }
        for n in nodes.indices where nodes[n].own >= 0 && nodes[n].expires.isFinite {
            siftUp(appending: PendingExpiry(time: nodes[n].expires, node: Int32(n)))
        }
    }
}
