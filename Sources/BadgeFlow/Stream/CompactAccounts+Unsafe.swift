// CompactAccounts' work on raw memory: an encoding decoded from a borrowed slice of the arena,
// and the live encodings copied into a new arena. Relies on each slot's offset and length
// lying inside the arena (insert sets them from the bytes it appends).

import BadgeTree

extension CompactAccounts {
    func decode(_ slot: Int, id: String, rules: RuleSet) throws(StateFile.Failure) -> Account {
        let offset = slot >> 20, length = slot & Self.maxEncoded
        let decoded = arena.withUnsafeBytes { buffer in
            AccountCodec.decode(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), rules: rules)
        }
        guard let decoded else {
            throw StateFile.Failure(
                file: "(memory)", at: "/accounts/" + JSONPointer.escape(id),
                message: "the account's compact form does not decode (an internal error)")
        }
        return decoded
    }

    /// Copies the encodings into a buffer without holes.
    mutating func closeHoles() {
        var packed: [UInt8] = []
        packed.reserveCapacity(liveBytes + liveBytes / 4)
        arena.withUnsafeBufferPointer { old in
            // Walked by index, not through `slots.indices`: that would hold the table's
            // storage, and the first write below would copy the whole table.
            var i = slots.startIndex
            while i != slots.endIndex {
                let slot = slots.values[i]
                if slot >= 0 {
                    let offset = slot >> 20, length = slot & Self.maxEncoded
                    slots.values[i] = packed.count << 20 | length
                    packed.append(contentsOf: UnsafeBufferPointer(rebasing: old[offset..<offset + length]))
                }
                i = slots.index(after: i)
            }
        }
        arena = packed
        holes = 0
    }
}
