import ArgumentParser
import BadgeFlow

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

extension TakesManyInputs {
    /// The INPUTs, then the files `--files-from` lists (a file, or `-` for stdin); stdin
    /// when there are none at all. `filter` and `report` share it.
    func sources(filesFrom: String?) throws -> [String] {
        guard let filesFrom else { return inputs.isEmpty ? ["-"] : inputs }
        if filesFrom == "-" && inputs.contains("-") {
            throw ValidationError("--files-from - and the INPUT - would both read stdin")
        }
        let list: [UInt8]
        if filesFrom == "-" {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = System.readStandardInput(into: &chunk)
                if n < 0 {
                    Console.error("badgeflow: <stdin>: cannot read the --files-from list: \(ResultsFile.reason())")
                    throw Exit.io
                }
                if n == 0 { break }
                bytes.append(contentsOf: chunk[0..<n])
            }
            list = bytes
        } else {
            do { list = try FileIO.readBytes(filesFrom) } catch {
                Console.error("badgeflow: \(filesFrom): cannot read the --files-from list: \(error.message)")
                throw Exit.io
            }
        }
        // One path a line, taken as it is (spaces included); blank lines are skipped.
        var out = inputs
        for line in list.split(separator: 0x0A, omittingEmptySubsequences: true) {
            out.append(String(decoding: line, as: UTF8.self))
        }
        return out
    }
}
