// StateFile's parses of raw bytes: a state's or an account's JSON text handed to json-c as a
// borrowed buffer. Relies on the buffer staying valid for the parse: every JSONRef read from
// it is used before withDocument returns.

extension StateFile {
    /// Reads one account from its JSON text, as ``encodeAccount(_:compact:)`` writes it (the
    /// value of `accounts/ID` in a version 2 file, the `data` column of an SQLite store's
    /// `accounts` table).
    ///
    /// - Parameters:
    ///   - text: the account's JSON object.
    ///   - at: RFC 6901 pointer of `value`, for error messages.
    ///   - file: the state file's path, for error messages.
    ///   - rules: the rules the account's paths must fit.
    /// - Throws: `Failure` when the text is not JSON or a field is missing or malformed.
    static func decodeAccount(_ text: String, at: String, file: String, rules: RuleSet) throws(Failure) -> Account {
        var text = text
        let outcome: Result<Account, Failure> = text.withUTF8 { utf8 in
            do throws(Failure) {
                return .success(try decodeAccount(text: UnsafeRawBufferPointer(utf8), with: JSONParser(), at: at, file: file, rules: rules))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Reads one account from its JSON text (a row of an SQLite store), parsed with
    /// `parser` and read in place: no ``JSONValue`` is built.
    static func decodeAccount(
        text bytes: UnsafeRawBufferPointer, with parser: JSONParser, at: String, file: String, rules: RuleSet
    ) throws(Failure) -> Account {
        let outcome: Result<Account, Failure> = parser.withDocument(bytes) { document in
            switch document {
            case .failure(let error):
                let text = String(decoding: bytes, as: UTF8.self)
                return .failure(Failure(file: file, at: at, message: "not valid JSON: \(error.located(in: text))"))
            case .success(let root):
                do throws(Failure) {
                    return .success(try account(root, at: at, file: file, rules: rules))
                } catch {
                    return .failure(error)
                }
            }
        }
        return try outcome.get()
    }
}

extension StateFile {
    /// Calls `body` with the top-level object of `file`, parsed by json-c and checked for
    /// format and version; nil (and `body` not called) when the file is missing. A file of 0
    /// bytes or only whitespace is not a state (BadgeFlow's saves never leave one).
    static func withDocument<R>(
        _ file: String, _ body: (JSONRef) throws(Failure) -> R
    ) throws(Failure) -> R? {
        guard FileIO.exists(file) else { return nil }
        var text: String
        do { text = try FileIO.readString(file) } catch {
            throw Failure(file: file, at: "", message: error.message)
        }
        if text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw StateFormat.emptyFile(file, text.isEmpty ? "empty file" : "empty file (only whitespace)")
        }
        let source = text
        let parser = JSONParser()
        let outcome: Result<R, Failure> = text.withUTF8 { utf8 in
            parser.withDocument(UnsafeRawBufferPointer(utf8)) { document in
                let root: JSONRef
                switch document {
                case .failure(let error):
                    return .failure(
                        Failure(file: file, at: "", message: "not valid JSON (\(error.located(in: source))); is it a state file?"))
                case .success(let r): root = r
                }
                guard root["format"]?.string == format else {
                    return .failure(
                        Failure(file: file, at: "/format", message: "not a BadgeFlow state file (no \"format\": \"\(format)\")"))
                }
                guard root["version"]?.int == version else {
                    return .failure(
                        Failure(
                            file: file, at: "/version",
                            message:
                                "state version \(root["version"]?.serialized(pretty: false) ?? "none") is not supported; this BadgeFlow reads version \(version)"
                        ))
                }
                do throws(Failure) { return .success(try body(root)) } catch { return .failure(error) }
            }
        }
        return try outcome.get()
    }
}
