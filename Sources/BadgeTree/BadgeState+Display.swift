// What a badge view shows: the text for a tab bar item or a badge label, and what to read out.

extension BadgeDisplay {
    /// The text a badge view shows: `nil` to hide it, `""` for a plain dot, the number with
    /// the cap (`"99+"`), or a custom badge's name.
    ///
    /// This is the value `UITabBarItem.badgeValue` takes: UIKit hides the badge for `nil`
    /// and draws an empty red badge for `""`.
    public var badgeValue: String? {
        switch self {
        case .hidden: return nil
        case .dot: return ""
        case .number(let n, let max): return n > max ? "\(max)+" : "\(n)"
        case .custom(let name): return name
        }
    }

    /// A short English description for VoiceOver: `nil` when hidden, `"new"` for a dot,
    /// `"3 unread"`, `"more than 99 unread"`, or a custom badge's name. Apps that localize
    /// build their own from ``BadgeState/count`` and ``BadgeState/display``.
    public var accessibilityLabel: String? {
        switch self {
        case .hidden: return nil
        case .dot: return "new"
        case .number(let n, let max): return n > max ? "more than \(max) unread" : "\(n) unread"
        case .custom(let name): return name
        }
    }
}

extension BadgeState {
    /// The text a tab bar item or badge view shows for this node: `nil` hidden, `""` a
    /// dot, the capped number (`"99+"`), or the custom badge's name.
    ///
    /// ```swift
    /// center.state(of: "root.chat").badgeValue   // "3", "99+", "" (a dot) or nil
    /// ```
    ///
    /// Show this, not ``count`` (which is not capped and is 0 for a dot) and not
    /// ``display``'s `description` (the event stream's text, such as `"custom:new"`).
    public var badgeValue: String? { display.badgeValue }

    /// A short English description for VoiceOver (see ``BadgeDisplay/accessibilityLabel``).
    public var accessibilityLabel: String? { display.accessibilityLabel }
}
