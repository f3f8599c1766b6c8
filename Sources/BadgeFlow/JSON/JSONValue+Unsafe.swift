// JSONValue's parse from raw bytes: the text's UTF-8 handed to json-c as a borrowed buffer.
// Relies on the buffer staying valid for the parse; the value built owns its storage.

extension JSONValue {
    /// Parses JSON text with json-c into an owned value.
    ///
    /// - Throws: `JSONParseError` with the byte offset of the fault.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let parser = JSONParser()
        let result: Result<JSONValue, JSONParseError> = text.withUTF8 { buf in
            parser.withDocument(UnsafeRawBufferPointer(buf)) { doc in doc.map { $0.toValue() } }
        }
        return try result.get()
    }
}
