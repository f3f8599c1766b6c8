// RuleSet's routing through borrowed and raw memory: the plan and the rules read without
// retaining them (Unmanaged), and each payload's selected values cached in a stack buffer.
// Relies on the rule set keeping `plan` and every rule of `rules` alive while it routes (the
// unretained references never outlive them), and on every slot index being below the plan's
// step count, the cache's size.

extension RuleSet {
    /// A rule referenced without ownership: ``rules`` keeps it alive.
    typealias BorrowedRule = Unmanaged<RoutingRule>

    /// `rules` as unretained references, for ``route(_:aps:base:)``.
    static func borrowed(_ rules: [RoutingRule]) -> [BorrowedRule] { rules.map(Unmanaged.passUnretained) }

    /// Tries the rules in order on `payload`; the first that matches and renders wins.
    ///
    /// - Parameters:
    ///   - aps: the payload's `aps` member as the caller looked it up (nil when it has none):
    ///     pointers under `/aps` start from it instead of looking it up again.
    ///   - base: the payload's pointer in the line (`""` or `/payload`), for errors.
    func route(_ payload: JSONRef, aps: JSONRef?, base: String) -> Routing {
        // The plan is borrowed, not retained: `self` keeps it alive for the whole call.
        Unmanaged.passUnretained(plan)._withUnsafeGuaranteedRef { plan in
            let steps = plan.steps
            return withUnsafeTemporaryAllocation(of: UInt.self, capacity: max(steps.count, 1)) { cache in
                cache.initialize(repeating: Selected.unresolved)
                if plan.apsSlot >= 0 { cache[plan.apsSlot] = Selected.entry(aps) }
                let selected = Selected(root: payload, steps: steps, cache: cache)
                return borrowedRules.withUnsafeBufferPointer { rules in
                    for i in rules.indices {
                        let routing = rules[i]._withUnsafeGuaranteedRef { rule -> Routing? in
                            guard rule.matches(selected) else { return nil }
                            switch rule.template.render(selected, base: base) {
                            case .missing: return nil
                            case .invalid(let d): return .failed(d)
                            case .path(let path):
                                guard let template = rule.once else {
                                    return .matched(rule: i, path: path, action: rule.action, once: nil)
                                }
                                switch template.renderToken(selected, base: base) {
                                case .missing: return nil
                                case .invalid(let d): return .failed(d)
                                case .path(let token): return .matched(rule: i, path: path, action: rule.action, once: token)
                                }
                            }
                        }
                        if let routing { return routing }
                    }
                    return .none
                }
            }
        }
    }
}

/// The values a payload holds at the rules' pointers, each resolved on first use.
///
/// Several rules test the same pointer (`/type`, `/aps/thread-id`), and a template reads the
/// value its rule just tested: resolving each pointer once per payload saves the repeats,
/// and a pointer's value is one step from its parent pointer's, itself resolved once.
struct Selected {
    let root: JSONRef
    let steps: UnsafeBufferPointer<PointerPlan.Step>
    /// Per slot: `unresolved`, `absent`, `null` (present, JSON null), or the json-c object's
    /// address (``JSONRef/bits``).
    let cache: UnsafeMutableBufferPointer<UInt>

    static let unresolved: UInt = 0
    static let absent: UInt = 1
    static let null: UInt = 2

    /// The cache entry for a looked-up value.
    @inline(__always)
    static func entry(_ value: JSONRef?) -> UInt {
        guard let value else { return absent }
        return value.isNull ? null : value.bits
    }

    /// The value at pointer `slot`, or nil when the payload has none there.
    func value(_ slot: Int) -> JSONRef? {
        switch cache[slot] {
        case Self.absent: return nil
        case Self.null: return JSONRef(bits: 0)
        case Self.unresolved:
            let step = steps[slot]
            let from: JSONRef?
            if step.parent < 0 { from = root } else { from = value(step.parent) }
            var found: JSONRef? = nil
            if let from {
                if let key = step.key {
                    found = from.step(key: key, hash: step.hash, index: step.index)
                } else {
                    found = from  // the whole-document pointer
                }
            }
            cache[slot] = Self.entry(found)
            return found
        case let bits: return JSONRef(bits: bits)
        }
    }
}
