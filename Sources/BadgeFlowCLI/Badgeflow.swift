import ArgumentParser
import BadgeFlow

/// `badgeflow`: push payloads in, badge state out.
struct Badgeflow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badgeflow",
        abstract: "Turn APNs push payloads into badge state: a badge tree, icon counts and decrement requests.",
        // `--version` names the allocator too: it is the one build choice that moves the figures.
        version: "badgeflow \(version) (\(Allocator.name))",
        subcommands: [
            FilterCommand.self, ReportCommand.self, BatchCommand.self, ValidateCommand.self, TreeCommand.self, StateCommand.self,
            RulesCommand.self, ExampleCommand.self, ServeCommand.self,
        ]
    )

    /// The release this build is (one source of truth: `BadgeFlowRelease.version`).
    static let version = BadgeFlowRelease.version
}

/// Maps errors to the command line's exit codes: argument errors are 2, not ArgumentParser's 64.
@main
enum Main {
    static func main() {
        Signals.installBusHandler()
        do {
            var command = try parse(Array(CommandLine.arguments.dropFirst()))
            try command.run()
        } catch let code as ExitCode {
            Badgeflow.exit(withError: code)
        } catch {
            let code = Badgeflow.exitCode(for: error)
            if code == .success {
                Badgeflow.exit(withError: error)
            }
            Console.error(Badgeflow.fullMessage(for: error))
            Badgeflow.exit(withError: ExitCode(2))
        }
    }
}

extension Main {
    /// Parses argv; `filter` and `validate` INPUTs bypass ArgumentParser (see `TakesManyInputs`).
    static func parse(_ argv: [String]) throws -> any ParsableCommand {
        guard let (split, type) = InputSplit.split(argv, commands: [FilterCommand.self, ReportCommand.self, ValidateCommand.self]) else {
            return try Badgeflow.parseAsRoot(argv)
        }
        if type == FilterCommand.self, var command = filterAlone(split) {
            command.inputs = split.inputs
            return command
        }
        let parsed = try Badgeflow.parseAsRoot(split.arguments)
        guard var command = parsed as? any TakesManyInputs, Swift.type(of: command) == type else { return parsed }
        command.inputs = split.inputs
        return command
    }
}

extension Main {
    /// `filter`'s options parsed with `filter` as the root command, or nil when ArgumentParser
    /// does not accept them as they stand (help, `--version`, an unknown option, a failed
    /// validation): the caller then parses from `badgeflow`, so every message and exit code
    /// is the root's, word for word.
    ///
    /// ArgumentParser then neither builds the whole command tree nor looks up the other
    /// commands' conformances by reflection: about 6.5M instructions, a fifth of the start-up.
    static func filterAlone(_ split: InputSplit) -> FilterCommand? {
        guard split.arguments.first == FilterCommand._commandName else { return nil }
        return (try? FilterCommand.parseAsRoot(Array(split.arguments.dropFirst()))) as? FilterCommand
    }
}

/// Exit codes of the command line.
enum Exit {
    static let rejected = ExitCode(1)
    static let usage = ExitCode(2)
    static let state = ExitCode(3)
    static let io = ExitCode(4)
}
