import Testing
@testable import BadgeFlow

@Suite struct PayloadValidatorTests {
    private let validator = PayloadValidator()

    private func codes(_ text: String, pushType: String? = nil) -> [String] {
        validator.validate(text, pushType: pushType).diagnostics.map { "\($0.severity.rawValue):\($0.code.rawValue)@\($0.at)" }
    }

    // MARK: one test per error and warning code

    @Test(arguments: [
        (#"{"aps":"#, "error:invalid-json@"),
        (#"[1,2]"#, "error:not-an-object@"),
        (#"{"custom":1}"#, "error:missing-aps@/aps"),
        (#"{"aps":"hello"}"#, "error:aps-not-an-object@/aps"),
        (#"{"aps":{"badge":"99+"}}"#, "error:wrong-type@/aps/badge"),
        (#"{"aps":{"badge":3.5}}"#, "error:wrong-type@/aps/badge"),
        (#"{"aps":{"badge":true}}"#, "error:wrong-type@/aps/badge"),
        (#"{"aps":{"badge":-1}}"#, "error:out-of-range@/aps/badge"),
        (#"{"aps":{"badge":2147483648}}"#, "error:out-of-range@/aps/badge"),
        (#"{"aps":{"badge":99999999999999999999}}"#, "error:out-of-range@/aps/badge"),
        (#"{"aps":{"sound":{"name":"a.caf","volume":1.5}}}"#, "error:out-of-range@/aps/sound/volume"),
        (#"{"aps":{"sound":{"critical":2}}}"#, "error:out-of-range@/aps/sound/critical"),
        (#"{"aps":{"alert":"x","relevance-score":2}}"#, "error:out-of-range@/aps/relevance-score"),
        (#"{"aps":{"alert":"x","interruption-level":"urgent"}}"#, "error:invalid-value@/aps/interruption-level"),
        (#"{"aps":{"event":"pause"}}"#, "error:invalid-value@/aps/event"),
        (#"{"aps":{"alert":{"loc-key":"K","loc-args":["a",2]}}}"#, "error:wrong-type@/aps/alert/loc-args/1"),
        (#"{"aps":{"alert":{"title":{"loc-key":"K"}}}}"#, "error:wrong-type@/aps/alert/title"),
        (#"{"aps":{"content-available":"1"}}"#, "error:wrong-type@/aps/content-available"),
        (#"{"aps":{"alert":"x","input-push-token":2}}"#, "error:out-of-range@/aps/input-push-token"),
        (#"{"aps":{"alert":"x","foo":1}}"#, "warning:unknown-aps-key@/aps/foo"),
        (#"{"aps":{"alert":"x","a/b":1}}"#, "warning:unknown-aps-key@/aps/a~1b"),
        (#"{"aps":{"alert":""}}"#, "warning:empty-alert@/aps/alert"),
        (#"{"aps":{"alert":{"launch-image":"x.png"}}}"#, "warning:empty-alert@/aps/alert"),
        // The documented keys keep their types.
        (#"{"aps":{"url-args":"args"}}"#, "error:wrong-type@/aps/url-args"),
        (#"{"aps":{"url-args":["a",2]}}"#, "error:wrong-type@/aps/url-args/1"),
        (#"{"aps":{"alert":{"body":"b","action":7}}}"#, "error:wrong-type@/aps/alert/action"),
        (#"{"aps":{"alert":{"body":"b","summary-arg":["a"]}}}"#, "error:wrong-type@/aps/alert/summary-arg"),
        (#"{"aps":{"alert":{"body":"b","summary-arg-count":"3"}}}"#, "error:wrong-type@/aps/alert/summary-arg-count"),
        (#"{"aps":{"alert":{"body":"b","summary-arg-count":1.5}}}"#, "error:wrong-type@/aps/alert/summary-arg-count"),
        (#"{"aps":{"alert":{"body":"b","summary-arg-count":-1}}}"#, "error:out-of-range@/aps/alert/summary-arg-count"),
        (#"{"aps":{"alert":{"body":"b","action-loc-key":false}}}"#, "error:wrong-type@/aps/alert/action-loc-key"),
        (#"{"aps":{"alert":{"body":"b","action":"View"},"x/y":1}}"#, "warning:unknown-aps-key@/aps/x~1y"),
        (
            #"{"aps":{"event":"update","timestamp":1,"content-state":{},"alert":{"title":{"loc-key":1}}}}"#,
            "error:wrong-type@/aps/alert/title/loc-key"
        ),
        (
            #"{"aps":{"event":"update","timestamp":1,"content-state":{},"alert":{"body":{"loc-key":"K","loc-args":[1]}}}}"#,
            "error:wrong-type@/aps/alert/body/loc-args/0"
        ),
        (
            #"{"aps":{"event":"update","timestamp":1,"content-state":{},"alert":{"body":{"loc-key":"K","args":[]}}}}"#,
            "warning:unknown-aps-key@/aps/alert/body/args"
        ),
        (
            #"{"aps":{"event":"update","timestamp":1,"content-state":{},"alert":{"body":"b","sound":{"name":"a.caf","volume":2}}}}"#,
            "error:out-of-range@/aps/alert/sound/volume"
        ),
        (#"{"aps":{"alert":{"body":"b","sound":"a.caf"}}}"#, "warning:unknown-aps-key@/aps/alert/sound"),
        (#"{"aps":{"sound":{"name":"a.caf","loudness":1}}}"#, "warning:unknown-aps-key@/aps/sound/loudness"),
        (#"{"aps":{"sound":{"name":7}}}"#, "error:wrong-type@/aps/sound/name"),
        (
            #"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"alert":"a","input-push-token":1,"input-push-channel":7}}"#,
            "error:wrong-type@/aps/input-push-channel"
        ),
        (#"{"aps":{"event":"end","timestamp":1,"dismissal-date":"soon"}}"#, "error:wrong-type@/aps/dismissal-date"),
        (
            #"{"aps":{"event":"start","timestamp":1,"content-state":{},"alert":"a","attributes-type":{},"attributes":{}}}"#,
            "error:wrong-type@/aps/attributes-type"
        ),
        (#"{"aps":{"alert":"x","filter-criteria":1}}"#, "error:wrong-type@/aps/filter-criteria"),
        (#"{"aps":{"content-changed":1}}"#, "error:wrong-type@/aps/content-changed"),
    ])
    func reportsEachProblemWithItsCodeAndPointer(_ text: String, _ expected: String) {
        #expect(codes(text) == [expected])
    }

    @Test(arguments: [
        #"{"aps":{"url-args":["boarding","A998"]}}"#,
        #"{"aps":{"alert":{"title":"Flight A998 Now Boarding","body":"Boarding has begun","action":"View"},"url-args":["boarding","A998"]}}"#,
        #"{"aps":{"alert":{"body":"what","action-loc-key":null}}}"#,
        #"{"aps":{"alert":{"body":"what","action-loc-key":"PLAY"}}}"#,
        #"{"aps":{"alert":{"title":"t","body":"b","summary-arg":"Robert","summary-arg-count":0}}}"#,
        #"{"aps":{"alert":{"subtitle-loc-key":"SUB","subtitle-loc-args":["a"]}}}"#,
        #"{"aps":{"event":"end","timestamp":1,"dismissal-date":2,"content-state":{}}}"#,
        #"{"aps":{"event":"start","timestamp":1,"attributes-type":"A","attributes":{},"content-state":{},"input-push-token":1,"alert":"a"}}"#,
        #"{"aps":{"event":"update","timestamp":1,"content-state":{},"alert":{"title":{"loc-key":"T","loc-args":[]},"body":{"loc-key":"B"},"sound":{"name":"a.caf","critical":1,"volume":0.5}}}}"#,
        #"{"aps":{"alert":"x","filter-criteria":"work","relevance-score":0.5,"target-content-id":"w"}}"#,
        #"{"aps":{"content-changed":true}}"#,
    ])
    func acceptsEveryDocumentedKeyWithItsType(_ text: String) {
        #expect(codes(text) == [])
    }

    @Test func subtitleLocKeyAloneIsAlertText() {
        #expect(codes(#"{"aps":{"alert":{"subtitle-loc-key":"SUB"}}}"#) == [])
        #expect(codes(#"{"aps":{"alert":{"subtitle":"s"}}}"#) == [])
        #expect(codes(#"{"aps":{"alert":{"action":"View","summary-arg":"a"}}}"#) == ["warning:empty-alert@/aps/alert"])
    }

    @Test func silentPushWithAnAlertWarnsAtContentAvailable() {
        #expect(codes(#"{"aps":{"content-available":1,"alert":"hi"}}"#) == ["warning:silent-with-alert@/aps/content-available"])
    }

    @Test func payloadsOverFourKilobytesAreTooLarge() {
        let big = #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "a", count: 4096) + #""}"#
        #expect(codes(big) == ["error:payload-too-large@"])
    }

    @Test func voipPayloadsMayHaveFiveKilobytes() {
        let body = #"{"aps":{},"pad":""# + String(repeating: "a", count: 4500) + #""}"#
        #expect(codes(body).isEmpty == false)
        #expect(codes(body, pushType: "voip").isEmpty)
        #expect(validator.validate(body, pushType: "voip").kind == .voip)
    }

    @Test func nestingAboveThirtyTwoIsTooDeep() {
        let deep = #"{"aps":{},"x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect(codes(deep) == ["error:too-deep@"])
    }

    @Test func invalidUTF8IsReported() {
        var bytes = Array(#"{"aps":{"alert":"ab"}}"#.utf8)
        bytes[17] = 0xC3
        bytes[18] = 0x28
        let r = bytes.withUnsafeBytes { validator.validate($0) }
        #expect(r.diagnostics.map(\.code) == [.invalidUTF8])
    }

    @Test func reportsEveryProblemInOneWalk() {
        let r = validator.validate(#"{"aps":{"badge":"1","sound":7,"event":"x","zz":1}}"#)
        #expect(r.diagnostics.count == 4)
        #expect(r.kind == nil)
        #expect(!r.isValid)
    }

    // MARK: kinds

    @Test(arguments: [
        (#"{"aps":{"alert":"hi"}}"#, PayloadKind.alert),
        (#"{"aps":{"sound":"default"}}"#, PayloadKind.alert),
        (#"{"aps":{"content-available":1},"k":1}"#, PayloadKind.background),
        (#"{"aps":{"badge":3}}"#, PayloadKind.badgeOnly),
        (#"{"aps":{"badge":0}}"#, PayloadKind.badgeOnly),
        (#"{"aps":{}}"#, PayloadKind.noAction),
        (#"{"aps":{"thread-id":"t"},"k":1}"#, PayloadKind.noAction),
        (#"{"aps":{"content-available":0}}"#, PayloadKind.noAction),
        (#"{"aps":{"mutable-content":1,"category":"c","url-args":[]}}"#, PayloadKind.noAction),
        (#"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#, PayloadKind.liveActivity),
    ])
    func derivesTheKind(_ text: String, _ kind: PayloadKind) {
        #expect(validator.validate(text).kind == kind)
    }

    @Test func liveActivitiesAllowRelevanceAboveOneAndLocalizedTitles() {
        let r = validator.validate(
            #"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"relevance-score":100,"alert":{"title":{"loc-key":"T","loc-args":["a"]},"body":"b","sound":"x.caf"}}}"#
        )
        #expect(r.diagnostics.isEmpty)
    }

    @Test func theNoneKindIsWrittenAsNone() {
        #expect(PayloadKind.noAction.rawValue == "none")
        #expect(validator.validate(#"{"aps":{}}"#, pushType: "voip").kind == .voip)
    }

    @Test func keepsTheBadgeValue() {
        #expect(validator.validate(#"{"aps":{"badge":0}}"#).badge == 0)
        #expect(validator.validate(#"{"aps":{"badge":2147483647}}"#).badge == 2147483647)
    }

    @Test func envelopeLinesPointIntoThePayload() {
        var line = #"{"op":"push","payload":{"aps":{"badge":"x"}}}"#
        let r = line.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0)) }
        #expect(r.firstError?.at == "/payload/aps/badge")
    }
}
