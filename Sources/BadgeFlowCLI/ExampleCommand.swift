import ArgumentParser
import BadgeFlow

/// `badgeflow example`: the promotion walkthrough of the RJBadgeKit article, on the library API.
struct ExampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example",
        abstract: "Walk through the promotion example: observe root.promotion, set and clear two items."
    )

    func run() throws {
        let center = BadgeCenter(configuration: try .init(display: ["root.promotion": .custom("new")]))
        let heard = LinesBox()
        let token = try center.observe("root.promotion") { state in
            heard.append("  observer root.promotion: count \(state.count), show \(state.show), display \(state.display)")
        }
        func step(_ title: String, _ body: () throws -> Outcome) rethrows {
            Console.out("\(title)\n")
            let outcome = try body()
            for line in heard.take() { Console.out(line + "\n") }
            for change in outcome.changes {
                Console.out("  changed \(change.path): \(change.display)\n")
            }
            if let d = outcome.decrement {
                Console.out("  decrement request: subtract \(d.by) (\(d.paths.joined(separator: ", ")))\n")
            }
            Console.out("  app icon: \(center.tree.total)\n")
        }
        Console.out("observe root.promotion\n")
        for line in heard.take() { Console.out(line + "\n") }
        try step("set root.promotion.item1 (a dot)") { try center.set("root.promotion.item1") }
        try step("set root.promotion.item2 to 2") { try center.set("root.promotion.item2", count: 2) }
        try step("clear root.promotion.item1") { try center.clear("root.promotion.item1") }
        try step("clear root.promotion.item2") { try center.clear("root.promotion.item2") }
        token.cancel()
    }
}

/// Collects observer output across the callback's Sendable boundary (the callback may run
/// on another thread: the lines are behind a lock).
final class LinesBox: Sendable {
    private let lines = Locked<[String]>([])
    func append(_ s: String) { lines.withLock { $0.append(s) } }
    func take() -> [String] {
        lines.withLock { lines in
            defer { lines = [] }
            return lines
        }
    }
}
