/// Reads one NDJSON line into an `Event`: parse, validate, route.
///
/// The line formats are described in <doc:EventLines>.
///
/// Stateless apart from its reused json-c tokener: give each thread its own analyzer and
/// share the `RuleSet`. Every problem becomes a `Diagnostic` whose pointer is into the line.
public final class LineAnalyzer {
    /// The compiled rules.
    public let rules: RuleSet
    /// Whether pushes whose kind sets the icon keep their payload for stamping
    /// (``Event/stamp``; `badgeflow filter --stamp`).
    public let stamp: Bool
    let parser = JSONParser(maxDepth: PayloadLimits.maxDepth)

    /// Creates an analyzer for `rules`; with `stamp`, push results carry the stamped payload.
    public init(rules: RuleSet, stamp: Bool = false) {
        self.rules = rules
        self.stamp = stamp
    }

    /// The `invalid-path` error at `/path` for a path that is not valid or not under `root`.
    static func refusedTreePath(_ path: String, root treeRoot: String) -> Diagnostic? {
        do { try BadgePath.validate(path) } catch {
            return .error(.invalidPath, error.description, at: "/path")
        }
        guard path == treeRoot || path.hasPrefix(treeRoot + ".") else {
            return .error(.invalidPath, "invalid path \"\(path)\": a path must start with the root \"\(treeRoot)\"", at: "/path")
        }
        return nil
    }

    func pathField(_ root: JSONRef, into event: inout Event) -> String? {
        guard let p = root[HashedKey.path], p.kind == .string else { return nil }
        return p.string
    }

    func rejectedPath(_ root: JSONRef) -> LineResult {
        guard let p = root[HashedKey.path] else {
            return .rejected(.error(.missingField, "this op needs a \"path\" such as \"root.chat.alice\"", at: "/path"))
        }
        return .rejected(.error(.wrongType, "path must be a string, got \(PayloadChecker.describe(p))", at: "/path"))
    }

    struct Failure: Error { let diagnostic: Diagnostic }

    /// Replaces pointer amounts with the payload's values.
    func resolve(_ action: RoutingRule.Action, _ payload: JSONRef, base: String) -> Result<RoutingRule.Action, Diagnostic> {
        func amount(_ a: RoutingRule.Amount, min: Int64) -> Result<RoutingRule.Amount, Diagnostic> {
            guard case .pointer(let p) = a else { return .success(a) }
            guard let v = payload.resolve(p), !v.isNull else {
                return .failure(.error(.missingField, "the rule's amount \(p) is missing from the payload", at: base + p.description))
            }
            guard v.kind == .int, let n = v.int, !v.intOverflowed, n >= min, n <= Int64(Int32.max) else {
                return .failure(
                    .error(
                        .wrongType,
                        "the rule's amount \(p) must be an integer from \(min) to 2147483647, got \(PayloadChecker.describe(v))",
                        at: base + p.description))
            }
            return .success(.literal(Int(n)))
        }
        switch action {
        case .increment(let a): return amount(a, min: Int64(Int32.min)).map { .increment($0) }
        case .set(let a): return amount(a, min: 0).map { .set($0) }
        default: return .success(action)
        }
    }
}

extension Diagnostic: Error {}
