import ArgumentParser
import BadgeFlow

/// `badgeflow state`: inspect a state, or convert it between formats (`StateFormat/all`).
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract:
            "Inspect a state file, convert it between \(StateFormat.titles(StateFormat.all, "and")), or split it by account and merge it back.",
        subcommands: [Info.self, Get.self, Convert.self, Split.self, Merge.self]
    )

    /// The rules a state is read with: the recorded ones, else the built-in ones.
    static func rules(_ recorded: RuleSet?) -> RuleSet { recorded ?? RuleSet.builtIn }

    static func size(_ path: String) -> Int64 {
        System.fileSize(path)
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print one account as it stands in a state: its total, its shown nodes, and every device with its delivered number.",
            discussion: """
                A device is stale when its delivered number is not the account's total. \
                \(StateFormat.titlesWithArticle(StateFormat.checkpointing, capital: true)) \
                state is read without a lock, while a filter writes it (its last checkpoint). \
                An account the state does not hold: exit 1.
                """
        )

        @Argument(help: ArgumentHelp(StateFormat.fileOrFolderHelp, valueName: "FILE"))
        var file: String

        @Argument(help: ArgumentHelp("The account id (a device's own account: the device id).", valueName: "ACCOUNT"))
        var account: String

        @Flag(
            name: .long, help: "One JSON object: {\"account\",\"total\",\"tree\":[...],\"devices\":[{\"device\",\"delivered\",\"stale\"}]}."
        )
        var json = false

        func run() throws {
            let found: StoredAccount?
            do { found = try StoredAccount.read(state: file, account: account) } catch {
                Console.error("badgeflow: error: state file \(error.description)")
                throw Exit.state
            }
            guard let found else {
                Console.error("badgeflow: no account \"\(account)\" in \(file)")
                throw Exit.rejected
            }
            if json {
                // The same bytes `badgeflow serve` answers (`GET /v1/accounts/{id}`).
                Console.write(found.jsonLine)
                return
            }
            var out = "account: \(found.id)\ntotal: \(found.total)\n"
            out += "nodes:\(found.nodes.isEmpty ? " none" : "")\n"
            for s in found.nodes { out += "  \(s.path)  \(s.count)  \"\(s.display.description)\"\n" }
            out += "devices:\(found.devices.isEmpty ? " none" : "")\n"
            for d in found.devices { out += "  \(d.id.isEmpty ? "\"\"" : d.id)  delivered \(d.delivered)\(d.stale ? "  stale" : "")\n" }
            if !found.contributions.isEmpty {
                out += "settings:\n"
                for c in found.contributions { out += "  \(c.path)  contribute \(c.mode.rawValue)\n" }
            }
            Console.out(out)
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print a state's format, version, accounts, devices, marks, last committed seq, size and, for a part of a split state, its partition record.",
            discussion:
                "\(StateFormat.titlesWithArticle(StateFormat.checkpointing, capital: true)) state is read from its meta only, however many accounts it holds."
        )

        @Argument(help: ArgumentHelp(StateFormat.fileOrFolderHelp, valueName: "FILE"))
        var file: String

        @Flag(
            name: .long,
            help:
                "One JSON object: {\"format\",\"version\",\"accounts\",\"devices\",\"marks\",\"seq\",\"input\",\"size\",\"partition\",\"offset\",\"inputs\"} (seq and input null for JSON; partition {\"parts\",\"index\",\"hash\"}, or null for a whole state; offset true for a queue offset; inputs the digests of the inputs applied, [{\"digest\",\"name\",\"first_seq\",\"last_seq\",\"at\"}])."
        )
        var json = false

        func run() throws {
            let info: StateInfo
            do throws(StateFile.Failure) {
                let store = try StateFormat.open(path: file, readOnly: true)
                defer { store.close() }
                info = try store.info()
            } catch {
                Console.error("badgeflow: error: state file \(error.description)")
                throw Exit.state
            }
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.key("format"); w.string(info.format)
                w.key("version"); w.string(info.version)
                w.key("accounts"); w.int(info.accounts)
                w.key("devices"); w.int(info.devices)
                w.key("marks"); w.int(info.marks)
                if let resume = info.resume {
                    w.key("seq"); w.int(resume.seq)
                    w.key("input"); w.string(resume.input)
                } else {
                    w.key("seq"); w.null()
                    w.key("input"); w.null()
                }
                w.key("size"); w.int(Int(info.size))
                w.key("partition")
                if let p = info.partition {
                    w.beginObject()
                    w.key("parts"); w.int(p.parts)
                    w.key("index"); w.int(p.index)
                    w.key("hash"); w.string(StatePartition.hashName)
                    w.endObject()
                } else {
                    w.null()
                }
                w.key("offset"); w.bool(info.records.numbered)
                w.key("inputs")
                w.beginArray()
                for input in info.records.inputs {
                    w.beginObject()
                    w.key("digest"); w.string(input.digest)
                    w.key("name"); w.string(input.name)
                    w.key("first_seq"); w.int(input.firstSeq)
                    w.key("last_seq"); w.int(input.lastSeq)
                    w.key("at"); w.string(input.at)
                    w.endObject()
                }
                w.endArray()
                w.endObject()
                w.newline()
                Console.write(w.bytes)
                return
            }
            var out = "format: \(info.format)\nversion: \(info.version)\n"
            out += "accounts: \(info.accounts)\ndevices: \(info.devices)\nmarks: \(info.marks)\n"
            if let resume = info.resume {
                out += "last seq: \(resume.seq)\ninput: \(resume.input.isEmpty ? "-" : resume.input)\n"
            } else {
                out += "last seq: - (\(info.format.uppercased()) states keep no seq)\n"
            }
            out += "size: \(info.size) bytes\n"
            // Only a part of a split state has the line (a whole state's output is as before).
            if let p = info.partition { out += "partition: \(p)\n" }
            // Only a state that recorded inputs, or a queue offset, has these lines.
            if info.records.numbered { out += "offset: numbered (a queue offset: runs without --numbered are refused)\n" }
            for input in info.records.inputs { out += "input applied: \(input.digest) \(input.applied)\n" }
            Console.out(out)
        }
    }

    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert a state between \(StateFormat.titles(StateFormat.all, "and")) (by extension: \(StateFormat.extensionList)).",
            discussion: """
                TO must not hold a state yet; it is locked like a filter's state while written, and removed \
                when the conversion fails. A part of a split state stays a part (its partition record is \
                kept). JSON to \(StateFormat.titles(StateFormat.checkpointing)) is streamed, in batches of 20,000 accounts.
                """
        )

        @Argument(help: ArgumentHelp("The state to read.", valueName: "FROM"))
        var from: String

        @Argument(help: ArgumentHelp("The state to write.", valueName: "TO"))
        var to: String

        func run() throws {
            if StateFormat.of(from) == StateFormat.of(to) {
                Console.error("badgeflow: error: convert goes from one format to another; \(from) and \(to) are of one format")
                throw Exit.usage
            }
            if StateCommand.size(to) > 0 {
                Console.error("badgeflow: error: \(to) exists; convert writes a new state only")
                throw Exit.state
            }
            let lock: StateLock
            do { lock = try StateLock(state: to) } catch {
                Console.error("badgeflow: error: state file \(to): \(error.description)")
                throw Exit.state
            }
            defer { lock.release() }
            // JSON to a format with checkpoints streams in batches; other pairs hold the accounts
            // compactly. A part of a split state keeps its record.
            do throws(StateFile.Failure) { try StateConversion.convert(from: from, to: to) } catch {
                Console.error("badgeflow: error: state file \(error.description)")
                throw Exit.state
            }
        }
    }
}
