import Testing
@testable import BadgeFlow

/// Routing reads each pointer one step from its parent pointer's value (`PointerPlan`,
/// `Selected`); every value must be the one `JSONRef.resolve` finds walking the whole pointer.
@Suite struct PointerPlanTests {
    /// Calls `body` with the parsed root of `text` (a test document, always valid JSON).
    static func withRoot(_ document: String, _ body: (JSONRef) -> Void) {
        var text = document
        text.withUTF8 { utf8 in
            JSONParser().withDocument(UnsafeRawBufferPointer(utf8)) { parsed in
                switch parsed {
                case .success(let root): body(root)
                case .failure(let e): Issue.record("\(document): \(e.message)")
                }
            }
        }
    }

    static let pointerTexts = [
        "/aps/thread-id", "/aps/category", "/type", "", "/a/0", "/a/0/b", "/a/1", "/a/01", "/a/-", "/a/10",
        "/m~1n", "/t~0", "/obj/0", "/obj/0/x", "/n/x", "/z", "/z/deeper", "/aps/alert/title", "/aps/missing/x",
        "/deep/er/still/x",
    ]

    static let documents = [
        #"{"aps":{"thread-id":"t1","category":"news","alert":{"title":"T"}},"type":"chat"}"#,
        #"{"aps":null,"type":1,"z":null}"#,
        #"{"aps":{},"a":[{"b":1},"two"],"m/n":true,"t~":2,"obj":{"0":{"x":"y"}},"n":5}"#,
        #"{"a":{"0":{"b":"member, not element"},"01":3,"-":4},"deep":{"er":{"still":{"x":[]}}}}"#,
        #"{"aps":"not an object","a":[]}"#,
    ]

    @Test func planAddsEachSharedPrefixOnceAfterTheTable() throws {
        let pointers = try ["/aps/thread-id", "/aps/category", "/type", "/promo/campaign"].map {
            try #require(JSONPointer($0))
        }
        let plan = PointerPlan(pointers)
        // The table's four keep their slots; /aps and /promo come after them.
        #expect(plan.steps.count == 6)
        #expect(plan.apsSlot == 4)
        #expect(plan.steps[0].parent == 4 && plan.steps[1].parent == 4)
        #expect(plan.steps[2].parent == -1 && plan.steps[4].parent == -1)
        #expect(plan.steps[3].parent == 5)
        #expect(PointerPlan([]).apsSlot == -1)
    }

    @Test func everySlotHoldsWhatResolveFinds() throws {
        let pointers = try Self.pointerTexts.map { try #require(JSONPointer($0)) }
        let plan = PointerPlan(pointers)
        for document in Self.documents {
            Self.withRoot(document) { root in
                // Once with nothing known, once with `aps` looked up by the caller, as the
                // line analyzer does.
                for seeded in [false, true] {
                    withUnsafeTemporaryAllocation(of: UInt.self, capacity: plan.steps.count) { cache in
                        cache.initialize(repeating: Selected.unresolved)
                        if seeded, plan.apsSlot >= 0 { cache[plan.apsSlot] = Selected.entry(root[HashedKey.aps]) }
                        let selected = Selected(root: root, steps: plan.steps, cache: cache)
                        // Twice: the second read comes from the cache.
                        for _ in 0..<2 {
                            for (slot, pointer) in pointers.enumerated() {
                                let expected = root.resolve(pointer)
                                let found = selected.value(slot)
                                let context = "\(pointer) in \(document), seeded \(seeded)"
                                #expect((found == nil) == (expected == nil), "\(context)")
                                #expect(found?.bits == expected?.bits, "\(context)")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test func routingSeededWithApsMatchesRoutingWithout() throws {
        let rules = try RuleSet.parse(
            #"{"rules":[{"name":"cat","match":{"/aps/category":"news","/n":2},"path":"root.{/aps/category}.{/n}","action":"dot"}]}"#
        )
        let apsPointer = try #require(JSONPointer("/aps"))
        for (document, routed) in [
            (#"{"aps":{"category":"news"},"n":2}"#, "root.news.2"),
            (#"{"aps":{"category":"news"},"n":2.0}"#, nil),
            (#"{"aps":{"category":"sport"},"n":2}"#, nil),
            (#"{"aps":{},"n":2}"#, nil),
        ] {
            Self.withRoot(document) { root in
                for aps in [root[HashedKey.aps], root.resolve(apsPointer)] {
                    switch rules.route(root, aps: aps, base: "") {
                    case .matched(_, let path, _, _): #expect(path == routed, "\(document)")
                    case .none: #expect(routed == nil, "\(document)")
                    case .failed(let d): Issue.record("\(document): \(d.message)")
                    }
                }
            }
        }
    }
}
