import ArgumentParser
import BadgeFlowTestSupport
import Testing

@testable import BadgeFlowCLI

/// `filter` is parsed with itself as the root command when ArgumentParser accepts its options
/// as they stand, and from `badgeflow` otherwise (Badgeflow.swift, `Main.filterAlone`).
@Suite struct EntryPointTests {
    /// The command's options as ArgumentParser set them: every stored property, by reflection.
    private func described(_ command: any ParsableCommand) -> String {
        var text = ""
        dump(command, to: &text)
        return text
    }

    @Test(arguments: [
        ["filter"],
        ["filter", "--jobs", "1"],
        ["filter", "a.ndjson", "--jobs=2", "b.ndjson", "-", "--metrics", "m.json"],
        ["filter", "--state", "s.sqlite", "--checkpoint", "0.5", "--resume", "--max-resident", "10"],
        ["filter", "--rules", "r.json", "-o", "out.ndjson", "--max-line-bytes", "2048", "--", "--jobs"],
        ["filter", "--expanded-accounts", "5", "--stamp", "--numbered", "x"],
    ])
    func optionsParsedAloneAreTheRootsOptions(_ argv: [String]) throws {
        let (split, type) = try #require(InputSplit.split(argv, commands: [FilterCommand.self]))
        #expect(ObjectIdentifier(type) == ObjectIdentifier(FilterCommand.self))
        var alone = try #require(Main.filterAlone(split), "filter parsed alone: \(argv)")
        alone.inputs = split.inputs
        var root = try #require(try Badgeflow.parseAsRoot(split.arguments) as? FilterCommand)
        root.inputs = split.inputs
        #expect(described(alone) == described(root))
        #expect(described(try Main.parse(argv)) == described(root))
    }

    @Test(arguments: [
        ["filter", "--help"],
        ["filter", "-h"],
        ["filter", "--version"],
        ["filter", "--no-such-option"],
        ["filter", "--jobs", "0"],
        ["filter", "--jobs", "many"],
        ["filter", "--resume"],
        ["filter", "--experimental-dump-help"],
        ["filter", "--generate-completion-script", "bash"],
    ])
    func whatFilterAloneRefusesGoesToTheRoot(_ argv: [String]) throws {
        let (split, _) = try #require(InputSplit.split(argv, commands: [FilterCommand.self]))
        #expect(Main.filterAlone(split) == nil, "filter alone accepted \(argv)")
    }

    @Test func helpAndErrorsAreTheRootsWordForWord() async throws {
        let help = try await CLI.run(["filter", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: badgeflow filter"))
        let unknown = try await CLI.run(["filter", "--no-such-option"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("Usage: badgeflow filter"))
        let invalid = try await CLI.run(["filter", "--jobs", "0"])
        #expect(invalid.status == 2)
        #expect(invalid.stderr.contains("--jobs must be at least 1, got 0"))
        #expect(invalid.stderr.contains("Usage: badgeflow filter"))
    }
}
