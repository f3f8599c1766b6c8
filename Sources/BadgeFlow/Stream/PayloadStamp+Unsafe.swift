// PayloadStamp's work on raw bytes: the payload cut out of a borrowed buffer of its line,
// and the stamped text written from a buffer of the stored bytes. Relies on the line staying
// valid for the cut, and on `split` lying within `bytes` (cut sets it inside the text).

extension PayloadStamp {
    /// Appends the payload with `aps.badge` set to `badge`.
    func write(_ badge: Int, into w: inout JSONWriter) {
        bytes.withUnsafeBufferPointer { b in
            w.verbatim(UnsafeBufferPointer(rebasing: b[..<split]))
            w.bareInt(badge)
            w.verbatim(UnsafeBufferPointer(rebasing: b[split...]))
        }
    }

    /// The stamp of the payload in `line`, a text json-c accepted: the line itself for a bare
    /// push, the value of its top-level `"payload"` member for an envelope. Nil when the
    /// text cannot be cut (see the type's notes).
    static func cut(_ line: UnsafeRawBufferPointer, envelope: Bool) -> PayloadStamp? {
        let scan = JSONScanner(line)
        var start = scan.skipSpace(0)
        var end = line.count
        if envelope {
            guard let member = uniqueMember(scan, of: start, named: Keys.payload) else { return nil }
            start = member.value
            end = member.end
        } else {
            while end > start, JSONScanner.isSpace(line[end - 1]) { end -= 1 }
        }
        guard start < end, line[start] == UInt8(ascii: "{"),
            let aps = uniqueMember(scan, of: start, named: Keys.aps), line[aps.value] == UInt8(ascii: "{"),
            let badge = badgeSlot(scan, ofObjectAt: aps.value)
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end - start + badge.insert.count)
        bytes.append(contentsOf: line[start..<badge.from])
        bytes.append(contentsOf: badge.insert)
        let split = bytes.count
        bytes.append(contentsOf: line[badge.to..<end])
        return PayloadStamp(bytes: bytes, split: split)
    }
}
