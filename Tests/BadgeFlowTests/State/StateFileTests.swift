import BadgeFlowTestSupport
import Testing
@testable import BadgeFlow

private let events = [
    #"{"op":"login","at":"2026-11-22T10:00:00Z"}"#,
    #"{"op":"appear","page":"home"}"#,
    #"{"aps":{"alert":"hi","thread-id":"alice"}}"#,
    #"{"aps":{"alert":"hi","thread-id":"a.b%"}}"#,
    #"{"op":"push","device":"ipad","at":1795341700.5,"payload":{"aps":{"alert":"x","category":"sport"}}}"#,
    #"{"op":"set","device":"ipad","path":"root.news"}"#,
    #"{"op":"disappear","page":"home","at":1795341800}"#,
    #"{"op":"background","device":"ipad"}"#,
]

private let later = [
    #"{"op":"appear","page":"home","at":1795341900}"#,
    #"{"op":"tick","device":"ipad","at":1795342000}"#,
    #"{"op":"clear","path":"root.chat","force":true}"#,
    #"{"op":"snapshot","device":"ipad"}"#,
]

private func session(_ lines: [String], stream: BadgeStream? = nil, rules: RuleSet = .builtIn) -> FilterSession {
    var s = stream.map { FilterSession(stream: $0) } ?? FilterSession(rules: rules)
    for line in lines { s.feed(line) }
    return s
}

private func text(_ s: FilterSession) -> String { String(decoding: s.output.bytes, as: UTF8.self) }

@Suite struct StateFileTests {
    @Test func aSavedStateLoadsBackTheSame() throws {
        let folder = try TemporaryFolder()
        let file = folder.file("state.json")
        let before = session(events).stream
        try StateFile.save(before, to: file)
        let after = try StateFile.load(file, rules: .builtIn)
        #expect(try StateFile.text(after) == StateFile.text(before))
        #expect(after.accounts[""]?.clock == 1_795_341_800)
        #expect(after.accounts["ipad"]?.clock == 1_795_341_700.5)
        #expect(after.accounts["ipad"]?.tree.mark(of: "root.news") == .dot)
        #expect(after.accounts[""]?.tree.mark(of: "root.chat.a%2Eb%25") == .count(1))
        #expect(after.device("")?.sync.loggedIn == true)
        #expect(after.device("ipad")?.sync.foreground == false)
    }

    /// A saved file is byte for byte `encode(stream).serialized(pretty: true)`, times with a
    /// fraction included: json-c's `%.17g`, as state files have always held them (the file is
    /// written account by account, each laid out by json-c from the account's own JSON).
    @Test func aSavedFileIsTheEncodedStreamWithFractionalTimes() throws {
        let folder = try TemporaryFolder()
        let file = folder.file("state.json")
        let lines =
            events + [
                #"{"op":"push","device":"ipad","at":"2026-11-23T09:12:00.123Z","payload":{"aps":{"alert":"y","thread-id":"t"}}}"#,
                #"{"op":"tick","device":"ipad","at":1795425200.1}"#,
            ]
        let stream = session(lines).stream
        try StateFile.save(stream, to: file)
        let saved = String(decoding: try FileIO.readBytes(file), as: UTF8.self)
        #expect(saved == (try StateFile.text(stream)))
        // The bytes json-c gives for the whole document, laid out account by account.
        #expect(saved == (try JSONValue.parse(saved)).serialized(pretty: true) + "\n")
        #expect(saved.contains(#""at": 1795425120.1229999"#), "\(saved)")
        #expect(saved.contains(#""clock": 1795425200.0999999"#), "\(saved)")
        let loaded = try StateFile.load(file, rules: .builtIn)
        #expect(loaded.accounts["ipad"]?.clock == 1_795_425_200.1)
        #expect(try StateFile.text(loaded) == StateFile.text(stream))
    }

    /// A file read front to back, account by account (mapped, its pages given back as it
    /// goes), a file with its members in another order (the whole-document path), and
    /// devices that leave out their default values (as SQLite rows do) load the same.
    @Test func memberOrderAndLeftOutDefaultsLoadTheSame() throws {
        let folder = try TemporaryFolder()
        let account = #"{"clock": 5, "marks": {"root.x": 2}, "devices": {"d": {"delivered": 2}}}"#
        let full =
            #"{"clock": 5, "marks": {"root.x": 2}, "devices": {"d": {"icon": 0, "delivered": 2, "sync": {"loggedIn": false, "foreground": true, "visible": [], "appeared": [], "disappearedAt": {}, "intervalStart": 0}}}}"#
        let usual = try folder.write(
            "usual.json", Array(#"{"format": "badgeflow-state", "version": 2, "accounts": {"a": \#(account)}}"#.utf8))
        let reordered = try folder.write(
            "reordered.json", Array(#"{"accounts": {"a": \#(full)}, "version": 2, "format": "badgeflow-state"}"#.utf8))
        let a = try StateFile.load(usual, rules: .builtIn), b = try StateFile.load(reordered, rules: .builtIn)
        let encoded = try #require(a.accounts["a"].map { StateFile.encodeAccount($0) })
        #expect(encoded == b.accounts["a"].map { StateFile.encodeAccount($0) })
        #expect(a.device("d", account: "a")?.delivered == 2 && a.device("d", account: "a")?.sync.foreground == true)
        // Many accounts, more than one step of pages given back.
        var big = #"{"format": "badgeflow-state", "version": 2, "accounts": {"#
        for i in 0..<60_000 { big += (i == 0 ? "" : ", ") + #""a\#(i)": \#(full)"# }
        let many = try folder.write("many.json", Array((big + "}}\n").utf8))
        let loaded = try StateFile.load(many, rules: .builtIn)
        #expect(loaded.accounts.count == 60_000)
        #expect(loaded.accounts["a59999"].map { StateFile.encodeAccount($0) } == encoded)
    }

    @Test func aLoadedStateGoesOnAsIfNeverStopped() throws {
        let folder = try TemporaryFolder()
        let file = folder.file("state.json")
        try StateFile.save(session(events).stream, to: file)
        let resumed = session(later, stream: try StateFile.load(file, rules: .builtIn))
        let straight = session(events + later)
        let tail = text(straight).split(separator: "\n").suffix(later.count)
        // The same results but for seq, which counts the lines of each run.
        func unsequenced(_ s: some Sequence<Substring>) -> [String] {
            s.map { $0.drop(while: { $0 != "," }).description }
        }
        #expect(unsequenced(text(resumed).split(separator: "\n")) == unsequenced(tail))
        #expect(text(resumed).contains(#""sync":{"reason":"returned"}"#))
    }

    @Test func accountsTheirDevicesAndDeliveredNumbersAreKept() throws {
        let folder = try TemporaryFolder()
        let file = folder.file("state.json")
        let lines = [
            #"{"op":"login","account":"A","device":"phone","at":100}"#,
            #"{"op":"push","account":"A","device":"ipad","payload":{"aps":{"alert":"x","thread-id":"bob"}}}"#,
            #"{"op":"set","account":"A","device":"phone","path":"root.news"}"#,
            #"{"op":"tick","device":"tv","at":7}"#,
        ]
        let before = session(lines).stream
        try StateFile.save(before, to: file)
        let after = try StateFile.load(file, rules: .builtIn)
        #expect(try StateFile.text(after) == StateFile.text(before))
        #expect(after.accounts.keys.sorted() == ["A", "tv"])
        #expect(after.accounts["A"]?.clock == 100)
        #expect(after.accounts["A"]?.tree.total == 1)
        #expect(after.accounts["A"]?.devices.mapValues(\.delivered) == ["phone": 1, "ipad": 1])
        #expect(after.device("phone", account: "A")?.sync.loggedIn == true)
        #expect(after.accounts["tv"]?.clock == 7)
        #expect(try FileIO.readString(file).contains(#""version": 2"#))
        // The next run goes on from the saved state: one more message, the phone is owed 2.
        let more = text(
            session(
                [#"{"op":"push","account":"A","device":"ipad","payload":{"aps":{"alert":"x","thread-id":"bob"}}}"#],
                stream: after))
        #expect(more.contains(#""icon":2,"badgeUpdates":[{"device":"phone","badge":2}]"#))
    }

    @Test func thePayloadIconIsKept() throws {
        let rules = try RuleSet.parse(#"{"icon":"payload"}"#)
        let folder = try TemporaryFolder()
        let file = folder.file("s.json")
        try StateFile.save(session([#"{"aps":{"badge":7}}"#], rules: rules).stream, to: file)
        #expect(try StateFile.load(file, rules: rules).device("")?.payloadIcon == 7)
    }

    /// `only` loads the named accounts alone, each the same as a whole load gives it; ids
    /// written with escapes or outside ASCII are read by json-c before they are compared.
    @Test func onlyLoadsTheNamedAccountsAsAWholeLoadDoes() throws {
        let folder = try TemporaryFolder()
        let file = try folder.write(
            "s.json",
            Array(
                #"""
                {"format":"badgeflow-state","version":2,"accounts":{
                  "a":{"clock":5,"marks":{"root.a":2},"devices":{"d":{"delivered":2}}},
                  "\u0062":{"clock":6,"marks":{"root.b":"dot"},"devices":{}},
                  "é":{"clock":7,"marks":{"root.c":3},"devices":{}},
                  "x\"y":{"clock":8,"marks":{},"devices":{}},
                  "c":{"clock":9,"marks":{"root.d":1},"devices":{}}}}
                """#.utf8))
        let whole = try StateFile.load(file, rules: .builtIn)
        #expect(whole.accountCount == 5)
        for wanted: Set<String> in [["a"], ["b"], ["é"], ["x\"y"], ["a", "c"], ["b", "é", "missing"], []] {
            let some = try StateFile.load(file, rules: .builtIn, only: wanted)
            #expect(Set(some.accountIDs) == wanted.intersection(whole.accountIDs), "\(wanted)")
            for id in some.accountIDs {
                let one = try #require(try some.account(id)), all = try #require(try whole.account(id))
                #expect(StateFile.encodeAccount(one) == StateFile.encodeAccount(all))
            }
        }
        // A damaged account that is skipped is not read; one that is asked for still fails.
        let damaged = try folder.write(
            "d.json",
            Array(
                #"{"format":"badgeflow-state","version":2,"accounts":{"a":{"marks":{},"devices":{}},"z":{"marks":{"root.q":-4},"devices":{}}}}"#
                    .utf8))
        #expect(try StateFile.load(damaged, rules: .builtIn, only: ["a"]).accountIDs == ["a"])
        #expect(throws: StateFile.Failure.self) { _ = try StateFile.load(damaged, rules: .builtIn, only: ["z"]) }
        // A syntax error in an account that is skipped is still the file's error.
        for bad in [#"{]"#, #"{"marks": }"#, #"tru"#] {
            let broken = try folder.write(
                "b.json", Array(#"{"format":"badgeflow-state","version":2,"accounts":{"a":{"marks":{},"devices":{}},"z":\#(bad)}}"#.utf8))
            let failure = #expect(throws: StateFile.Failure.self) { _ = try StateFile.load(broken, rules: .builtIn, only: ["a"]) }
            #expect(failure?.message.contains("not valid JSON") == true, "\(bad): \(failure?.message ?? "")")
        }
    }

    /// The rules of a file with many accounts are found by a scan that checks the whole file
    /// is well-formed, as before; a file cut short falls back to the whole-document path.
    @Test func recordedRulesScanTheAccountsAndRefuseACutFile() throws {
        let rules = try RuleSet.parse(#"{"root":"app"}"#)
        var stream = BadgeStream(rules: rules)
        for i in 0..<300 { stream.table["acc\(i)"] = Account(rules: rules) }
        let folder = try TemporaryFolder()
        let file = folder.file("s.json")
        try StateFile.save(stream, to: file)
        #expect(try StateFile.recordedRules(file)?.fingerprint == rules.fingerprint)
        let bytes = try FileIO.readBytes(file)
        let cut = try folder.write("cut.json", Array(bytes.dropLast(3)))
        #expect(throws: StateFile.Failure.self) { _ = try StateFile.recordedRules(cut) }
    }

    @Test func aMissingFileIsAnEmptyState() throws {
        let folder = try TemporaryFolder()
        let stream = try StateFile.load(folder.file("none.json"), rules: .builtIn)
        #expect(stream.accounts.isEmpty)
    }

    /// StateFileFormat: a 0-byte (or whitespace-only) state file is not a state, never a new empty one.
    @Test(arguments: ["", "\n", "  \r\n"])
    func anEmptyFileIsNotAState(_ content: String) throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("state.json", Array(content.utf8))
        let load = #expect(throws: StateFile.Failure.self) { _ = try StateFile.load(file, rules: .builtIn) }
        #expect(load?.message.hasPrefix("not a BadgeFlow state: empty file") == true, "\(load?.message ?? "")")
        #expect(throws: StateFile.Failure.self) { _ = try StateFile.recordedRules(file) }
    }

    @Test func theRulesAreRecordedAndComeBackTheSame() throws {
        let rules = try RuleSet.parse(#"{"root":"app","maxDisplay":9,"display":{"app.x":"dot"}}"#)
        let folder = try TemporaryFolder()
        let file = folder.file("s.json")
        try StateFile.save(BadgeStream(rules: rules), to: file)
        let recorded = try #require(try StateFile.recordedRules(file))
        #expect(recorded.fingerprint == rules.fingerprint)
        #expect(recorded.tree.root == "app")
        #expect(recorded.tree.maxDisplay == 9)
        #expect(recorded.fingerprint != RuleSet.builtIn.fingerprint)
    }

    @Test func aFileWithoutRecordedRulesStillLoads() throws {
        let folder = try TemporaryFolder()
        let file = try folder.write(
            "s.json", Array(#"{"format":"badgeflow-state","version":2,"accounts":{"":{"marks":{"root.a":2},"devices":{}}}}"#.utf8))
        #expect(try StateFile.recordedRules(file) == nil)
        #expect(try StateFile.load(file, rules: .builtIn).accounts[""]?.tree.mark(of: "root.a") == .count(2))
    }

    @Test(arguments: [
        // (content, pointer, says)
        ("{\"devices\":", "", "not valid JSON"),
        ("{\n  \"format\": x", "", "at line 2, column 13 (byte 14)"),
        (#"{"rules":[]}"#, "/format", "not a BadgeFlow state file"),
        (#"{"format":"badgeflow-state","version":3,"accounts":{}}"#, "/version", "not supported"),
        (#"{"format":"badgeflow-state","version":2,"devices":{}}"#, "/accounts", "object"),
        (#"{"format":"badgeflow-state","version":2,"accounts":{"A":{"marks":{},"devices":[]}}}"#, "/accounts/A/devices", "object"),
        (
            #"{"format":"badgeflow-state","version":2,"accounts":{"A":{"marks":{},"clock":"x","devices":{}}}}"#, "/accounts/A/clock",
            "number"
        ),
        (
            #"{"format":"badgeflow-state","version":2,"accounts":{"A":{"marks":{},"devices":{"d":{"delivered":-1}}}}}"#,
            "/accounts/A/devices/d/delivered", "non-negative"
        ),
        // The last format and version decide, also when they come after the accounts.
        (#"{"format":"badgeflow-state","version":2,"accounts":{"a":{"marks":{},"devices":{}}},"version":3}"#, "/version", "not supported"),
        (#"{"format":"badgeflow-state","version":2,"accounts":{},"format":"other"}"#, "/format", "not a BadgeFlow state file"),
        // A damaged account in a file cut short: the file's error, not the account's.
        (#"{"format":"badgeflow-state","version":2,"accounts":{"a":{"marks":{"root.x":-1},"devices":{}},"b":{"#, "", "not valid JSON"),
        // Version 1 (one tree per device) was written only by pre-release builds.
        (
            #"{"format":"badgeflow-state","version":1,"devices":{}}"#, "/version",
            "state version 1 is not supported; this BadgeFlow reads version 2"
        ),
        (
            #"{"format":"badgeflow-state","version":2,"accounts":{"":{"marks":{"root.a":0},"devices":{}}}}"#,
            "/accounts//marks/root.a", "1 or more"
        ),
        (
            #"{"format":"badgeflow-state","version":2,"accounts":{"":{"marks":{"app.a":1},"devices":{}}}}"#,
            "/accounts//marks/app.a", "other rules"
        ),
        (
            #"{"format":"badgeflow-state","version":2,"accounts":{"":{"marks":{},"devices":{"d/1":{"icon":-1}}}}}"#,
            "/accounts//devices/d~11/icon", "non-negative"
        ),
        (
            #"{"format":"badgeflow-state","version":2,"accounts":{"":{"marks":{},"devices":{"d":{"sync":{"loggedIn":"yes"}}}}}}"#,
            "/accounts//devices/d/sync/loggedIn", "true or false"
        ),
        (
            #"{"format":"badgeflow-state","version":2,"accounts":{"":{"marks":{},"devices":{"d":{"sync":{"visible":"home"}}}}}}"#,
            "/accounts//devices/d/sync/visible", "array of page names"
        ),
    ])
    func aCorruptOrForeignFileFailsAndIsLeftUntouched(_ content: String, _ at: String, _ says: String) throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("state.json", Array(content.utf8))
        let failure = #expect(throws: StateFile.Failure.self) { _ = try StateFile.load(file, rules: .builtIn) }
        #expect(failure?.file == file)
        #expect(failure?.at == at)
        #expect(failure?.message.contains(says) == true, "\(failure?.message ?? "")")
        #expect(try FileIO.readBytes(file) == Array(content.utf8))
    }

    @Test func savingReplacesTheFileAndLeavesNoTemporaryFile() throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("state.json", Array("old".utf8))
        try StateFile.save(session(events).stream, to: file)
        #expect(try folder.names() == ["state.json"])
        let text = try FileIO.readString(file)
        #expect(text.hasPrefix("{"))
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains(#""format": "badgeflow-state""#) || text.contains(#""format":"badgeflow-state""#))
    }

    @Test func savingIntoAMissingFolderFailsWithoutTouchingAnything() throws {
        let folder = try TemporaryFolder()
        #expect(throws: FileIO.Failure.self) {
            try StateFile.save(BadgeStream(rules: .builtIn), to: folder.file("no/such/state.json"))
        }
        #expect(try folder.names().isEmpty)
    }

    @Test func theFileIsDeterministic() throws {
        let a = try StateFile.text(session(events).stream)
        let b = try StateFile.text(session(events).stream)
        #expect(a == b)
    }

    /// The file is written one account at a time; its text is still exactly the whole
    /// document's pretty JSON (with account ids that need escaping, several devices and
    /// empty pages lists).
    @Test func theStreamedFileIsTheWholeDocumentsPrettyText() throws {
        let folder = try TemporaryFolder()
        let file = folder.file("state.json")
        var lines = events + later
        lines.append(#"{"op":"push","account":"q\"u/o\u00e9","device":"d1","payload":{"aps":{"alert":"x","thread-id":"t"}}}"#)
        lines.append(#"{"op":"login","account":"q\"u/o\u00e9","device":"d2"}"#)
        let stream = session(lines).stream
        #expect(stream.accounts.count == 3)
        try StateFile.save(stream, to: file)
        let written = try FileIO.readString(file)
        #expect(try StateFile.text(stream) == written)
        try StateFile.save(BadgeStream(rules: .builtIn), to: file)
        #expect(try FileIO.readString(file) == StateFile.text(BadgeStream(rules: .builtIn)))
    }
}
