import ArgumentParser
import BadgeFlow

/// `badgeflow rules`: print the built-in rules, or check a rules file.
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Print the built-in rules (to copy and edit), or check a rules file with --check FILE."
    )

    @Option(name: .long, help: ArgumentHelp("Check this rules file and exit 0 (valid) or 2 (with the fault).", valueName: "FILE"))
    var check: String?

    func run() throws {
        if let check {
            let set = try RulesOption(rules: check).load()
            Console.out("\(check): ok, \(set.rules.count) rule\(set.rules.count == 1 ? "" : "s")\n")
            return
        }
        Console.out(RuleSet.builtInText + "\n")
    }
}

extension RulesOption {
    init(rules: String?) {
        self.init()
        self.rules = rules
    }
}
