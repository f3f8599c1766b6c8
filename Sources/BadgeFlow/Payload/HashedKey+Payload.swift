// The payload and event vocabulary stays out of the JSON layer: these are the member names
// the payload checks and the line analyzer look up on every line, hashed once.
extension HashedKey {
    /// `aps`, the APNs dictionary of a payload (and the mark of a bare payload line).
    static let aps = HashedKey("aps")
    /// `aps.event`, the mark of a Live Activity payload.
    static let event = HashedKey("event")
    /// `op`, an envelope's operation.
    static let op = HashedKey("op")
}
