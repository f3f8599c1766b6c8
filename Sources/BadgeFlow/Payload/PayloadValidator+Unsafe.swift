// PayloadValidator's work on raw bytes: a payload or line read from a borrowed buffer
// (parsed by json-c, scanned for what json-c does not report, measured). Relies on the buffer
// staying valid for the call; every index stays below its count.

extension PayloadValidator {
    /// Validates one payload given as UTF-8 JSON text.
    ///
    /// - Parameters:
    ///   - bytes: the payload as sent, without any envelope.
    ///   - pushType: the APNs push type, when known (`voip` allows 5120 bytes).
    /// - Returns: the kind, the badge and every diagnostic.
    public func validate(_ bytes: UnsafeRawBufferPointer, pushType: String? = nil) -> PayloadReport {
        let size = Self.trimmedCount(bytes)
        let limit = PayloadLimits.maxBytes(pushType: pushType)
        if size > limit {
            // APNs refuses an oversized payload before reading it; so do we. Size is the
            // compact form's: a pretty-printed template is measured as a server sends it.
            let compact = Self.compactCount(bytes)
            if compact > limit {
                return PayloadReport(kind: nil, badge: nil, diagnostics: [Self.tooLarge(compact, limit: limit, at: "")])
            }
        }
        return parser.withDocument(bytes) { result in
            switch result {
            case .failure(let e):
                return PayloadReport(kind: nil, badge: nil, diagnostics: [e.diagnostic])
            case .success(let root):
                if let problem = JSONScanner.firstProblem(bytes, root: root) {
                    return PayloadReport(kind: nil, badge: nil, diagnostics: [problem.diagnostic])
                }
                return PayloadChecker.check(root, byteCount: size, text: bytes, pushType: pushType, base: "")
            }
        }
    }

    /// Validates one payload given as text.
    public func validate(_ text: String, pushType: String? = nil) -> PayloadReport {
        var text = text
        return text.withUTF8 { validate(UnsafeRawBufferPointer($0), pushType: pushType) }
    }

    /// ``validateLine(_:pushType:)`` of the bytes of an array.
    package func validateLine(_ bytes: [UInt8], pushType: String? = nil) -> PayloadReport {
        bytes.withUnsafeBytes { validateLine($0, pushType: pushType) }
    }

    /// Validates one `badgeflow validate` input: a bare payload, or a push envelope
    /// `{"op":"push","payload":{…},"push-type":"voip"}` whose pointers start at `/payload`.
    ///
    /// - Parameters:
    ///   - bytes: the line or file.
    ///   - pushType: the push type of a bare payload (`validate --push-type`); an envelope's own
    ///     `push-type` wins.
    public func validateLine(_ bytes: UnsafeRawBufferPointer, pushType: String? = nil) -> PayloadReport {
        let defaultPushType = pushType
        let size = Self.trimmedCount(bytes)
        return parser.withDocument(bytes) { result in
            switch result {
            case .failure(let e):
                // An unreadable line over the limit is reported by its size, as APNs would.
                let compact = size > PayloadLimits.maxBytes ? Self.compactCount(bytes) : size
                let d = compact > PayloadLimits.maxBytes ? Self.tooLarge(compact, limit: PayloadLimits.maxBytes, at: "") : e.diagnostic
                return PayloadReport(kind: nil, badge: nil, diagnostics: [d])
            case .success(let root):
                if let problem = JSONScanner.firstProblem(bytes, root: root) {
                    return PayloadReport(kind: nil, badge: nil, diagnostics: [problem.diagnostic])
                }
                if root.kind == .object, root["aps"] == nil, let op = root["op"], op.stringEquals("push"),
                    let payload = root["payload"]
                {
                    var pushType = defaultPushType
                    if let p = root["push-type"] {
                        guard p.kind == .string else {
                            let d = Diagnostic.error(
                                .wrongType, "push-type must be a string, got \(PayloadChecker.describe(p))", at: "/push-type")
                            return PayloadReport(kind: nil, badge: nil, diagnostics: [d])
                        }
                        pushType = p.string
                    }
                    // The payload as written inside the line, without the envelope around it.
                    let text = JSONScanner.memberValue("payload", in: bytes)
                    return PayloadChecker.check(
                        payload, byteCount: text.map(Self.trimmedCount) ?? payload.serializedByteCount, text: text,
                        pushType: pushType, base: "/payload")
                }
                return PayloadChecker.check(root, byteCount: size, text: bytes, pushType: defaultPushType, base: "")
            }
        }
    }

    /// The byte count of the JSON text without insignificant whitespace (outside strings).
    static func compactCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        var n = 0
        var inString = false, escaped = false
        for b in bytes {
            if inString {
                n += 1
                if escaped {
                    escaped = false
                } else if b == 0x5C {
                    escaped = true
                } else if b == 0x22 {
                    inString = false
                }
            } else if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 {
                continue
            } else {
                n += 1
                if b == 0x22 { inString = true }
            }
        }
        return n
    }

    /// The byte count without leading and trailing JSON whitespace.
    static func trimmedCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        var lo = 0, hi = bytes.count
        func ws(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
        while lo < hi, ws(bytes[lo]) { lo += 1 }
        while hi > lo, ws(bytes[hi - 1]) { hi -= 1 }
        return hi - lo
    }
}
