/// Something the server must learn from the app: a read or a mute, as one line of
/// BadgeFlow's event stream.
///
/// A center records one for every clear that removes a mark (a read; a muted chat's too, so
/// the server forgets that mark as well) and for every run-time change of a path's
/// contribution (a mute or unmute), once it knows whose badges they are
/// (``BadgeCenter/login(account:device:)``). Each has a unique ``id``: a server that runs
/// `badgeflow filter` applies a line once however often it is sent.
///
/// ```swift
/// try center.clear("root.chat.alice")
/// for event in center.pendingEvents {
///     print(event.line)   // {"op":"clear","account":"u42","device":"phone","path":"root.chat.alice","id":"…","at":…}
/// }
/// center.acknowledgeEvents(through: center.pendingEvents.last?.id ?? "")
/// ```
public struct ServerEvent: Sendable, Equatable, Codable, Identifiable {
    /// Which operation the event is.
    public enum Kind: String, Sendable, Equatable, Codable {
        /// A read: `{"op":"clear",…}`.
        case clear
        /// A contribution setting: `{"op":"contribute",…}`.
        case contribute
    }

    /// Which operation this is.
    public var kind: Kind
    /// Unique among every event of every process and install (128 random bits in hex): the
    /// line's `id`, which a server uses to apply it once.
    public var id: String
    /// The event's place among the events of its file or center: 1 for the first, one more
    /// for each after it. It orders the events; ``id`` identifies them.
    public var seq: UInt64
    /// The account the center was given at login.
    public var account: String
    /// The device the center was given at login.
    public var device: String
    /// The path read or set.
    public var path: String
    /// When it happened, in UNIX seconds (the center's clock).
    public var at: Double
    /// For a clear: whether every mark below `path` went too.
    public var force: Bool
    /// For a contribution: `"count"`, `"dot"`, `"none"`, or `"rules"` when the path went back
    /// to the configuration's setting (the server then drops the account's setting).
    public var mode: String?
    /// For a read: what it took off the icon's total, for a server that keeps a plain counter;
    /// `nil` for a setting, and for a read that lowered nothing (a muted chat's).
    public var decrement: Decrement?

    /// Creates an event.
    public init(
        kind: Kind, id: String, seq: UInt64, account: String, device: String, path: String, at: Double,
        force: Bool = false, mode: String? = nil, decrement: Decrement? = nil
    ) {
        self.kind = kind
        self.id = id
        self.seq = seq
        self.account = account
        self.device = device
        self.path = path
        self.at = at
        self.force = force
        self.mode = mode
        self.decrement = decrement
    }

    /// The event as one line of BadgeFlow's event stream (EventLines), without the newline:
    /// `{"op":"clear","account":A,"device":D,"path":P,"id":I,"at":T}` (with `"force":true`
    /// for a forced clear) or `{"op":"contribute","account":A,"device":D,"path":P,"mode":M,"id":I,"at":T}`.
    public var line: String {
        var out = "{\"op\":\"\(kind.rawValue)\",\"account\":"
        JSONText.appendString(account, to: &out)
        out += ",\"device\":"
        JSONText.appendString(device, to: &out)
        out += ",\"path\":"
        JSONText.appendString(path, to: &out)
        if kind == .contribute {
            out += ",\"mode\":"
            JSONText.appendString(mode ?? "rules", to: &out)
        } else if force {
            out += ",\"force\":true"
        }
        out += ",\"id\":"
        JSONText.appendString(id, to: &out)
        out += ",\"at\":"
        JSONText.appendNumber(at, to: &out)
        out += "}"
        return out
    }

    /// A new event id: 128 random bits, 32 lowercase hex digits.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<2 {
            let word = generator.next() as UInt64
            for shift in stride(from: 60, through: 0, by: -4) { bytes.append(digits[Int((word >> UInt64(shift)) & 0xF)]) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The wall clock, in UNIX seconds (a center's default event clock).
    static func wallClock() -> Double {
        System.wallClock()
    }
}

/// The few pieces of JSON text BadgeTree writes itself (event lines): no encoder, no C.
enum JSONText {
    private static let hex: [Character] = Array("0123456789abcdef")

    /// Appends `s` as a JSON string: quotes, backslashes and control characters escaped.
    static func appendString(_ s: String, to out: inout String) {
        out.append("\"")
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u00"
                out.append(hex[Int(scalar.value >> 4)])
                out.append(hex[Int(scalar.value & 0xF)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        out.append("\"")
    }

    /// Appends a number: an integer without a fraction when it is one, else Swift's shortest
    /// round-tripping form (valid JSON); a value that is not finite as 0.
    static func appendNumber(_ x: Double, to out: inout String) {
        guard x.isFinite else {
            out += "0"
            return
        }
        if x == x.rounded(), abs(x) < 1e15 {
            out += String(Int64(x))
        } else {
            out += "\(x)"
        }
    }
}
