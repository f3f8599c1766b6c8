import Testing
@testable import BadgeFlow

/// Size on the bytes as sent (the text without insignificant whitespace, strings as written:
/// a `\u4e2d` escape is 6 bytes), every push type, and what json-c takes that JSON does not.
@Suite struct PayloadSizeAsSentTests {
    let validator = PayloadValidator()

    /// How the payload's text is written.
    enum Form: String, CaseIterable, Sendable {
        /// CJK text as `\uXXXX` escapes (Python's `json.dumps` default), minified.
        case escaped
        /// CJK text as raw UTF-8, minified.
        case raw
        /// Raw UTF-8, pretty-printed (layout that is not sent).
        case pretty
        /// ASCII only, minified.
        case ascii
    }

    /// A payload whose bytes as sent are exactly `size`, written in `form`.
    static func payload(size: Int, form: Form, head: String = #"{"aps":{"alert":"hi"},"k":""#) -> String {
        let tail = "\"}"
        var budget = size - head.utf8.count - tail.utf8.count
        var filler = ""
        let unit = form == .escaped ? "\\u4e2d" : form == .ascii ? "x" : "中"
        let unitBytes = unit.utf8.count  // 6, 1 or 3
        while budget >= unitBytes {
            filler += unit
            budget -= unitBytes
        }
        filler += String(repeating: "x", count: budget)
        let compact = head + filler + tail
        precondition(compact.utf8.count == size)
        guard form == .pretty else { return compact }
        // The same members laid out over lines: only whitespace outside strings is added.
        return compact.replacing("{", with: "{\n    ").replacing(",", with: ",\n    ").replacing(":", with: " : ")
            .replacing("}", with: "\n}") + "\n"
    }

    private func verdict(_ text: String, pushType: String? = nil) -> [Diagnostic.Code] {
        validator.validate(text, pushType: pushType).diagnostics.filter { $0.severity == .error }.map(\.code)
    }

    private func lineVerdict(_ text: String, pushType: String? = nil) -> [Diagnostic.Code] {
        var line = text
        return line.withUTF8 { validator.validateLine(UnsafeRawBufferPointer($0), pushType: pushType) }.diagnostics
            .filter { $0.severity == .error }.map(\.code)
    }

    /// The filter's verdict (LineAnalyzer): a bare payload line, or an envelope with `push-type`.
    private func filterVerdict(_ payload: String, pushType: String? = nil) -> [Diagnostic.Code] {
        let analyzer = LineAnalyzer(rules: .builtIn)
        let line: String
        if let pushType {
            line = #"{"op":"push","push-type":"\#(pushType)","account":"a","payload":"# + payload + "}"
        } else {
            line = payload
        }
        if case .rejected(let d) = analyzer.analyze(line) { return [d.code] }
        return []
    }

    @Test(arguments: Form.allCases)
    func theLimitIsOnTheBytesAsSent(_ form: Form) {
        for (size, fits) in [(4095, true), (4096, true), (4097, false)] {
            let text = Self.payload(size: size, form: form)
            let want: [Diagnostic.Code] = fits ? [] : [.payloadTooLarge]
            #expect(verdict(text) == want, "\(form) \(size) validate")
            #expect(lineVerdict(text) == want, "\(form) \(size) validateLine")
            if form != .pretty {  // the filter reads one line; pretty text is several
                #expect(filterVerdict(text) == want, "\(form) \(size) filter")
                #expect(filterVerdict(text, pushType: "alert") == want, "\(form) \(size) filter envelope")
            }
            // In an envelope the payload is measured, not the line around it.
            let envelope = #"{"op":"push","push-type":"alert","payload":"# + text + "}"
            #expect(lineVerdict(envelope) == want, "\(form) \(size) envelope")
        }
    }

    @Test func escapedCJKAsPythonWritesItIsMeasuredAsWritten() {
        // 5,812 bytes as sent, under 4,096 once json-c decodes the escapes: APNs answers 413.
        let text = Self.payload(size: 5812, form: .escaped)
        let r = validator.validate(text)
        #expect(r.diagnostics.map(\.code) == [.payloadTooLarge])
        #expect(r.diagnostics.first?.message.contains("5812 bytes") == true, "\(r.diagnostics)")
        #expect(filterVerdict(text, pushType: "alert") == [.payloadTooLarge])
    }

    @Test(arguments: [("voip", 5120), ("liveactivity", 4096), ("background", 4096), ("mdm", 4096)])
    func eachPushTypesLimit(_ pushType: String, _ limit: Int) {
        let head: String
        switch pushType {
        case "liveactivity": head = #"{"aps":{"event":"end","timestamp":1},"k":""#
        case "background": head = #"{"aps":{"content-available":1},"k":""#
        case "mdm": head = #"{"mdm":"magic","k":""#
        default: head = #"{"aps":{},"k":""#
        }
        for form in [Form.escaped, .raw, .ascii] {
            #expect(verdict(Self.payload(size: limit, form: form, head: head), pushType: pushType) == [], "\(pushType) \(form)")
            #expect(
                verdict(Self.payload(size: limit + 1, form: form, head: head), pushType: pushType) == [.payloadTooLarge],
                "\(pushType) \(form)")
            #expect(filterVerdict(Self.payload(size: limit, form: form, head: head), pushType: pushType) == [])
            #expect(
                filterVerdict(Self.payload(size: limit + 1, form: form, head: head), pushType: pushType) == [.payloadTooLarge])
        }
    }

    @Test func compactCountKeepsEscapesAsWritten() {
        var text = #"{ "a" : "\u4e2d" }"#
        #expect(text.withUTF8 { PayloadValidator.compactCount(UnsafeRawBufferPointer($0)) } == #"{"a":"\u4e2d"}"#.utf8.count)
    }

    // MARK: what json-c takes and JSON does not

    @Test(arguments: [
        (#"{"aps":{"badge":1},"aps":{"alert":"x"}}"#, "error:duplicate-key@/aps"),
        (#"{"aps":{"badge":1,"badge":2}}"#, "error:duplicate-key@/aps/badge"),
        (#"{"aps":{"alert":{"body":"a","title":"t","body":"b"}}}"#, "error:duplicate-key@/aps/alert/body"),
        (#"{"aps":{},"list":[{"a":1},{"a":1,"a":2}]}"#, "error:duplicate-key@/list/1/a"),
        (#"{"aps":{"relevance-score":NaN}}"#, "error:invalid-json@/aps/relevance-score"),
        (#"{"aps":{"relevance-score":Infinity}}"#, "error:invalid-json@/aps/relevance-score"),
        (#"{"aps":{},"x":[1,-Infinity]}"#, "error:invalid-json@/x/1"),
    ])
    func notJSONOrAmbiguous(_ text: String, _ expected: String) {
        let r = validator.validate(text)
        #expect(r.diagnostics.map { "\($0.severity.rawValue):\($0.code.rawValue)@\($0.at)" } == [expected])
        // The message says what, where and why, not a misleading range.
        #expect(r.diagnostics.first.map { !$0.message.contains("negative") && !$0.message.contains("without alert") } == true)
        let analyzer = LineAnalyzer(rules: .builtIn)
        guard case .rejected(let d) = analyzer.analyze(text) else {
            Issue.record("the filter took \(text)")
            return
        }
        #expect("\(d.severity.rawValue):\(d.code.rawValue)@\(d.at)" == expected)
    }

    @Test func sameKeysInDifferentObjectsAreNoDuplicates() {
        #expect(validator.validate(#"{"aps":{"alert":{"title":"a"}},"x":{"aps":1,"alert":{"title":"b"}}}"#).isValid)
        #expect(validator.validate(#"{"aps":{"alert":"a:b,c"},"k":"\"aps\":1"}"#).isValid)
    }

    @Test func aDuplicateInAnEnvelopeIsPointedIntoTheLine() {
        let analyzer = LineAnalyzer(rules: .builtIn)
        guard case .rejected(let d) = analyzer.analyze(#"{"op":"push","account":"a","payload":{"aps":{"badge":1,"badge":2}}}"#)
        else {
            Issue.record("accepted")
            return
        }
        #expect(d.code == .duplicateKey && d.at == "/payload/aps/badge")
    }

    // MARK: push types without aps and the new checks

    @Test(arguments: [
        ("mdm", #"{"mdm":"PushMagic"}"#, [String]()),
        ("mdm", #"{"magic":"x"}"#, ["error:missing-key@/mdm"]),
        ("mdm", #"{"mdm":1}"#, ["error:wrong-type@/mdm"]),
        ("mdm", #"{"mdm":"m","aps":{}}"#, ["warning:push-type-mismatch@/aps"]),
        ("fileprovider", #"{"container-identifier":"c","domain":"d"}"#, []),
        ("fileprovider", #"{"domain":"d"}"#, ["error:missing-key@/container-identifier"]),
        ("fileprovider", #"{"container-identifier":""}"#, ["error:invalid-value@/container-identifier"]),
        ("fileprovider", #"{"container-identifier":"c","aps":{"alert":"x"}}"#, ["warning:push-type-mismatch@/aps/alert"]),
        ("voip", #"{"aps":{"alert":"x"}}"#, ["warning:push-type-mismatch@/aps/alert"]),
        ("widgets", #"{"aps":{"content-changed":true,"alert":"x"}}"#, ["warning:push-type-mismatch@/aps/alert"]),
        ("location", #"{"aps":{"alert":"x"}}"#, ["warning:push-type-mismatch@/aps/alert"]),
        ("complication", #"{"aps":{"alert":"x"}}"#, ["warning:push-type-mismatch@/aps/alert"]),
        ("alert", #"{"aps":{"alert":{"title":"","body":""}}}"#, ["warning:empty-alert@/aps/alert"]),
        ("alert", #"{"aps":{"alert":{"body":"b","loc-args":["a"]}}}"#, ["warning:loc-args-without-loc-key@/aps/alert/loc-args"]),
        ("alert", #"{"aps":{"alert":{"loc-key":"K","loc-args":["a"]}}}"#, []),
        ("alert", #"{"aps":{"alert":"x","content-available":0}}"#, ["warning:content-available-zero@/aps/content-available"]),
        (
            "liveactivity", #"{"aps":{"event":"end","timestamp":1,"dismissal-date":1765003600000}}"#,
            ["error:date-in-milliseconds@/aps/dismissal-date"]
        ),
        (
            "liveactivity", #"{"aps":{"event":"update","timestamp":1,"content-state":{},"stale-date":1765003600000}}"#,
            ["error:date-in-milliseconds@/aps/stale-date"]
        ),
        ("liveactivity", #"{"aps":{"event":"update","timestamp":1,"content-state":{},"stale-date":1765003600}}"#, []),
    ])
    func verdicts(_ pushType: String, _ text: String, _ expected: [String]) {
        let r = validator.validate(text, pushType: pushType)
        #expect(r.diagnostics.map { "\($0.severity.rawValue):\($0.code.rawValue)@\($0.at)" } == expected)
        if r.isValid, pushType == "mdm" || pushType == "fileprovider" { #expect(r.kind == .background) }
    }

    @Test func anMDMPushGoesThroughTheFilter() {
        let analyzer = LineAnalyzer(rules: .builtIn)
        let result = analyzer.analyze(#"{"op":"push","push-type":"mdm","account":"a","payload":{"mdm":"PushMagic"}}"#)
        guard case .event(let e) = result else {
            Issue.record("rejected: \(result)")
            return
        }
        #expect(e.kind == .background)
    }

    @Test func withoutAPushTypeAMissingApsSaysWhichPushesGoWithout() {
        let r = validator.validate(#"{"mdm":"x"}"#)
        #expect(r.firstError?.code == .missingAps)
        #expect(r.firstError?.message.contains("mdm and fileprovider") == true)
    }
}
