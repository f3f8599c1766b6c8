import BadgeFlowTestSupport
import Foundation
import Testing

@testable import BadgeFlow

/// `state convert` (``StateConversion``): a JSON state streamed into each format with checkpoints in
/// batches, the partition record kept, and nothing left behind by a conversion that fails.
@Suite struct StateConversionTests {
    /// A stream of `count` accounts, each with a device and two marks.
    private static func stream(accounts count: Int) -> BadgeStream {
        let analyzer = LineAnalyzer(rules: .builtIn)
        var stream = BadgeStream(rules: .builtIn)
        var seq = 0
        for i in 0..<count {
            for line in [
                #"{"op":"push","account":"acct-\#(i)","device":"d0","at":1732269700,"payload":{"aps":{"alert":"hi","thread-id":"t\#(i % 5)"}}}"#,
                #"{"op":"push","account":"acct-\#(i)","device":"d1","at":1732269701,"payload":{"aps":{"alert":"m","category":"mail"}}}"#,
            ] {
                seq += 1
                _ = stream.apply(analyzer.analyze(line), seq: seq)
            }
        }
        return stream
    }

    /// The streamed read hands off full batches without the record and returns the rest
    /// with it; every account is handed off once.
    @Test func aStreamedLoadHandsOffFullBatches() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("state.json")
        var whole = Self.stream(accounts: 45)
        whole.partition = StatePartition(parts: 4, index: 2)
        try StateFile.save(whole, to: path)
        let mapped = try #require(MappedFile(path))
        var sizes: [Int] = []
        var ids: Set<String> = []
        let rest = try #require(
            try StateFile.streamedLoad(
                mapped, path: path, rules: .builtIn, compact: false,
                batches: (
                    10,
                    { (batch: BadgeStream) throws(StateFile.Failure) in
                        sizes.append(batch.accountCount)
                        #expect(batch.partition == nil)
                        ids.formUnion(batch.accountIDs)
                    }
                )))
        #expect(sizes == [10, 10, 10, 10])
        #expect(rest.accountCount == 5)
        #expect(rest.partition == StatePartition(parts: 4, index: 2))
        ids.formUnion(rest.accountIDs)
        #expect(ids == Set(whole.accountIDs))
    }

    /// JSON to a format with checkpoints in batches of 7 and back to JSON: the same file, byte for
    /// byte, record included.
    @Test(arguments: Formats.checkpointing)
    func aJSONStateStreamedInBatchesComesBackTheSame(format: String) throws {
        let folder = try TemporaryFolder()
        let json = folder.file("state.json"), other = folder.file("state." + format), back = folder.file("back.json")
        var whole = Self.stream(accounts: 50)
        whole.partition = StatePartition(parts: 3, index: 1)
        try StateFile.save(whole, to: json)
        try StateConversion.convert(from: json, to: other, batch: 7)
        let store = try StateFormat.open(path: other, readOnly: true)
        let info = try store.info()
        store.close()
        #expect(info.accounts == 50)
        #expect(info.devices == 100)
        #expect(info.partition == StatePartition(parts: 3, index: 1))
        try StateConversion.convert(from: other, to: back)
        #expect(try FileIO.readBytes(back) == FileIO.readBytes(json))
    }

    /// A file the streamed read gives up on after some batches were written (here a second
    /// `accounts` member, after the first's 30 accounts): the conversion starts again from an
    /// empty state and takes the file as the whole-document read does (json-c keeps the last
    /// `accounts`, which is empty), so none of the accounts written before stays.
    @Test(arguments: Formats.checkpointing)
    func aFileTheStreamedReadGivesUpOnIsConvertedWhole(format: String) throws {
        let folder = try TemporaryFolder()
        let json = folder.file("state.json"), other = folder.file("state." + format)
        try StateFile.save(Self.stream(accounts: 30), to: json)
        var text = try FileIO.readBytes(json)
        #expect(text.suffix(2) == Array("}\n".utf8))
        text.removeLast(2)
        try folder.write("state.json", text + Array(#", "accounts": {}}"#.utf8) + [0x0A])
        let whole = try StateFile.load(json, rules: .builtIn)
        #expect(whole.accountCount == 0)
        try StateConversion.convert(from: json, to: other, batch: 7)
        let store = try StateFormat.open(path: other, readOnly: true)
        defer { store.close() }
        #expect(try store.info().accounts == whole.accountCount)
    }

    /// A mark that does not fit the rules, in a later batch: the error names the account,
    /// and the new state is removed.
    @Test(arguments: Formats.checkpointing)
    func aMarkThatDoesNotFitInALaterBatchLeavesNoState(format: String) throws {
        let folder = try TemporaryFolder()
        let json = folder.file("state.json"), other = folder.file("state." + format)
        try StateFile.save(Self.stream(accounts: 30), to: json)
        // acct-9, the last account in byte order of id (after four batches of 7).
        var text = String(decoding: try FileIO.readBytes(json), as: UTF8.self)
        let last = try #require(text.range(of: #""root.chat.t4": 1"#, options: .backwards))
        text.replaceSubrange(last, with: #""root.nowhere.t4": 1"#)
        try folder.write("state.json", Array(text.utf8))
        #expect {
            try StateConversion.convert(from: json, to: other, batch: 7)
        } throws: { error in
            guard let failure = error as? StateFile.Failure else { return false }
            return failure.file == json && failure.at.hasPrefix("/accounts/acct-9/")
        }
        var st = stat()
        #expect(lstat(other, &st) != 0, "\(other) left behind")
    }

    /// One format with checkpoints to another and back keeps the committed seq and input (the resume point a
    /// queue consumer restarts from).
    @Test(arguments: Formats.checkpointingPairs)
    func aConvertedStateKeepsItsResumePoint(from: String, to: String) throws {
        let folder = try TemporaryFolder()
        let source = folder.file("state." + from), target = folder.file("state." + to)
        do {
            let store = try StateFormat.open(path: source, readOnly: false)
            defer { store.close() }
            try store.write(Self.stream(accounts: 3))
            let database = try #require(store as? any DatabaseStateStore)
            try database.recordResume(ResumePoint(seq: 6, input: "queue:orders@17"), rules: .builtIn)
        }
        try StateConversion.convert(from: source, to: target)
        let converted = try StateFormat.open(path: target, readOnly: true)
        defer { converted.close() }
        #expect(converted.resumePoint == ResumePoint(seq: 6, input: "queue:orders@17"))
        #expect(try converted.info().accounts == 3)
    }
}
