/// Where a state's accounts go when a run is partitioned by account (Apache Spark,
/// `Integrations/spark`), and the record each part of a split state keeps of it.
///
/// An account goes to part `crc32(UTF-8 bytes of its id) % parts`: the CRC-32 of zlib (IEEE
/// 802.3, reflected, `0xEDB88320`), which is what the Spark job computes for a line's key
/// (its `account`, else its `device`; an account-less device's state is kept under its
/// device id, so both agree). ``hashName`` names that function in every part.
///
/// A JSON part records it as the top-level member
/// `"partition": {"parts": P, "index": I, "hash": "crc32"}` (between `rules` and
/// `accounts`); an SQLite part as the meta rows `partition.parts`, `partition.index` and
/// `partition.hash`. A filter that loads a part saves it with its record unchanged.
public struct StatePartition: Sendable, Hashable, CustomStringConvertible {
    /// The name of the hash every part records: CRC-32 of the id's UTF-8 bytes, modulo P.
    public static let hashName = "crc32"
    /// The number of parts the state was split into (P, 1 or more).
    public let parts: Int
    /// This part's index, `0..<parts`.
    public let index: Int

    /// A part's record; nil when `parts` is below 1 or `index` is outside `0..<parts`.
    public init?(parts: Int, index: Int) {
        guard parts >= 1, index >= 0, index < parts else { return nil }
        self.parts = parts
        self.index = index
    }

    /// `part I of P (crc32)`.
    public var description: String { "part \(index) of \(parts) (\(Self.hashName))" }

    /// The part that account `id` belongs to among `parts` parts.
    public static func index(of id: String, parts: Int) -> Int {
        Int(crc32(id.utf8) % UInt32(max(parts, 1)))
    }

    /// Whether account `id` belongs in this part.
    public func holds(_ id: String) -> Bool { Self.index(of: id, parts: parts) == index }

    /// A part's file name in a split state's folder: `part-00003.json` (`ext`: `json` or
    /// `sqlite`), as Spark names its partitions' files.
    public static func fileName(index: Int, ext: String) -> String {
        let digits = String(index)
        return "part-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + "." + ext
    }

    /// The JSON member's value: `{"parts": P, "index": I, "hash": "crc32"}`.
    public var jsonValue: JSONValue {
        .object([("parts", .int(Int64(parts))), ("index", .int(Int64(index))), ("hash", .string(Self.hashName))])
    }

    /// The record in `value` (a JSON part's `partition` member).
    ///
    /// - Throws: `StateFile.Failure` at `/partition` when it is not such an object, or names
    ///   another hash.
    public init(json value: JSONValue, file: String) throws(StateFile.Failure) {
        guard case .int(let p)? = value["parts"], case .int(let i)? = value["index"], let made = Self(parts: Int(p), index: Int(i))
        else {
            throw StateFile.Failure(
                file: file, at: "/partition",
                message: "partition must be {\"parts\": P, \"index\": I, \"hash\": \"crc32\"} with 0 <= I < P, got \(value.serialized())")
        }
        guard value["hash"] == .string(Self.hashName) else {
            throw StateFile.Failure(
                file: file, at: "/partition/hash",
                message: "the state was split with hash \(value["hash"]?.serialized() ?? "none"); this BadgeFlow knows \"\(Self.hashName)\""
            )
        }
        self = made
    }

    /// The meta rows of an SQLite part.
    public var metaRows: [(String, String)] {
        [("partition.parts", String(parts)), ("partition.index", String(index)), ("partition.hash", Self.hashName)]
    }

    /// The record in an SQLite state's meta table; nil when it has none.
    ///
    /// - Throws: `StateFile.Failure` when the rows are there but malformed.
    public init?(meta: [String: String], file: String) throws(StateFile.Failure) {
        guard meta["partition.parts"] != nil || meta["partition.index"] != nil || meta["partition.hash"] != nil else { return nil }
        guard let p = meta["partition.parts"].flatMap({ Int($0) }), let i = meta["partition.index"].flatMap({ Int($0) }),
            let made = Self(parts: p, index: i)
        else {
            throw StateFile.Failure(
                file: file, at: "meta.partition",
                message:
                    "partition rows must be partition.parts P and partition.index I with 0 <= I < P, got \(meta["partition.parts"] ?? "none") and \(meta["partition.index"] ?? "none")"
            )
        }
        guard meta["partition.hash"] == Self.hashName else {
            throw StateFile.Failure(
                file: file, at: "meta.partition.hash",
                message: "the state was split with hash \(meta["partition.hash"] ?? "none"); this BadgeFlow knows \"\(Self.hashName)\"")
        }
        self = made
    }

    /// zlib's CRC-32 of `bytes`.
    public static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }
}
