// The payload and event vocabulary stays out of the JSON layer: these are the member names
// the payload checks and the line analyzer look up on every line, hashed once.
extension HashedKey {
    /// `aps`, the APNs dictionary of a payload (and the mark of a bare payload line).
    static let aps = HashedKey("aps")
    /// `aps.event`, the mark of a Live Activity payload.
    static let event = HashedKey("event")
    /// `op`, an envelope's operation.
    static let op = HashedKey("op")
    /// `device`, `account`, `id`, `at`, `payload`, `push-type`, `path`, `count`, `ttl`,
    /// `once`, `force`, `page` and `badge`: the envelope members the line analyzer reads.
    static let device = HashedKey("device")
    static let account = HashedKey("account")
    static let id = HashedKey("id")
    static let at = HashedKey("at")
    static let payload = HashedKey("payload")
    static let pushType = HashedKey("push-type")
    static let path = HashedKey("path")
    static let count = HashedKey("count")
    static let ttl = HashedKey("ttl")
    static let once = HashedKey("once")
    static let force = HashedKey("force")
    static let page = HashedKey("page")
    static let badge = HashedKey("badge")
}
