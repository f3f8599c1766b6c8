import Testing

@testable import BadgeFlow

/// The op registry (`Stream/Ops/EventOp.swift`) and what is derived from it: each op's
/// result text, the `unknown-op` message and the docs' table of ops.
@Suite struct EventOpTests {
    /// The repository root, found from this file's location.
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        // …/Tests/BadgeFlowTests/Stream/Ops/EventOpTests.swift → …
        parts.removeLast(5)
        return parts.joined(separator: "/")
    }()

    @Test(arguments: Event.Op.allCases)
    func resultTextNamesTheOp(_ op: Event.Op) {
        let text = op.resultFragment.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        #expect(text == #","op":""# + op.rawValue + #"","device":"#)
    }

    /// The message lists what each op's definition says, and keeps its bytes: the ops added
    /// after `snapshot`, but `contribute`, are not in it.
    @Test func unknownOpMessageListsTheOpsTheDefinitionsName() throws {
        #expect(
            Event.Op.namedWhenUnknown == [
                .push, .set, .clear, .login, .logout, .foreground, .background, .appear, .disappear, .tick, .snapshot, .contribute,
            ])
        guard case .rejected(let d) = LineAnalyzer(rules: .builtIn).analyze(#"{"op":"jump"}"#) else {
            Issue.record("an unknown op was accepted")
            return
        }
        let names = Event.Op.namedWhenUnknown.map(\.rawValue).joined(separator: ", ")
        #expect(d.code == .unknownOp)
        #expect(d.message == #"unknown op string "jump"; expected one of "# + names)
    }

    /// Every op has a row in the table of ops of the event-lines article.
    @Test(arguments: Event.Op.allCases)
    func eventLinesDocumentsTheOp(_ op: Event.Op) throws {
        let text = try FileIO.readString(Self.root + "/Sources/BadgeFlow/BadgeFlow.docc/EventLines.md")
        let firstCells = text.split(separator: "\n").filter { $0.hasPrefix("| `") }.map {
            $0.split(separator: "|", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        }
        #expect(firstCells.contains { $0.contains("`\(op.rawValue)`") })
    }
}
