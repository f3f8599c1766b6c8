/// The size and depth limits APNs and BadgeFlow put on payloads.
public enum PayloadLimits {
    /// Largest payload APNs accepts, in bytes.
    public static let maxBytes = 4096
    /// Largest VoIP payload (`push-type: voip`), in bytes.
    public static let maxVoIPBytes = 5120
    /// Deepest nesting of arrays and objects accepted.
    public static let maxDepth = 32

    /// The values Apple documents for the `apns-push-type` header.
    public static let pushTypes: [String] = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets",
    ]

    /// Push types that never display an alert: an alert in such a push is `push-type-mismatch`.
    public static let pushTypesWithoutAlert: Set<String> = ["voip", "widgets", "location", "complication", "fileprovider"]

    /// The top-level key a push type without `aps` requires (`mdm`: the PushMagic string;
    /// `fileprovider`: `container-identifier`), nil for the others.
    public static func requiredKey(pushType: String) -> String? {
        switch pushType {
        case "mdm": return "mdm"
        case "fileprovider": return "container-identifier"
        default: return nil
        }
    }

    /// A Live Activity `timestamp` (or any `stale-date`, `dismissal-date`) above this is
    /// taken for milliseconds.
    public static let maxTimestampSeconds: Int64 = 100_000_000_000

    /// The byte limit for a push of the given APNs push type.
    public static func maxBytes(pushType: String?) -> Int {
        pushType == "voip" ? maxVoIPBytes : maxBytes
    }
}
