/// Decides when an app should re-sync its unread count, on event time only.
///
/// One value per device. Feed it every event with its time; it answers with the reason
/// to sync, if any. It never reads the wall clock, so replays give the same answers.
///
/// ```swift
/// var sync = SyncPolicy(configuration: .init(pages: ["home"], interval: 60, away: 60))
/// sync.handle(.login, at: 0)                 // nil
/// sync.handle(.appear("home"), at: 1)        // .firstAppearance
/// sync.handle(.tick, at: 62)                 // .interval
/// ```
public struct SyncPolicy: Sendable, Equatable, Codable {
    /// Why a sync is due, in priority order.
    ///
    /// The raw value is the text result lines carry in `"sync": {"reason": …}`.
    public enum Reason: String, Sendable, Comparable, Codable {
        /// A push was received while logged in.
        case push
        /// A watched page appeared for the first time since login.
        case firstAppearance = "first-appearance"
        /// A watched page reappeared after being away longer than `away` seconds.
        case returned
        /// `interval` seconds passed since the last sync while a watched page was visible in
        /// the foreground.
        case interval

        private var rank: Int {
            switch self {
            case .push: return 0
            case .firstAppearance: return 1
            case .returned: return 2
            case .interval: return 3
            }
        }

        /// Whether `a` comes before `b` in priority (`push` first, `interval` last).
        public static func < (a: Reason, b: Reason) -> Bool { a.rank < b.rank }
    }

    /// What happened, as far as syncing cares.
    public enum Happening: Sendable, Equatable {
        /// The user logged in: syncing starts, the interval clock restarts and no page has
        /// appeared yet (a repeated login while logged in changes nothing).
        case login
        /// The user logged out: no syncs until the next login.
        case logout
        /// The app came to the foreground.
        case foreground
        /// The app went to the background: the interval stops triggering.
        case background
        /// A page became visible.
        case appear(String)
        /// A page stopped being visible; for a watched page this starts its away time.
        case disappear(String)
        /// A push was received.
        case push
        /// A `tick`: only the interval is checked.
        case tick
        /// Anything else (sets, clears, snapshots): only the interval is checked.
        case other
    }

    /// The policy's settings: which pages are watched and how long its intervals are.
    public struct Configuration: Sendable, Equatable, Codable {
        /// Watched pages.
        public var pages: Set<String>
        /// Seconds between syncs while a watched page is visible in the foreground.
        public var interval: Double
        /// Seconds a watched page must be away before its return triggers a sync.
        public var away: Double

        /// Creates settings; the defaults watch `home` and `mine` with 60-second intervals.
        public init(pages: Set<String> = ["home", "mine"], interval: Double = 60, away: Double = 60) {
            self.pages = pages
            self.interval = interval
            self.away = away
        }
    }

    /// The settings (from the rules file, when the stream drives the policy).
    public let configuration: Configuration

    /// Whether the user is logged in.
    public private(set) var loggedIn: Bool
    /// Whether the app is in the foreground (devices start in the foreground).
    public private(set) var foreground: Bool
    /// Pages visible now.
    public private(set) var visible: Set<String>
    /// Watched pages that have appeared since login.
    public private(set) var appearedSinceLogin: Set<String>
    /// When each watched page last disappeared.
    public private(set) var disappearedAt: [String: Double]
    /// Time of the last sync, or of login when there has been none.
    public private(set) var intervalStart: Double

    /// Creates the state of a new device: logged out, in the foreground, no page visible.
    ///
    /// - Parameter configuration: the watched pages and the interval and away times.
    public init(configuration: Configuration) {
        self.configuration = configuration
        loggedIn = false
        foreground = true
        visible = []
        appearedSinceLogin = []
        disappearedAt = [:]
        intervalStart = 0
    }

    /// Applies `happening` at time `now` and returns the sync it triggers, if any.
    ///
    /// At most one reason is returned; when several hold, the first in ``Reason``'s order
    /// wins. Nothing triggers while logged out. A returned reason restarts the interval clock.
    ///
    /// - Parameters:
    ///   - happening: what happened.
    ///   - now: the event time in seconds; never the wall clock.
    /// - Returns: the reason to sync now, or nil.
    public mutating func handle(_ happening: Happening, at now: Double) -> Reason? {
        var reason: Reason? = nil
        func propose(_ r: Reason) { if reason.map({ r < $0 }) ?? true { reason = r } }
        switch happening {
        case .login:
            if !loggedIn {
                loggedIn = true
                appearedSinceLogin = []
                intervalStart = now
            }
        case .logout:
            loggedIn = false
            appearedSinceLogin = []
        case .foreground: foreground = true
        case .background: foreground = false
        case .appear(let page):
            visible.insert(page)
            if loggedIn && configuration.pages.contains(page) {
                if !appearedSinceLogin.contains(page) {
                    propose(.firstAppearance)
                } else if let left = disappearedAt[page], now - left > configuration.away {
                    propose(.returned)
                }
                appearedSinceLogin.insert(page)
            }
        case .disappear(let page):
            if visible.remove(page) != nil, configuration.pages.contains(page) { disappearedAt[page] = now }
        case .push:
            if loggedIn { propose(.push) }
        case .tick, .other:
            break
        }
        // The time test first: it is usually false, and the set test hashes page names.
        if loggedIn && foreground && now - intervalStart >= configuration.interval
            && !visible.isDisjoint(with: configuration.pages)
        {
            propose(.interval)
        }
        guard loggedIn, let reason else { return nil }
        intervalStart = now
        return reason
    }

    /// Restores a saved policy state, as a state file holds it.
    ///
    /// - Parameters:
    ///   - configuration: the policy's settings.
    ///   - loggedIn: whether the user is logged in.
    ///   - foreground: whether the app is in the foreground.
    ///   - visible: the pages visible now.
    ///   - appearedSinceLogin: watched pages that have appeared since login.
    ///   - disappearedAt: when each watched page last disappeared.
    ///   - intervalStart: the time of the last sync, or of login.
    public init(
        configuration: Configuration, loggedIn: Bool, foreground: Bool, visible: Set<String>,
        appearedSinceLogin: Set<String>, disappearedAt: [String: Double], intervalStart: Double
    ) {
        // The properties have no default values: with them, this init set each first and
        // then replaced it, and copied the policy it made into its result.
        self.configuration = configuration
        self.loggedIn = loggedIn
        self.foreground = foreground
        self.visible = visible
        self.appearedSinceLogin = appearedSinceLogin
        self.disappearedAt = disappearedAt
        self.intervalStart = intervalStart
    }
}
