import Testing
@testable import BadgeFlow

/// Live Activity required keys, push types and size on the compact form.
@Suite struct PayloadGateTests {
    let validator = PayloadValidator()

    private func codes(_ text: String, pushType: String? = nil) -> [String] {
        validator.validate(text, pushType: pushType).diagnostics.map { "\($0.severity.rawValue):\($0.code.rawValue)@\($0.at)" }
    }

    // MARK: Live Activities

    @Test(arguments: [
        (#"{"aps":{"event":"update","content-state":{}}}"#, ["error:missing-key@/aps/timestamp"]),
        (#"{"aps":{"event":"update","timestamp":1}}"#, ["error:missing-key@/aps/content-state"]),
        (#"{"aps":{"event":"end"}}"#, ["error:missing-key@/aps/timestamp"]),
        (#"{"aps":{"event":"end","timestamp":1}}"#, []),
        (
            #"{"aps":{"event":"start","timestamp":1,"content-state":{}}}"#,
            ["error:missing-key@/aps/attributes-type", "error:missing-key@/aps/attributes", "error:missing-key@/aps/alert"]
        ),
        (#"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"alert":"a"}}"#, []),
        (
            #"{"aps":{"event":"update","timestamp":1770051103239,"content-state":{}}}"#,
            ["warning:timestamp-in-milliseconds@/aps/timestamp"]
        ),
        (#"{"aps":{"event":"update","timestamp":100000000000,"content-state":{}}}"#, []),
        (#"{"aps":{"event":"pause"}}"#, ["error:invalid-value@/aps/event"]),
    ])
    func liveActivityVerdicts(_ text: String, _ expected: [String]) {
        #expect(codes(text) == expected)
    }

    @Test func aMissingKeyMakesThePayloadInvalid() {
        let r = validator.validate(#"{"aps":{"event":"update"}}"#)
        #expect(!r.isValid)
        #expect(r.kind == nil)
    }

    // MARK: push types

    @Test(arguments: [
        ("background", #"{"aps":{"content-available":1}}"#, [String]()),
        ("background", #"{"aps":{"alert":"a","badge":1}}"#, ["warning:push-type-mismatch@/aps"]),
        ("background", #"{"aps":{"sound":"default"}}"#, ["warning:push-type-mismatch@/aps"]),
        ("alert", #"{"aps":{"content-available":1}}"#, ["warning:push-type-mismatch@/aps"]),
        ("alert", #"{"aps":{"badge":1}}"#, []),
        ("liveactivity", #"{"aps":{"alert":"a"}}"#, ["warning:push-type-mismatch@/aps/event"]),
        ("liveactivity", #"{"aps":{"event":"end","timestamp":1}}"#, []),
        ("alert", #"{"aps":{"event":"end","timestamp":1}}"#, ["warning:push-type-mismatch@/aps/event"]),
        ("voip", #"{"aps":{"event":"end","timestamp":1}}"#, ["warning:push-type-mismatch@/aps/event"]),
        ("banana", #"{"aps":{"alert":"a"}}"#, ["error:invalid-value@/push-type"]),
        ("location", #"{"aps":{}}"#, []),
        ("mdm", #"{"mdm":"B4D0E2A5"}"#, []),
        ("fileprovider", #"{"container-identifier":"NSFileProviderRootContainerItemIdentifier"}"#, []),
        ("widgets", #"{"aps":{"content-changed":true}}"#, []),
    ])
    func pushTypeVerdicts(_ pushType: String, _ text: String, _ expected: [String]) {
        #expect(codes(text, pushType: pushType) == expected)
    }

    @Test func anEnvelopePushTypeIsChecked() {
        var line = #"{"op":"push","push-type":"background","payload":{"aps":{"alert":"a"}}}"#
        let r = line.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0)) }
        #expect(r.diagnostics.map(\.code) == [.pushTypeMismatch])
        #expect(r.diagnostics.first?.at == "/payload/aps")
        var bad = #"{"op":"push","push-type":7,"payload":{"aps":{"alert":"a"}}}"#
        let b = bad.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0)) }
        #expect(b.diagnostics.map(\.code) == [.wrongType])
        #expect(b.diagnostics.first?.at == "/push-type")
    }

    @Test func theEnvelopeWinsOverTheDefaultPushType() {
        var line = #"{"op":"push","push-type":"alert","payload":{"aps":{"alert":"a"}}}"#
        let r = line.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0), pushType: "background") }
        #expect(r.diagnostics.isEmpty)
        var bare = #"{"aps":{"alert":"a"}}"#
        let b = bare.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0), pushType: "background") }
        #expect(b.diagnostics.map(\.code) == [.pushTypeMismatch])
    }

    @Test func theFilterChecksAnEnvelopesPushType() {
        var session = FilterSession(rules: .builtIn)
        session.feed(#"{"op":"push","push-type":"banana","payload":{"aps":{"alert":"a"}}}"#)
        let out = String(decoding: session.output.bytes, as: UTF8.self)
        #expect(out.contains(#""code":"invalid-value""#) && out.contains(#""at":"/push-type""#), "\(out)")
    }

    // MARK: size

    /// A payload of about `bytes` compact bytes, pretty-printed with `indent` spaces a line.
    private func padded(compact bytes: Int, pretty: Bool) -> String {
        let head = #"{"aps":{"alert":"hi"},"k":""#
        let filler = String(repeating: "x", count: bytes - head.utf8.count - 2)
        let compact = head + filler + "\"}"
        guard pretty else { return compact }
        return "{\n    \"aps\": {\n        \"alert\": \"hi\"\n    },\n    \"k\": \"" + filler + "\"\n" + String(repeating: " ", count: 1000)
            + "}\n"
    }

    @Test func sizeIsTheCompactForms() {
        let pretty = padded(compact: 4000, pretty: true)
        #expect(pretty.utf8.count > 4096)
        #expect(validator.validate(pretty).isValid)
        var line = pretty
        #expect(line.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0)) }.isValid)
        let big = padded(compact: 4200, pretty: true)
        let r = validator.validate(big)
        #expect(r.diagnostics.map(\.code) == [.payloadTooLarge])
        #expect(r.diagnostics.first?.message.contains("4200 bytes") == true, "\(r.diagnostics)")
        var bigLine = big
        let l = bigLine.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0)) }
        #expect(l.diagnostics.first?.message.contains("4200 bytes compact") == true, "\(l.diagnostics)")
    }

    @Test func aPrettyTemplatePassesTheFilterWhenItsCompactFormFits() {
        var session = FilterSession(rules: .builtIn)
        session.feed(padded(compact: 4000, pretty: true))
        #expect(!String(decoding: session.output.bytes, as: UTF8.self).contains("payload-too-large"))
    }

    @Test func compactCountSkipsWhitespaceOutsideStrings() {
        var text = "{ \"a b\" : [ 1 , \"\\\" x\" ] }\n"
        let n = text.withUTF8 { PayloadValidator.compactCount(UnsafeRawBufferPointer($0)) }
        #expect(n == #"{"a b":[1,"\" x"]}"#.utf8.count)
    }
}
