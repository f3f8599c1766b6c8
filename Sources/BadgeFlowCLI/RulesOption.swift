import ArgumentParser
import BadgeFlow

/// `--rules FILE`, shared by the commands that route payloads.
struct RulesOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Routing rules file (JSON); the built-in rules when absent.", valueName: "FILE"))
    var rules: String?

    /// Whether `--rules` was given (without it, a state's recorded rules are used).
    var given: Bool { rules != nil }

    /// Loads the rules, or exits 2 with the file, pointer and reason.
    func load() throws -> RuleSet {
        guard let rules else { return RuleSet.builtIn }
        do {
            return try RuleSet.load(file: rules)
        } catch {
            Console.error("badgeflow: error: \(error.description)")
            throw Exit.usage
        }
    }
}
