/// What a payload asks the device to do, derived from its `aps` keys.
///
/// The raw value is how the kind is written in result lines and in `badgeflow validate --json`.
/// See <doc:PayloadValidation> for how the kind is chosen.
public enum PayloadKind: String, Sendable {
    /// Shows an alert or plays a sound (badge may come along).
    case alert
    /// `content-available` only: wakes the app silently. Also every `mdm` and `fileprovider`
    /// push (nothing is shown, the icon is left as it was).
    case background
    /// Delivered with push type `voip`.
    case voip
    /// A Live Activity update: the payload has `event`.
    case liveActivity = "live-activity"
    /// Sets the icon badge (a `badge` key) and shows no alert and plays no sound.
    case badgeOnly = "badge-only"
    /// None of alert, sound, badge or content-available: `{"aps":{}}`, a `thread-id` alone,
    /// a payload that carries only custom keys. Written `none`; not named `.none`, which would
    /// read as `Optional.none` wherever a kind is optional.
    case noAction = "none"

    /// Whether iOS sets the app icon's badge from a push of this kind (`alert`, `badge-only`,
    /// `none`); a `background`, `voip` or `live-activity` push leaves the icon as it was.
    public var setsIcon: Bool {
        switch self {
        case .alert, .badgeOnly, .noAction: return true
        case .background, .voip, .liveActivity: return false
        }
    }
}
