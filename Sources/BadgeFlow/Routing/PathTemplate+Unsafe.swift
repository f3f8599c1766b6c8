// PathTemplate's work on raw memory: the compiled program's operations and literal bytes in
// memory it allocates and frees, and the fast render into a stack buffer. Relies on the
// program living as long as its template (it is borrowed unretained for a render), and on
// every write into the buffer being checked against its count first (else the slow path).

extension PathTemplate {
    /// The parts as plain operations over bytes the program owns: a literal's bytes, or a
    /// hole's slot.
    ///
    /// Unchecked Sendable: the operations and bytes are written in `init` and only read after
    /// it; `deinit` frees them.
    final class Program: @unchecked Sendable {
        struct Op {
            /// The hole's slot, or -1 for a literal.
            let slot: Int
            /// The literal's bytes in `bytes`.
            let start: Int
            let count: Int
        }

        let ops: UnsafeBufferPointer<Op>
        let bytes: UnsafeRawBufferPointer
        private let opStorage: UnsafeMutableBufferPointer<Op>
        private let byteStorage: UnsafeMutableRawBufferPointer

        init(_ parts: [Part]) {
            var literal: [UInt8] = []
            opStorage = .allocate(capacity: max(parts.count, 1))
            for (i, part) in parts.enumerated() {
                switch part {
                case .literal(let text):
                    opStorage.initializeElement(at: i, to: Op(slot: -1, start: literal.count, count: text.utf8.count))
                    literal += text.utf8
                case .pointer(_, let slot):
                    opStorage.initializeElement(at: i, to: Op(slot: slot, start: 0, count: 0))
                }
            }
            byteStorage = .allocate(byteCount: max(literal.count, 1), alignment: 1)
            byteStorage.copyBytes(from: literal)
            ops = UnsafeBufferPointer(rebasing: opStorage[0..<parts.count])
            bytes = UnsafeRawBufferPointer(byteStorage)
        }

        deinit {
            opStorage.deallocate()
            byteStorage.deallocate()
        }
    }

    /// Fills the holes from `payload`; `base` is the payload's pointer in the line.
    func render(_ payload: Selected, base: String) -> Rendered {
        if parts.count == 1, case .literal(let s) = parts[0] { return .path(s) }
        // Fast path: the path's bytes are assembled in a stack buffer and become one String.
        // 1024 bytes is the longest path the tree accepts, and the most Swift keeps on the
        // stack; longer renderings take the slow path (and the tree then rejects them).
        let fast: Rendered? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: BadgePath.maxBytes) { buf in
            // The program is borrowed, not retained: `self` keeps it alive for the call.
            Unmanaged.passUnretained(program)._withUnsafeGuaranteedRef { program in
                Self.renderFast(program.ops, literals: program.bytes, payload, into: buf)
            }
        }
        return fast ?? renderSlow(payload, base: base)
    }

    /// Renders into `buf`; nil when anything is unusual (a problem, or no room), so the slow
    /// path can report it.
    private static func renderFast(
        _ ops: UnsafeBufferPointer<Program.Op>, literals: UnsafeRawBufferPointer, _ payload: Selected,
        into buf: UnsafeMutableBufferPointer<UInt8>
    ) -> Rendered? {
        guard let target = buf.baseAddress, let literalBase = literals.baseAddress else { return nil }
        var n = 0
        for i in ops.indices {
            let op = ops[i]
            if op.slot < 0 {
                guard n + op.count <= buf.count else { return nil }
                UnsafeMutableRawPointer(target + n).copyMemory(from: literalBase + op.start, byteCount: op.count)
                n += op.count
            } else {
                let slot = op.slot
                guard let value = payload.value(slot), !value.isNull else { return .missing }
                switch value.kind {
                case .string:
                    let ok = value.withStringBytes { bytes -> Bool in
                        guard !bytes.isEmpty, n + 3 * bytes.count <= buf.count else { return false }
                        n += BadgePath.escapeSegment(bytes, into: target + n)
                        return true
                    }
                    if !ok { return nil }
                case .int where !value.intOverflowed:
                    guard let v = value.int, n + JSONWriter.maxDecimalBytes <= buf.count else { return nil }
                    n += JSONWriter.writeDecimal(v, to: target + n)
                default:
                    return nil
                }
            }
        }
        return .path(UTF8Check.string(UnsafeBufferPointer(rebasing: buf[0..<n])))
    }
}
