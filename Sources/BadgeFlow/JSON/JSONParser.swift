private import CJSONC

/// Parses JSON text with one reused json-c tokener, in strict mode, validating UTF-8.
///
/// UTF-8 is checked by `UTF8Check` rather than by json-c: faster, and stricter (RFC 3629).
/// The first problem in byte order is the one reported, as a single pass would.
///
/// A parser is not thread-safe: give each thread its own. Documents are released when the
/// `withDocument` call that parsed them returns, so no json-c object outlives its scope.
final class JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    let maxDepth: Int
    private let tokener: UnsafeMutablePointer<json_tokener>

    /// Creates a parser that accepts nesting up to `maxDepth` levels (32 by default).
    init(maxDepth: Int = 32) {
        self.maxDepth = maxDepth
        // json-c counts the top-level value as one level of its stack; one more keeps
        // `maxDepth` levels of containers legal.
        if let t = json_tokener_new_ex(Int32(maxDepth + 1)) {
            tokener = t
        } else {
            // json_tokener_new_ex only fails when malloc fails.
            preconditionFailure("json-c could not allocate a tokener")
        }
        json_tokener_set_flags(tokener, Int32(JSON_TOKENER_STRICT))
    }

    deinit { json_tokener_free(tokener) }

    /// Parses `bytes` as one JSON text and calls `body` with its root value or the error.
    ///
    /// The root is released when `body` returns; `body` must not let any `JSONRef` escape.
    /// Whitespace may follow the value; anything else is `invalid-json`.
    func withDocument<R>(_ bytes: UnsafeRawBufferPointer, _ body: (Result<JSONRef, JSONParseError>) -> R) -> R {
        json_tokener_reset(tokener)
        let length = bytes.count
        guard length > 0, let base = bytes.baseAddress, length < Int(Int32.max) else {
            return body(.failure(JSONParseError(reason: .invalidJSON, message: "unexpected end of input", offset: 0)))
        }
        let chars = base.assumingMemoryBound(to: CChar.self)
        var object = json_tokener_parse_ex(tokener, chars, Int32(length))
        var error = json_tokener_get_error(tokener)
        var consumed = Int(json_tokener_get_parse_end(tokener))
        if object == nil && error == json_tokener_continue {
            // A top-level number (or literal) may still be growing; one space ends it.
            object = json_tokener_parse_ex(tokener, " ", 1)
            error = json_tokener_get_error(tokener)
            if error == json_tokener_continue {
                if let bad = UTF8Check.firstInvalid(bytes) { return body(.failure(Self.invalidUTF8(at: bad))) }
                return body(.failure(JSONParseError(reason: .invalidJSON, message: "unexpected end of input", offset: length)))
            }
            consumed = length
        }
        guard let root = object else {
            if error == json_tokener_success {
                // A bare `null` is a valid document that json-c represents as NULL.
                return finish(nil, bytes: bytes, consumed: consumed, body)
            }
            // Ill-formed UTF-8 before the point json-c stopped comes first.
            let seen = UnsafeRawBufferPointer(rebasing: bytes[0..<min(consumed + 1, length)])
            if let bad = UTF8Check.firstInvalid(seen) { return body(.failure(Self.invalidUTF8(at: bad))) }
            return body(.failure(Self.describe(error, offset: consumed, maxDepth: maxDepth)))
        }
        defer { json_object_put(root) }
        if let bad = UTF8Check.firstInvalid(bytes) { return body(.failure(Self.invalidUTF8(at: bad))) }
        return finish(root, bytes: bytes, consumed: consumed, body)
    }

    private static func invalidUTF8(at offset: Int) -> JSONParseError {
        JSONParseError(reason: .invalidUTF8, message: "text is not valid UTF-8", offset: offset)
    }

    private func finish<R>(
        _ root: OpaquePointer?, bytes: UnsafeRawBufferPointer, consumed: Int,
        _ body: (Result<JSONRef, JSONParseError>) -> R
    ) -> R {
        var i = consumed
        while i < bytes.count {
            let b = bytes[i]
            if b != 0x20 && b != 0x0A && b != 0x0D && b != 0x09 {
                return body(
                    .failure(
                        JSONParseError(
                            reason: .invalidJSON, message: "unexpected data after the JSON value", offset: i)))
            }
            i += 1
        }
        if let key = JSONScanner.keyHoldingNUL(bytes) {
            return body(
                .failure(
                    JSONParseError(
                        reason: .invalidJSON,
                        message: "an object key holds \\u0000 (U+0000), which BadgeFlow does not accept in keys", offset: key)))
        }
        return body(.success(JSONRef(borrowing: root)))
    }

    private static func describe(_ error: json_tokener_error, offset: Int, maxDepth: Int) -> JSONParseError {
        switch error {
        case json_tokener_error_depth:
            return JSONParseError(reason: .tooDeep, message: "nesting deeper than \(maxDepth) levels", offset: offset)
        case json_tokener_error_parse_utf8_string:
            return JSONParseError(reason: .invalidUTF8, message: "string is not valid UTF-8", offset: offset)
        default:
            let text = json_tokener_error_desc(error).map { String(cString: $0) } ?? "parse error"
            return JSONParseError(reason: .invalidJSON, message: text, offset: offset)
        }
    }
}

/// Per-thread set-up that makes json-c parsing cheaper.
public enum JSONThread {
    /// Puts the calling thread in a private "C" locale.
    ///
    /// json-c switches to the C locale around every parse; from a private C locale that
    /// costs less (about 20% of a small parse here) and takes no process-wide lock, which
    /// matters when several threads parse at once. Call it on threads you own (the filter's
    /// workers do); it changes that thread's locale for everything it runs afterwards.
    public static func useCLocale() {
        _ = badgeflow_use_c_locale()
    }
}
