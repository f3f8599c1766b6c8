/// Parses and validates APNs payloads against Apple's payload key reference.
///
/// One validator reuses one json-c tokener, so keep one per thread and call it for every
/// payload:
///
/// ```swift
/// let validator = PayloadValidator()
/// let report = validator.validate(#"{"aps":{"badge":"99+"}}"#)
/// report.firstError?.code   // .wrongType, at "/aps/badge"
/// ```
///
/// Not thread-safe (the tokener is reused); it is cheap to make one per thread.
public final class PayloadValidator {
    let parser = JSONParser(maxDepth: PayloadLimits.maxDepth)

    /// Creates a validator.
    public init() {}

    static func tooLarge(_ size: Int, limit: Int, at: String) -> Diagnostic {
        .error(.payloadTooLarge, "payload is \(size) bytes, more than the \(limit) bytes APNs accepts", at: at)
    }
}
