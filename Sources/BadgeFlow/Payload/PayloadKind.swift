/// What a payload asks the device to do, derived from its `aps` keys.
///
/// See <doc:PayloadValidation> for how the kind is chosen.
public enum PayloadKind: String, Sendable {
    /// Shows an alert or plays a sound (badge may come along).
    case alert
    /// `content-available` only: wakes the app silently.
    case background
    /// Delivered with push type `voip`.
    case voip
    /// A Live Activity update: the payload has `event`.
    case liveActivity = "live-activity"
    /// Nothing to show but (possibly) the icon badge.
    case badgeOnly = "badge-only"
}
