import ArgumentParser

/// A subcommand whose positional INPUTs are taken out of argv before ArgumentParser sees it.
///
/// ArgumentParser 1.x spends time quadratic in the number of positional values of an
/// `@Argument` array, whatever its parsing strategy: each value is appended to an array held
/// in an `Any` box (copied every time), its origin is merged into an ever-growing set, and the
/// used input is removed from the argument list one element at a time. 100,000 INPUTs took
/// minutes. So `filter` and `validate` split argv themselves in one pass, getopt-style, and
/// hand ArgumentParser only their options.
protocol TakesManyInputs: ParsableCommand {
    /// Every spelling of every option that takes a value (`--rules`, `-o`), with its long
    /// name. A test checks it against ArgumentParser's own description of the command.
    static var optionsWithValues: [String: String] { get }
    /// The positional INPUTs, in command-line order.
    var inputs: [String] { get set }
}

/// The INPUTs of a `TakesManyInputs` command, split off argv.
struct InputSplit {
    /// What ArgumentParser gets: the subcommand name and its options (`--opt=VALUE`).
    var arguments: [String] = []
    /// The positional INPUTs, in order.
    var inputs: [String] = []

    /// Splits `argv` (without the program name) when it starts with the name of a command
    /// in `commands`; nil otherwise (ArgumentParser then parses everything itself).
    ///
    /// Rules, as getopt's: an option that takes a value takes the next argument whatever it
    /// looks like (so `--max-line-bytes -5` is the value -5); `--opt=VALUE` is one argument;
    /// `-` alone is an INPUT (stdin); everything after `--` is an INPUT; any other argument
    /// starting with `-` is left to ArgumentParser (a flag, or an unknown option it reports).
    static func split(_ argv: [String], commands: [any TakesManyInputs.Type]) -> (InputSplit, any TakesManyInputs.Type)? {
        guard let name = argv.first,
            let command = commands.first(where: { $0._commandName == name })
        else { return nil }
        let valued = command.optionsWithValues
        var out = InputSplit()
        out.arguments.reserveCapacity(16)
        out.inputs.reserveCapacity(argv.count)
        out.arguments.append(name)
        var i = 1
        while i < argv.count {
            let arg = argv[i]
            i += 1
            if arg == "--" {
                out.inputs.append(contentsOf: argv[i...])
                break
            }
            guard arg.utf8.first == UInt8(ascii: "-"), arg != "-" else {
                out.inputs.append(arg)
                continue
            }
            if let long = valued[arg], i < argv.count {
                // `--opt=VALUE`: ArgumentParser then takes a value that starts with `-` too.
                out.arguments.append("--" + long + "=" + argv[i])
                i += 1
            } else {
                out.arguments.append(arg)
            }
        }
        return (out, command)
    }
}
