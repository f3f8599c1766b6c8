import ArgumentParser
import BadgeFlow

extension StateCommand {
    /// Exits as the failure says: 2 usage, 3 state, 4 I/O.
    static func exit(_ error: StateSplit.Failure) -> ExitCode {
        Console.error("badgeflow: error: \(error.description)")
        switch error {
        case .usage: return Exit.usage
        case .state: return Exit.state
        case .io: return Exit.io
        }
    }

    struct Split: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Split a state by account into the parts of a partitioned run (Integrations/spark).",
            discussion: """
                Writes \(StateFormat.splitPartsHelp): account A goes to \
                part crc32(A) % P, as the Spark job partitions lines. Each part records P, its \
                index, the hash and FILE's rules. OUTDIR is created, or must be empty. Streams: \
                memory stays at one account plus buffers, however large FILE is.
                """
        )

        @Argument(help: ArgumentHelp("The state to split (\(StateFormat.extensionList)).", valueName: "FILE"))
        var file: String

        @Option(name: .long, help: ArgumentHelp("The number of parts (the run's partition count).", valueName: "P"))
        var parts: Int

        @Argument(help: ArgumentHelp("The folder the parts are written to.", valueName: "OUTDIR"))
        var outdir: String

        func run() throws {
            do { try StateSplit.split(file, parts: parts, into: outdir) } catch { throw StateCommand.exit(error) }
        }
    }

    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Join the parts of a split state back into one state.",
            discussion: """
                Refuses (exit 3, naming the part and why) parts of different P, hash or rules, a \
                missing or repeated index, and an account in two parts or in a part it does not \
                belong to. OUT is of the parts' format and must not exist. A split state merged \
                again is the state it was split from, byte for byte.
                """
        )

        @Argument(help: ArgumentHelp("The state to write (\(StateFormat.extensionList)).", valueName: "OUT"))
        var out: String

        @Argument(help: ArgumentHelp("Every part of the split, in any order.", valueName: "PART"))
        var parts: [String]

        func run() throws {
            let lock: StateLock
            do { lock = try StateLock(state: out) } catch {
                Console.error("badgeflow: error: state file \(out): \(error.description)")
                throw Exit.state
            }
            defer { lock.release() }
            do { try StateSplit.merge(parts, into: out) } catch { throw StateCommand.exit(error) }
        }
    }
}
