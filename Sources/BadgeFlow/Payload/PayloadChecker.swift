/// Validates a parsed payload in one walk of its `aps` dictionary, against Apple's payload key reference.
///
/// Pointers are built only when a problem is found, so a clean payload allocates nothing
/// but its (usually empty) diagnostics array.
struct PayloadChecker {
    /// Pointer of the payload inside the line: `""` for a bare payload, `/payload` in an envelope.
    let base: String
    private(set) var diagnostics: [Diagnostic] = []

    init(base: String) { self.base = base }

    /// Checks `root` and returns the report.
    ///
    /// - Parameters:
    ///   - root: the payload object.
    ///   - byteCount: the payload's size as sent.
    ///   - measured: false when `byteCount` only bounds the payload's compact size from above
    ///     (the length of the line that holds it): the payload is then measured, and reported
    ///     by its compact size, only when the bound is over the limit.
    ///   - pushType: the APNs push type, when the event gives one (`voip` raises the limit).
    ///   - text: the payload's own text when the caller has it; an oversized payload is measured
    ///     on it (the bytes as sent, strings as written), else on json-c's compact form.
    static func check(
        _ root: JSONRef, byteCount: Int, measured: Bool = true, text: UnsafeRawBufferPointer? = nil, pushType: String?,
        base: String
    ) -> PayloadReport {
        check(
            root, aps: root[HashedKey.aps], byteCount: byteCount, measured: measured, text: text, pushType: pushType,
            base: base)
    }

    /// Checks `root`, whose `aps` member the caller has already looked up (`root[HashedKey.aps]`:
    /// nil when it has none, or when `root` is not an object), and returns the report.
    static func check(
        _ root: JSONRef, aps: JSONRef?, byteCount: Int, measured: Bool = true, text: UnsafeRawBufferPointer? = nil,
        pushType: String?, base: String
    ) -> PayloadReport {
        var checker = PayloadChecker(base: base)
        return checker.run(root, aps: aps, byteCount: byteCount, measured: measured, text: text, pushType: pushType)
    }

    private mutating func run(
        _ root: JSONRef, aps: JSONRef?, byteCount: Int, measured: Bool, text: UnsafeRawBufferPointer?, pushType: String?
    ) -> PayloadReport {
        let limit = PayloadLimits.maxBytes(pushType: pushType)
        if byteCount > limit {
            // Size is the payload as sent: its own text without insignificant whitespace,
            // strings as written (a \u4e2d escape is 6 bytes). Only computed for a payload
            // over the limit; json-c's compact form only when the text is not at hand.
            let compact = text.map(PayloadValidator.compactCount) ?? root.serializedByteCount
            let written = measured ? byteCount : compact
            if compact > limit {
                let size = compact < written ? "\(compact) bytes compact (\(written) as written)" : "\(written) bytes"
                error(
                    .payloadTooLarge,
                    "payload is \(size), more than the \(limit) bytes APNs accepts" + (pushType == "voip" ? " for VoIP" : ""), base)
                return report(kind: nil, badge: nil)
            }
        }
        if let pushType, !PayloadLimits.pushTypes.contains(pushType) {
            error(
                .invalidValue,
                "push-type must be one of \(PayloadLimits.pushTypes.joined(separator: ", ")), got \(Self.quoted(pushType))",
                "/push-type")
            return report(kind: nil, badge: nil)
        }
        guard root.kind == .object else {
            error(.notAnObject, "a payload must be a JSON object, got \(Self.describe(root))", base)
            return report(kind: nil, badge: nil)
        }
        if let pushType, let key = PayloadLimits.requiredKey(pushType: pushType) {
            checkRequiredKey(root, key: key, pushType: pushType)
            if aps == nil {
                return report(kind: diagnostics.contains { $0.severity == .error } ? nil : .background, badge: nil)
            }
            if pushType == "mdm" {
                warning(
                    .pushTypeMismatch, "an mdm push carries only \"mdm\" (the PushMagic string); the device ignores \"aps\"",
                    base + "/aps")
            }
        }
        guard let aps else {
            error(
                .missingAps,
                "a payload must have an \"aps\" dictionary"
                    + (pushType == nil ? " (only mdm and fileprovider pushes go without one; give the push type)" : ""),
                base + "/aps")
            return report(kind: nil, badge: nil)
        }
        guard aps.kind == .object else {
            error(.apsNotAnObject, "\"aps\" must be an object, got \(Self.describe(aps))", base + "/aps")
            return report(kind: nil, badge: nil)
        }
        let isLiveActivity = aps[HashedKey.event] != nil
        var hasAlert = false, hasSound = false, hasBadge = false, contentAvailable = false
        var badge: Int? = nil

        // Read the table once, not once per member (a global's lazy-init check each time).
        let apsKeys = ApsKey.known
        let base = self.base  // a local, so lazily built pointers need no access to self
        aps.forEachMember { name, value in
            guard let known = apsKeys.identify(name) else {
                let key = String(decoding: name, as: UTF8.self)
                warning(
                    .unknownApsKey, "\"\(key)\" is not an aps key APNs knows; custom keys belong outside aps",
                    apsPointer(key))
                return
            }
            switch known {
            case .alert:
                hasAlert = true
                checkAlert(value, liveActivity: isLiveActivity)
            case .badge:
                hasBadge = true
                badge = checkBadge(value)
            case .sound:
                hasSound = true
                if value.kind != .string { checkSound(value, at: JSONPointer.appending(base + "/aps", "sound")) }
            case .string:
                if value.kind != .string { expectString(value, String(decoding: name, as: UTF8.self)) }
            case .contentAvailable:
                if expectInt(value, "content-available") {
                    if value.int == 1 {
                        contentAvailable = true
                    } else if value.int == 0 {
                        warning(
                            .contentAvailableZero,
                            "content-available 0 does not make a push silent or not: APNs reads only 1; leave the key out",
                            apsPointer("content-available"))
                    }
                }
            case .integer:
                if value.kind != .int { expectInt(value, String(decoding: name, as: UTF8.self)) }
            case .date:
                let key = String(decoding: name, as: UTF8.self)
                if expectInt(value, key), let t = value.int, t > PayloadLimits.maxTimestampSeconds {
                    error(
                        .dateInMilliseconds,
                        "\(key) \(t) is in milliseconds; APNs wants UNIX seconds (\(t / 1000)), so this date lies some 50,000 years ahead",
                        apsPointer(key))
                }
            case .interruptionLevel:
                expectEnum(value, "interruption-level", Self.interruptionLevels)
            case .event:
                expectEnum(value, "event", Self.liveActivityEvents)
            case .relevanceScore:
                checkRelevance(value, liveActivity: isLiveActivity)
            case .object:
                if value.kind != .object {
                    let key = String(decoding: name, as: UTF8.self)
                    error(.wrongType, "\(key) must be an object, got \(Self.describe(value))", apsPointer(key))
                }
            case .inputPushToken:
                if expectInt(value, "input-push-token"), value.int != 1 {
                    error(.outOfRange, "input-push-token must be 1, got \(Self.describe(value))", apsPointer("input-push-token"))
                }
            case .stringArray:
                if Self.isStringArray(value) { return }  // names and pointers only for a problem
                let key = String(decoding: name, as: UTF8.self)
                checkStringArray(value, name: key, at: apsPointer(key))
            case .boolean:
                if value.kind == .bool { return }
                let key = String(decoding: name, as: UTF8.self)
                error(.wrongType, "\(key) must be a boolean, got \(Self.describe(value))", apsPointer(key))
            }
        }
        if contentAvailable && (hasAlert || hasBadge || hasSound) {
            warning(
                .silentWithAlert,
                "content-available with alert, badge or sound is not delivered as a silent push",
                apsPointer("content-available"))
        }
        if isLiveActivity { checkLiveActivity(aps) }
        if let pushType {
            checkPushType(
                pushType, liveActivity: isLiveActivity, shows: hasAlert || hasSound || hasBadge, alert: hasAlert)
        }
        if diagnostics.contains(where: { $0.severity == .error }) { return report(kind: nil, badge: nil) }
        let kind: PayloadKind
        if isLiveActivity {
            kind = .liveActivity
        } else if pushType == "voip" {
            kind = .voip
        } else if pushType == "mdm" || pushType == "fileprovider" {
            kind = .background  // nothing shown, the icon left as it was, whatever aps holds
        } else if contentAvailable && !hasAlert && !hasBadge && !hasSound {
            kind = .background
        } else if hasAlert || hasSound {
            kind = .alert
        } else if hasBadge {
            kind = .badgeOnly
        } else {
            kind = .noAction
        }
        return report(kind: kind, badge: badge)
    }

    /// The keys a Live Activity event requires, and a timestamp in milliseconds.
    private mutating func checkLiveActivity(_ aps: JSONRef) {
        guard let event = aps[HashedKey.event], event.kind == .string else { return }
        var required = ["timestamp"]
        if event.stringEquals("update") {
            required.append("content-state")
        } else if event.stringEquals("start") {
            required += ["content-state", "attributes-type", "attributes", "alert"]
        } else if !event.stringEquals("end") {
            return  // an unknown event is already an invalid-value
        }
        let name = event.string ?? ""
        for key in required where aps[key] == nil {
            error(.missingKey, "a Live Activity \(name) needs \"\(key)\"", apsPointer(key))
        }
        if let t = aps["timestamp"], t.kind == .int, let n = t.int, n > PayloadLimits.maxTimestampSeconds {
            warning(
                .timestampInMilliseconds,
                "timestamp \(n) looks like milliseconds; APNs wants UNIX seconds (\(n / 1000))", apsPointer("timestamp"))
        }
    }

    /// The top-level key an `mdm` or `fileprovider` push requires, a non-empty string.
    private mutating func checkRequiredKey(_ root: JSONRef, key: String, pushType: String) {
        let at = JSONPointer.appending(base, key)
        guard let value = root[key] else {
            let what = pushType == "mdm" ? "the device's PushMagic string" : "the identifier of the container that changed"
            error(.missingKey, "\(pushType == "mdm" ? "an" : "a") \(pushType) push needs \"\(key)\", \(what)", at)
            return
        }
        guard value.kind == .string else {
            error(.wrongType, "\(key) must be a string, got \(Self.describe(value))", at)
            return
        }
        if value.stringByteCount == 0 {
            error(.invalidValue, "\(key) must not be empty: APNs delivers it to no one", at)
        }
    }

    /// Whether the payload fits its push type (see the PayloadValidation article: a payload that does not fit its push type).
    private mutating func checkPushType(_ pushType: String, liveActivity: Bool, shows: Bool, alert: Bool) {
        let at = base + "/aps"
        if alert, PayloadLimits.pushTypesWithoutAlert.contains(pushType) {
            warning(
                .pushTypeMismatch,
                "push type \(pushType) shows no alert: the alert would not be displayed (send it as an alert push)",
                JSONPointer.appending(at, "alert"))
        }
        switch pushType {
        case "background" where shows:
            warning(
                .pushTypeMismatch, "push type background is for pushes that show nothing, but this one has an alert, sound or badge",
                at)
        case "alert" where !shows && !liveActivity:
            warning(.pushTypeMismatch, "push type alert without alert, sound or badge: nothing would be shown", at)
        case "liveactivity" where !liveActivity:
            warning(.pushTypeMismatch, "push type liveactivity without \"event\"", JSONPointer.appending(at, "event"))
        default:
            if liveActivity && pushType != "liveactivity" {
                warning(
                    .pushTypeMismatch, "Live Activity keys under push type \(pushType); a Live Activity is sent as liveactivity",
                    JSONPointer.appending(at, "event"))
            }
        }
    }

    private static func quoted(_ s: String) -> String {
        var w = JSONWriter(capacity: s.utf8.count + 2)
        w.string(s)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    private func report(kind: PayloadKind?, badge: Int?) -> PayloadReport {
        PayloadReport(kind: kind, badge: badge, diagnostics: diagnostics)
    }

    // MARK: keys

    private mutating func checkBadge(_ value: JSONRef) -> Int? {
        var at: String { apsPointer("badge") }  // built only on a problem
        guard value.kind == .int, let n = value.int else {
            error(.wrongType, "badge must be a non-negative integer, got \(Self.describe(value))", at)
            return nil
        }
        if n < 0 || n > Int64(Int32.max) || value.intOverflowed {
            error(.outOfRange, "badge must be between 0 and 2147483647, got \(Self.describe(value))", at)
            return nil
        }
        return Int(n)
    }

    private mutating func checkAlert(_ value: JSONRef, liveActivity: Bool) {
        let base = self.base  // a local, so the lazy pointers below need no access to self
        var at: String { JSONPointer.appending(base + "/aps", "alert") }  // built only on a problem
        switch value.kind {
        case .string:
            if value.stringByteCount == 0 { warning(.emptyAlert, "alert is empty: nothing would be shown", at) }
        case .object:
            var shows = false, hasText = false, hasArgs = false
            let alertKeys = AlertKey.known
            value.forEachMember { name, member in
                let known = alertKeys.identify(name)
                switch known {
                case .shown?, .shownLocalizable?:
                    hasText = true
                    if member.kind == .string {
                        if member.stringByteCount > 0 { shows = true }
                        return
                    }
                    shows = true
                    if liveActivity && known == .shownLocalizable && member.kind == .object {
                        checkLocalizedObject(member, at: JSONPointer.appending(at, String(decoding: name, as: UTF8.self)))
                        return
                    }
                    let key = String(decoding: name, as: UTF8.self)
                    error(.wrongType, "alert \(key) must be a string, got \(Self.describe(member))", JSONPointer.appending(at, key))
                case .string?:
                    if member.kind == .string { return }
                    let key = String(decoding: name, as: UTF8.self)
                    error(.wrongType, "alert \(key) must be a string, got \(Self.describe(member))", JSONPointer.appending(at, key))
                case .stringOrNull?:
                    if member.kind == .string || member.kind == .null { return }  // null hides the action button
                    let key = String(decoding: name, as: UTF8.self)
                    error(
                        .wrongType, "alert \(key) must be a string or null, got \(Self.describe(member))",
                        JSONPointer.appending(at, key))
                case .count?:
                    if member.kind == .int, let n = member.int, n >= 0, !member.intOverflowed { return }
                    let key = String(decoding: name, as: UTF8.self)
                    checkCount(member, name: "alert \(key)", at: JSONPointer.appending(at, key))
                case .stringArray?:
                    hasArgs = true
                    if Self.isStringArray(member) { return }  // names and pointers only for a problem
                    let key = String(decoding: name, as: UTF8.self)
                    checkStringArray(member, name: "alert \(key)", at: JSONPointer.appending(at, key))
                case .sound? where liveActivity:
                    if member.kind != .string { checkSound(member, at: JSONPointer.appending(at, "sound")) }
                case .sound?, nil:
                    let key = String(decoding: name, as: UTF8.self)
                    warning(.unknownApsKey, "\"\(key)\" is not an alert key APNs knows", JSONPointer.appending(at, key))
                }
            }
            if !shows {
                warning(
                    .emptyAlert,
                    hasText
                        ? "alert text is empty (title, body and the other text keys are \"\"): nothing would be shown"
                        : "alert has no title, subtitle, body or loc-key: nothing would be shown", at)
            }
            if hasArgs {
                for (args, key) in Self.argsAndKeys where value[args] != nil && value[key] == nil {
                    warning(
                        .locArgsWithoutLocKey,
                        "\(args) without \(key): the arguments fill the \(key) format string, so they are never shown",
                        JSONPointer.appending(at, args))
                }
            }
        default:
            error(.wrongType, "alert must be a string or an object, got \(Self.describe(value))", at)
        }
    }

    /// Each alert argument array and the format key it fills.
    private static let argsAndKeys = [
        ("loc-args", "loc-key"), ("title-loc-args", "title-loc-key"), ("subtitle-loc-args", "subtitle-loc-key"),
    ]

    /// A Live Activity's `title` or `body` given as `{loc-key, loc-args}`.
    private mutating func checkLocalizedObject(_ value: JSONRef, at: @autoclosure () -> String) {
        let textKeys = LocalizedTextKey.known
        value.forEachMember { name, member in
            switch textKeys.identify(name) {
            case .locKey?:
                if member.kind == .string { return }
                error(.wrongType, "loc-key must be a string, got \(Self.describe(member))", JSONPointer.appending(at(), "loc-key"))
            case .locArgs?:
                if Self.isStringArray(member) { return }
                checkStringArray(member, name: "loc-args", at: JSONPointer.appending(at(), "loc-args"))
            case nil:
                let key = String(decoding: name, as: UTF8.self)
                warning(.unknownApsKey, "\"\(key)\" is not a key of a localized alert text", JSONPointer.appending(at(), key))
            }
        }
    }

    /// A count such as `summary-arg-count`: an integer ≥ 0.
    private mutating func checkCount(_ value: JSONRef, name: String, at: String) {
        if value.kind == .int, let n = value.int, n >= 0, !value.intOverflowed { return }
        if value.kind == .int {
            error(.outOfRange, "\(name) must be a non-negative integer, got \(Self.describe(value))", at)
        } else {
            error(.wrongType, "\(name) must be a non-negative integer, got \(Self.describe(value))", at)
        }
    }

    /// Whether `value` is an array of strings only (the check without any diagnostics).
    private static func isStringArray(_ value: JSONRef) -> Bool {
        guard value.kind == .array else { return false }
        for i in 0..<value.count where value[i]?.kind != .string { return false }
        return true
    }

    private mutating func checkStringArray(_ value: JSONRef, name: String, at: String) {
        guard value.kind == .array else {
            error(.wrongType, "\(name) must be an array of strings, got \(Self.describe(value))", at)
            return
        }
        for i in 0..<value.count {
            let element = value[i]
            if element?.kind == .string { continue }
            error(.wrongType, "\(name) must hold strings only, got \(element.map(Self.describe) ?? "null")", at + "/\(i)")
        }
    }

    private mutating func checkSound(_ value: JSONRef, at: @autoclosure () -> String) {
        switch value.kind {
        case .string: return
        case .object:
            let soundKeys = SoundKey.known
            value.forEachMember { name, member in
                // Pointers are built only on a problem, so a clean sound dictionary allocates nothing.
                switch soundKeys.identify(name) {
                case .critical?:
                    guard member.kind == .int, let n = member.int else {
                        error(
                            .wrongType, "sound critical must be 0 or 1, got \(Self.describe(member))",
                            JSONPointer.appending(at(), "critical"))
                        return
                    }
                    if n != 0 && n != 1 {
                        error(.outOfRange, "sound critical must be 0 or 1, got \(n)", JSONPointer.appending(at(), "critical"))
                    }
                case .name?:
                    if member.kind != .string {
                        error(
                            .wrongType, "sound name must be a string, got \(Self.describe(member))",
                            JSONPointer.appending(at(), "name"))
                    }
                case .volume?:
                    guard let v = member.number else {
                        error(
                            .wrongType, "sound volume must be a number, got \(Self.describe(member))",
                            JSONPointer.appending(at(), "volume"))
                        return
                    }
                    if !(v >= 0 && v <= 1) {
                        error(
                            .outOfRange, "sound volume must be between 0 and 1, got \(Self.describe(member))",
                            JSONPointer.appending(at(), "volume"))
                    }
                case nil:
                    let key = String(decoding: name, as: UTF8.self)
                    warning(.unknownApsKey, "\"\(key)\" is not a sound key APNs knows", JSONPointer.appending(at(), key))
                }
            }
        default:
            error(.wrongType, "sound must be a string or an object, got \(Self.describe(value))", at())
        }
    }

    private mutating func checkRelevance(_ value: JSONRef, liveActivity: Bool) {
        var at: String { apsPointer("relevance-score") }  // built only on a problem
        guard let v = value.number else {
            error(.wrongType, "relevance-score must be a number, got \(Self.describe(value))", at)
            return
        }
        if !v.isFinite {
            error(.outOfRange, "relevance-score must be a finite number, got \(Self.describe(value))", at)
        } else if !(v >= 0) {
            error(.outOfRange, "relevance-score must not be negative, got \(Self.describe(value))", at)
        } else if !liveActivity && v > 1 {
            error(.outOfRange, "relevance-score must be between 0 and 1 outside Live Activities, got \(Self.describe(value))", at)
        }
    }

    private mutating func expectString(_ value: JSONRef, _ key: String) {
        if value.kind != .string {
            error(.wrongType, "\(key) must be a string, got \(Self.describe(value))", apsPointer(key))
        }
    }

    @discardableResult
    private mutating func expectInt(_ value: JSONRef, _ key: String) -> Bool {
        if value.kind != .int {
            error(.wrongType, "\(key) must be an integer, got \(Self.describe(value))", apsPointer(key))
            return false
        }
        return true
    }

    private mutating func expectEnum(_ value: JSONRef, _ key: String, _ allowed: [String]) {
        guard value.kind == .string else {
            error(.wrongType, "\(key) must be a string, got \(Self.describe(value))", apsPointer(key))
            return
        }
        if !allowed.contains(where: { value.stringEquals($0) }) {
            error(
                .invalidValue, "\(key) must be one of \(allowed.joined(separator: ", ")), got \(Self.describe(value))",
                apsPointer(key))
        }
    }

    private static let interruptionLevels = ["passive", "active", "time-sensitive", "critical"]
    private static let liveActivityEvents = ["start", "update", "end"]

    // MARK: reporting

    private func apsPointer(_ key: String) -> String { JSONPointer.appending(base + "/aps", key) }

    private mutating func error(_ code: Diagnostic.Code, _ message: String, _ at: String) {
        diagnostics.append(.error(code, message, at: at))
    }

    private mutating func warning(_ code: Diagnostic.Code, _ message: String, _ at: String) {
        diagnostics.append(.warning(code, message, at: at))
    }

    /// `string "99+"`, `number 3.5`, `boolean true`: a value as messages name it.
    static func describe(_ value: JSONRef) -> String {
        switch value.kind {
        case .null: return "null"
        case .bool: return "boolean \(value.bool == true)"
        case .int:
            if value.intOverflowed { return "an integer beyond 64 bits" }
            return "integer \(value.int ?? 0)"
        case .double:
            let d = value.number ?? 0
            return d.isFinite ? "number \(d)" : "a number beyond the range of a double"
        case .string:
            let s = value.string ?? ""
            let shown = s.count > 40 ? String(s.prefix(40)) + "…" : s
            var w = JSONWriter(capacity: shown.utf8.count + 2)
            w.string(shown)
            return "string " + String(decoding: w.bytes, as: UTF8.self)
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
