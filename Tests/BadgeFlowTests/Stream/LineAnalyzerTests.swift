import Testing
@testable import BadgeFlow

/// A new analyzer per use: tests run in parallel and an analyzer is one thread's.
private var analyzer: LineAnalyzer { LineAnalyzer(rules: .builtIn) }

private func event(_ line: String) throws -> Event {
    switch analyzer.analyze(line) {
    case .event(let e): return e
    case .rejected(let d): throw d
    case .blank: throw Diagnostic(.error, .missingField, "blank", at: "")
    }
}

private func rejection(_ line: String) -> Diagnostic? {
    if case .rejected(let d) = analyzer.analyze(line) { return d }
    return nil
}

@Suite struct LineAnalyzerTests {
    @Test(arguments: ["", "   ", "\t", "\r", " \r"])
    func blankLinesAreBlank(_ line: String) {
        guard case .blank = analyzer.analyze(line) else {
            Issue.record("\(line.debugDescription) is not blank")
            return
        }
    }

    @Test func aBarePayloadIsAPushToTheDefaultDevice() throws {
        let e = try event(#"{"aps":{"alert":"hi","badge":3,"thread-id":"alice"}}"#)
        #expect(e.op == .push)
        #expect(e.device == "")
        #expect(e.at == nil)
        #expect(e.kind == .alert)
        #expect(e.badge == 3)
        #expect(e.rule == "chat")
        #expect(e.path == "root.chat.alice")
        #expect(e.action == .increment(.literal(1)))
    }

    @Test func aPushEnvelopeCarriesDeviceTimeAndPushType() throws {
        let e = try event(#"{"op":"push","device":"ipad","at":1700000000.5,"push-type":"voip","payload":{"aps":{},"id":"x"}}"#)
        #expect(e.op == .push)
        #expect(e.device == "ipad")
        #expect(e.at == 1_700_000_000.5)
        #expect(e.kind == .voip)
    }

    @Test func payloadWarningsPointIntoTheLine() throws {
        let e = try event(#"{"op":"push","payload":{"aps":{"alert":"x","colour":1}}}"#)
        #expect(e.warnings.map(\.code) == [.unknownApsKey])
        #expect(e.warnings.first?.at == "/payload/aps/colour")
    }

    @Test func payloadErrorsRejectTheLineWithTheirPointer() {
        #expect(rejection(#"{"aps":{"badge":"3"}}"#)?.at == "/aps/badge")
        #expect(rejection(#"{"op":"push","payload":{"aps":{"badge":-1}}}"#)?.at == "/payload/aps/badge")
        #expect(rejection(#"{"op":"push","payload":{"aps":5}}"#)?.code == .apsNotAnObject)
        #expect(rejection(#"{"op":"push","payload":{"alert":"x"}}"#)?.code == .missingAps)
    }

    @Test func everyOpIsRead() throws {
        #expect(try event(#"{"op":"set","path":"root.a","count":4}"#).action == .set(.literal(4)))
        #expect(try event(#"{"op":"set","path":"root.a"}"#).action == .dot)
        #expect(try event(#"{"op":"set","path":"root.a","count":null}"#).action == .dot)
        #expect(try event(#"{"op":"clear","path":"root.a"}"#).action == .clear(force: false))
        #expect(try event(#"{"op":"clear","path":"root.a","force":true}"#).action == .clear(force: true))
        #expect(try event(#"{"op":"clear","path":"root.a"}"#).path == "root.a")
        #expect(try event(#"{"op":"appear","page":"home"}"#).page == "home")
        #expect(try event(#"{"op":"disappear","page":"mine"}"#).page == "mine")
        for op in ["login", "logout", "foreground", "background", "tick", "snapshot"] {
            let e = try event(#"{"op":""# + op + #"","device":"d1"}"#)
            #expect(e.op.rawValue == op)
            #expect(e.device == "d1")
            #expect(e.path == nil)
        }
    }

    @Test(arguments: [
        (#"{"op":"tick","at":0}"#, 0.0),
        (#"{"op":"tick","at":-5}"#, -5.0),
        (#"{"op":"tick","at":"1970-01-01T00:01:00Z"}"#, 60.0),
        (#"{"op":"tick","at":"2026-11-22T10:00:00Z"}"#, 1_795_341_600.0),
        (#"{"op":"tick","at":"2026-11-22T18:00:00+08:00"}"#, 1_795_341_600.0),
        (#"{"op":"tick","at":"2026-11-22 10:00:00.25z"}"#, 1_795_341_600.25),
    ])
    func eventTimes(_ line: String, _ seconds: Double) throws {
        #expect(try event(line).at == seconds)
    }

    @Test func aNullTimeIsNoTime() throws {
        #expect(try event(#"{"op":"tick","at":null}"#).at == nil)
    }

    @Test(arguments: [
        // (line, code, pointer)
        (#"{"op":"tick","at":"yesterday"}"#, Diagnostic.Code.invalidTime, "/at"),
        (#"{"op":"tick","at":"2026-13-01T00:00:00Z"}"#, .invalidTime, "/at"),
        (#"{"op":"tick","at":"2026-11-22T10:00:00"}"#, .invalidTime, "/at"),
        (#"{"op":"tick","at":true}"#, .invalidTime, "/at"),
        (#"{"op":"tick","at":1e400}"#, .invalidTime, "/at"),
        (#"{"op":"tick","at":99999999999999999999}"#, .invalidTime, "/at"),
        (#"{"device":"x"}"#, .missingField, "/op"),
        (#"{}"#, .missingField, "/op"),
        (#"{"op":"bump"}"#, .unknownOp, "/op"),
        (#"{"op":7}"#, .unknownOp, "/op"),
        (#"{"op":"tick","device":1}"#, .wrongType, "/device"),
        (#"{"op":"push"}"#, .missingField, "/payload"),
        (#"{"op":"push","payload":{"aps":{}},"push-type":1}"#, .wrongType, "/push-type"),
        (#"{"op":"set"}"#, .missingField, "/path"),
        (#"{"op":"set","path":["root"]}"#, .wrongType, "/path"),
        (#"{"op":"set","path":"root.a","count":-1}"#, .wrongType, "/count"),
        (#"{"op":"set","path":"root.a","count":1.5}"#, .wrongType, "/count"),
        (#"{"op":"set","path":"root.a","count":2147483648}"#, .wrongType, "/count"),
        (#"{"op":"clear"}"#, .missingField, "/path"),
        (#"{"op":"clear","path":"root.a","force":"yes"}"#, .wrongType, "/force"),
        (#"{"op":"appear"}"#, .missingField, "/page"),
        (#"{"op":"disappear","page":3}"#, .wrongType, "/page"),
        (#"[1,2]"#, .notAnObject, ""),
        (#""aps""#, .notAnObject, ""),
        (#"{"aps":{}"#, .invalidJSON, ""),
        (#"{"aps":{}} {}"#, .invalidJSON, ""),
    ])
    func badLinesAreRejectedWithCodeAndPointer(_ line: String, _ code: Diagnostic.Code, _ at: String) {
        let d = rejection(line)
        #expect(d?.code == code, "\(line)")
        #expect(d?.at == at, "\(line)")
        #expect(d?.severity == .error)
    }

    @Test func anUnparseableLineBeyondTwiceTheVoIPLimitIsTooLarge() {
        let big = #"{"aps":{"alert":""# + String(repeating: "x", count: 2 * PayloadLimits.maxVoIPBytes)
        #expect(rejection(big)?.code == .payloadTooLarge)
        let small = #"{"aps":{"alert":""# + String(repeating: "x", count: 4000)
        #expect(rejection(small)?.code == .invalidJSON)
    }

    @Test func aTooLargePayloadIsRejectedButAVoIPOneMayBeLarger() {
        let alert = String(repeating: "x", count: 4500)
        #expect(rejection(#"{"aps":{"alert":""# + alert + #""}}"#)?.code == .payloadTooLarge)
        #expect(rejection(#"{"op":"push","push-type":"voip","payload":{"aps":{},"x":""# + alert + #""}}"#) == nil)
    }

    @Test func anEnvelopedPayloadIsMeasuredCompactWhateverItsLine() throws {
        // A line over the limit whose payload is small once compact (a long account, a
        // spread-out payload) is accepted: only the payload counts, as sent.
        let account = String(repeating: "a", count: 5000)
        #expect(rejection(#"{"op":"push","account":""# + account + #"","payload":{"aps":{"alert":"hi"}}}"#) == nil)
        let spread = "{ \"aps\" : { \"alert\" : \"hi\" }" + String(repeating: " ", count: 5000) + "}"
        #expect(rejection(#"{"op":"push","payload":"# + spread + "}") == nil)
        // One over the limit is reported by its compact size, however it is written.
        let payload = #"{"aps":{},"x":""# + String(repeating: "x", count: 4500) + #""}"#
        let written = "{ \"aps\" : { } , \"x\" : \"" + String(repeating: "x", count: 4500) + "\" }"
        for text in [payload, written] {
            let d = try #require(rejection(#"{"op":"push","payload":"# + text + "}"))
            #expect(d.code == .payloadTooLarge && d.at == "/payload")
            #expect(d.message == "payload is \(payload.utf8.count) bytes, more than the 4096 bytes APNs accepts")
        }
    }

    @Test func analysisDependsOnlyOnTheLine() throws {
        // The same line twice gives the same event (the reused tokener keeps no state).
        let line = #"{"aps":{"alert":"hi","thread-id":"bob"},"x":[1,2,{"y":"z"}]}"#
        let shared = LineAnalyzer(rules: .builtIn)
        func once() -> Event? { if case .event(let e) = shared.analyze(line) { return e } else { return nil } }
        _ = shared.analyze(#"{"aps":{"alert":"#)  // leave the tokener mid-document
        let a = try #require(once()), b = try #require(once())
        #expect(a.path == b.path && a.rule == b.rule && a.kind == b.kind && a.action == b.action)
    }
}
