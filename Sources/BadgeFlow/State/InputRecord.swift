/// SHA-256 (FIPS 180-4), for ``InputDigest``: a few MiB a run, never per line.
package struct SHA256 {
    var h: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    var pending: [UInt8] = []
    var length: UInt64 = 0
    var w = [UInt32](repeating: 0, count: 64)

    static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// A new hash.
    package init() {}
}

/// What identifies an input's content whatever its name or path: `SIZE:FIRST:LAST`, its
/// size in bytes and the SHA-256 of its first and of its last MiB (the whole file twice
/// when it is smaller). Reading 2 MiB a file costs a run next to nothing, and two different
/// days of events do not share their size, head and tail. The Spark job computes the same.
package enum InputDigest {
    /// The bytes hashed at each end.
    package static let endBytes = 1 << 20

    /// The digest of the regular file at `path`; nil when it is not one or cannot be read
    /// (its own error comes when it is read).
    package static func of(path: String) -> String? {
        let fd = System.openForReading(path)
        guard fd >= 0 else { return nil }
        defer { System.closeDescriptor(fd) }
        return of(fd: fd)
    }

    /// Whether `fd` is open on a regular file at its start (stdin redirected from a file:
    /// `< day.ndjson`), which ``of(fd:)`` digests before it is read; anything else (a pipe)
    /// is digested as it is read (``StreamedInputDigest``).
    package static func isRegularFileAtStart(_ fd: Int32) -> Bool { regularFileSize(fd) != nil }

    /// The size of the regular file open on `fd` at its start; nil for anything else.
    private static func regularFileSize(_ fd: Int32) -> Int? {
        guard let st = System.status(of: fd), st.isRegular, System.currentOffset(fd) == 0 else { return nil }
        return Int(st.size)
    }

    /// The digest of the regular file open on `fd` at its start, read with `pread` (the
    /// descriptor's offset does not move); nil when `fd` is anything else.
    package static func of(fd: Int32) -> String? {
        guard let size = regularFileSize(fd) else { return nil }
        guard let head = read(fd, at: 0, count: min(size, endBytes)) else { return nil }
        // Up to 1 MiB, the last MiB is the first: hashed once.
        guard size > endBytes else { return digest(size: size, head: head, tail: nil) }
        guard let tail = read(fd, at: size - endBytes, count: endBytes) else { return nil }
        return digest(size: size, head: head, tail: tail)
    }

    /// Whether `text` has the form of a digest (`SIZE:HEX64:HEX64`).
    package static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, Int(parts[0]) != nil else { return false }
        return parts[1...].allSatisfy {
            $0.utf8.count == 64 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
    }
}

/// ``InputDigest`` of an input read once from start to end, as it is read (a pipe on stdin,
/// which cannot be read twice): its first MiB is kept, its last MiB in a ring, and both are
/// hashed when ``finish()`` is called. For the same bytes it gives what ``InputDigest/of(path:)``
/// gives for a file. Costs one copy of each byte read (`memcpy`, a few hundredths of an
/// instruction a byte) and, at the end, the two hashes: nothing per line.
package final class StreamedInputDigest {
    var head: [UInt8] = []
    var ring: [UInt8]
    /// Where the next byte goes in ``ring``: once it is full, the oldest byte's index.
    var ringEnd = 0
    /// The bytes seen so far.
    package internal(set) var size = 0
    /// Set by the reader when the input was read to its end (only then is it recorded).
    package var complete = false

    /// A digest of no bytes yet.
    package init() {
        ring = [UInt8](repeating: 0, count: InputDigest.endBytes)
    }

    /// The digest of the bytes added (``InputDigest``'s text).
    package func finish() -> String {
        guard size > InputDigest.endBytes else { return InputDigest.digest(size: size, head: head, tail: nil) }
        let tail = Array(ring[ringEnd...] + ring[..<ringEnd])
        return InputDigest.digest(size: size, head: head, tail: tail)
    }
}

/// An input a state recorded as applied (``StateRecords``).
package struct AppliedInput: Sendable, Equatable {
    /// ``InputDigest``'s text (or what the Spark job passed with `--input-digest`).
    package var digest: String
    /// The name it was read under (the path as given, or `stdin`).
    package var name: String
    /// The seqs of its first and last results.
    package var firstSeq: Int, lastSeq: Int
    /// When it was applied (UTC, `2026-12-07T03:42:29Z`).
    package var at: String

    /// Creates a record.
    package init(digest: String, name: String, firstSeq: Int, lastSeq: Int, at: String) {
        self.digest = digest
        self.name = name
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.at = at
    }

    /// What a refusal says about it: `applied 2026-12-07T03:42:29Z as day1.ndjson (seq 1-40)`.
    package var applied: String { "applied \(at) as \(name) (seq \(firstSeq)-\(lastSeq))" }

    var jsonValue: JSONValue {
        .object([
            ("digest", .string(digest)), ("name", .string(name)), ("first_seq", .int(Int64(firstSeq))),
            ("last_seq", .int(Int64(lastSeq))), ("at", .string(at)),
        ])
    }

    init?(json: JSONValue) {
        guard case .string(let digest)? = json["digest"], case .string(let name)? = json["name"],
            case .int(let first)? = json["first_seq"], case .int(let last)? = json["last_seq"], case .string(let at)? = json["at"]
        else { return nil }
        self.init(digest: digest, name: name, firstSeq: Int(first), lastSeq: Int(last), at: at)
    }

    /// Now, as ``at`` writes it.
    package static func now() -> String {
        let parts = System.utcNow()
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(parts.year)-\(two(parts.month))-\(two(parts.day))T\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))Z"
    }
}

/// What a state records so that nothing is applied twice and a queue's offset holds: the
/// inputs it applied (the last ``limit``) and whether its committed seq is a queue offset
/// (written by a `--numbered` run). JSON: the top-level `inputs` and `offset`; a database
/// format: the meta entries `inputs` (that array's JSON) and `offset`.
package struct StateRecords: Sendable, Equatable {
    /// The inputs kept.
    package static let limit = 64
    /// The inputs applied, oldest first.
    package var inputs: [AppliedInput] = []
    /// The committed seq is a queue offset (`--numbered`).
    package var numbered = false

    /// No record.
    package init() {}

    /// Adds `input`, keeping the last ``limit``.
    package mutating func add(_ input: AppliedInput) {
        inputs.removeAll { $0.digest == input.digest }
        inputs.append(input)
        if inputs.count > Self.limit { inputs.removeFirst(inputs.count - Self.limit) }
    }

    /// The record of `digest`, if any.
    package func applied(_ digest: String) -> AppliedInput? { inputs.last { $0.digest == digest } }

    /// The `inputs` array.
    package var inputsJSON: JSONValue { .array(inputs.map(\.jsonValue)) }

    /// Reads the `inputs` array and the `offset` value of a JSON state or a database's meta.
    package init(inputs: JSONValue?, offset: String?) {
        if case .array(let items)? = inputs { self.inputs = items.compactMap(AppliedInput.init(json:)) }
        numbered = offset == "numbered"
    }

    /// The records of the parts of one split, joined (`state merge`): every input any part
    /// recorded (each digest once, in the order they were applied), a queue offset when any
    /// part's seq is one.
    package init(merging parts: [StateRecords]) {
        var all: [AppliedInput] = []
        for part in parts {
            for input in part.inputs where !all.contains(where: { $0.digest == input.digest }) { all.append(input) }
        }
        inputs = Array(all.sorted { $0.at < $1.at }.suffix(Self.limit))
        numbered = parts.contains { $0.numbered }
    }

    /// Reads a database's meta entries.
    package init(meta: [String: String]) {
        self.init(inputs: meta["inputs"].flatMap { try? JSONValue.parse($0) }, offset: meta["offset"])
    }

    /// The meta entries of a database state: none for a state with no record (records only
    /// grow: an input is never forgotten but past ``limit``, an offset stays one).
    package var meta: [String: String] {
        var entries: [String: String] = [:]
        if !inputs.isEmpty { entries["inputs"] = inputsJSON.serialized(pretty: false) }
        if numbered { entries["offset"] = "numbered" }
        return entries
    }
}
