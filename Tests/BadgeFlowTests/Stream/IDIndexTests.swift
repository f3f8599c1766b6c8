import Testing

@testable import BadgeFlow

/// ``IDIndex``: every entry is found under its hash after any sequence of inserts and
/// removals, including runs of colliding hashes and runs that wrap past the last bucket.
@Suite struct IDIndexTests {
    /// An index over `ids` (position = place in `ids`) with their given hashes, checked
    /// against the ids that should be in it.
    private struct Model {
        var index = IDIndex()
        var ids: [String] = []
        var hashes: [Int] = []
        var present: Set<Int> = []

        mutating func add(_ id: String, hash: Int) {
            index.insert(hash, position: ids.count)
            present.insert(ids.count)
            ids.append(id)
            hashes.append(hash)
        }

        mutating func remove(_ position: Int) {
            index.remove(hashes[position], position: position)
            present.remove(position)
        }

        func find(_ position: Int) -> Int? {
            let id = ids[position]
            return index.find(hashes[position]) { ids[$0] == id }
        }

        /// Every present entry is found at its position, and no removed one is found.
        func check(_ note: String) {
            #expect(index.count == present.count, "\(note)")
            for p in ids.indices {
                #expect(find(p) == (present.contains(p) ? p : nil), "\(note): \(ids[p])")
            }
        }
    }

    /// Ids whose hashes share their low bits sit in one run of buckets; removing any of
    /// them (first, middle, last of the run) leaves the others findable.
    @Test func collidingHashesStayFindableWhateverIsRemoved() {
        for order in [Array(0..<24), Array((0..<24).reversed()), (0..<24).map { ($0 * 7) % 24 }] {
            var m = Model()
            // Four tags, each shared by six ids (the tag is the hash's low 32 bits): one run.
            for i in 0..<24 { m.add("id\(i)", hash: (i % 4) | (i << 40)) }
            m.check("filled")
            for p in order {
                m.remove(p)
                m.check("after removing id\(p) in order \(order)")
            }
        }
    }

    /// A run that starts in the last buckets wraps to the first ones; removals inside it
    /// shift the entries after the wrap back correctly.
    @Test func aRunThatWrapsPastTheLastBucketShiftsBackAcrossIt() {
        var m = Model()
        // -1, -2: the last buckets whatever the size; 0: the first.
        let hashes = [-1, -2, -1, 0, -1, -2, 0, 1, -1, -2]
        for (i, h) in hashes.enumerated() { m.add("w\(i)", hash: h) }
        m.check("filled")
        for p in [1, 0, 4, 3, 9, 2, 8, 5, 7, 6] {
            m.remove(p)
            m.check("after removing w\(p)")
        }
    }

    /// Two ids under one full hash are told apart by `matches`; an id never added is not
    /// found, and removing an entry that is not there changes nothing.
    @Test func equalHashesAreToldApartByTheCaller() {
        var m = Model()
        m.add("a", hash: 42)
        m.add("b", hash: 42)
        #expect(m.find(0) == 0 && m.find(1) == 1)
        #expect(m.index.find(42) { _ in false } == nil)
        m.index.remove(42, position: 7)
        m.check("after removing a position that is not there")
        m.remove(0)
        m.check("after removing a")
    }

    /// Inserts and removals interleaved past several growths, against the model, with
    /// hashes from the standard library; `removeAll` empties it and keeps it usable.
    @Test func interleavedInsertsAndRemovalsMatchTheModel() {
        var m = Model()
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % 1000)
        }
        for i in 0..<3000 {
            if next() < 600 || m.present.isEmpty {
                let id = "acc\(i)"
                m.add(id, hash: IDIndex.hash(id))
            } else {
                let live = m.present.sorted()
                m.remove(live[next() % live.count])
            }
            if i % 500 == 0 { m.check("step \(i)") }
        }
        m.check("end")
        m.index.removeAll()
        m.present.removeAll()
        m.check("after removeAll")
        m.add("again", hash: IDIndex.hash("again"))
        m.check("after removeAll and an insert")
    }
}
