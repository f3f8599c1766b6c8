/// A badge tree shared between threads, with observers.
///
/// ```swift
/// let center = BadgeCenter()
/// let token = try center.observe("root.promotion") { state in
///     print(state.path, state.badgeValue ?? "hidden")   // at once, then on every change
/// }
/// try center.set("root.promotion.item1")                // observer hears "" (a dot)
/// token.cancel()
/// ```
///
/// ## Threading
///
/// Every operation takes one lock, changes the tree, and queues the notifications it caused.
/// Four ways to hear them:
///
/// - ``observe(_:owner:_:)-(String,AnyObject?,_)``: the handler hears the current state on the calling thread
///   before the call returns, then every change after the lock is released, on the thread
///   that made the change, in the order the changes were made; if another thread is already
///   delivering, it delivers these too and the caller returns at once. A handler may call back
///   into the center (even mutate it) without deadlocking. Use it off the UI, or hop yourself.
/// - ``observeOnMainActor(_:owner:coalescing:_:)-(_,AnyObject?,_,_)``: the handler is `@MainActor`; it hears the
///   current state before the call returns and later changes on the main actor, in change
///   order, whichever thread made them (with `coalescing`, only the latest once per turn).
///   This is the one for UIKit.
/// - ``states(of:bufferingPolicy:)``: an `AsyncStream` of states (current first, then changes);
///   it ends when the consuming task is cancelled or the center is gone.
/// - ``model(for:)-(String)``: an `@Observable` model whose `state` SwiftUI views read directly.
///
/// ```swift
/// // SwiftUI: the view redraws when the model's state changes.
/// struct ChatTab: View {
///     let chat: BadgeModel   // center.model(for: "root.chat")
///     var body: some View {
///         ChatList().badge(chat.state.badgeValue.map { Text($0) })
///     }
/// }
///
/// // UIKit: the observation ends with the controller; the handler gets it, not `self`.
/// final class TabController: UITabBarController {
///     private var token: BadgeObservation?
///     override func viewDidLoad() {
///         super.viewDidLoad()
///         token = center.observeOnMainActor(BadgePath.root.child("chat"), owner: self) { tabs, state in
///             tabs.tabBar.items?[1].badgeValue = state.badgeValue
///         }
///     }
/// }
/// ```
///
/// An `owner` is compared by identity while it lives and is never retained: a new object
/// that happens to reuse a released one's address is a new owner, and the observation ends
/// when the owner is deallocated, whether or not its token is still held.
public final class BadgeCenter: Sendable {
    /// One observation's handler. A class, so that queueing a notification retains one
    /// object; every `var` is read and written under the center's lock only.
    private final class Observer {
        let id: UInt64
        let path: String
        /// The owner, held weakly: identity is compared while it lives, so a new object at a
        /// dead one's address is a new owner (an `ObjectIdentifier` would be reused), and the
        /// observation ends once it is gone.
        let owner: WeakOwner?
        let handler: @Sendable (BadgeState) -> Void
        /// Which handler this is: a repeated observation keeps `id` but replaces the handler,
        /// and notifications queued for the old one are dropped.
        let serial: UInt64
        /// Tokens handed out for this observation; it ends when the last one is released.
        var tokens: Int
        /// Called when the center goes away while the observation lives (a stream finishes).
        let onEnd: (@Sendable () -> Void)?
        /// Set when the observation ends or this handler is replaced: queued notifications
        /// for it are dropped.
        var ended = false

        init(
            id: UInt64, path: String, owner: WeakOwner?, handler: @escaping @Sendable (BadgeState) -> Void,
            serial: UInt64, tokens: Int, onEnd: (@Sendable () -> Void)?
        ) {
            self.id = id
            self.path = path
            self.owner = owner
            self.handler = handler
            self.serial = serial
            self.tokens = tokens
            self.onEnd = onEnd
        }
    }

    private struct State {
        var tree: BadgeTree
        var sync: SyncPolicy
        var observers: [String: [Observer]] = [:]
        var nextID: UInt64 = 1
        var pending: [(Observer, BadgeState)] = []
        /// An empty queue buffer kept for the next delivery (see `deliver`).
        var spare: [(Observer, BadgeState)] = []
        var delivering = false
        /// Changes held back, by serial, for observers whose current state is being handed
        /// to them by `observe` (so they hear it first).
        var held: [UInt64: [(Observer, BadgeState)]] = [:]
        /// Observers with an owner: when one is deallocated, these are swept.
        var owned = 0
        /// Decrement listeners (``decrements``) by id.
        var decrementListeners: [UInt64: AsyncStream<DecrementRequest>.Continuation] = [:]
        /// The tree is compacted (its empty nodes freed) when a change leaves it with more
        /// nodes than this: twice its node count after the last compaction, or the minimum.
        var compactAbove = BadgeCenter.autoCompactMinimum
        /// The code's configuration: the run-time settings in `overrides` are what differs.
        var base: BadgeTree.Configuration
        /// Run-time settings that differ from `base`.
        var overrides = SettingOverrides()
        /// The login: every server event names both.
        var account: String?
        var device: String?
        /// Server events not yet acknowledged, oldest first.
        var events: [ServerEvent] = []
        var nextEventSeq: UInt64 = 1
        /// Ids acknowledged here that the file last read still held (a reload must not bring
        /// them back); only kept for a center that reads a file.
        var acknowledged: Set<String> = []
        var fileBacked = false
        /// Server event listeners (``serverEvents()``) by id.
        var eventListeners: [UInt64: AsyncStream<ServerEvent>.Continuation] = [:]
        /// The change being recorded for the shared file's journal (`withSharedFile`).
        var recording: JournalRecord?
        /// The events' clock.
        var clock: @Sendable () -> Double = ServerEvent.wallClock
        /// Settings the file held that the configuration could not take.
        var dropped: [DroppedSetting] = []

        init(tree: BadgeTree, sync: SyncPolicy, base: BadgeTree.Configuration? = nil) {
            self.tree = tree
            self.sync = sync
            self.base = base ?? tree.configuration
            compactAbove = Self.compactionBound(for: tree)
        }

        /// The node count above which `tree` is compacted next.
        static func compactionBound(for tree: BadgeTree) -> Int {
            max(BadgeCenter.autoCompactMinimum, 2 * tree.nodeCount)
        }
    }

    /// Below this many nodes a center never compacts its tree by itself (see ``compact()``).
    public static let autoCompactMinimum = 64

    private let state: Locked<State>
    /// Models handed out by ``model(for:)-(String)``, weakly, by path.
    let models = Locked<[String: WeakModel]>([:])

    /// Creates a center over an empty tree.
    ///
    /// - Parameters:
    ///   - configuration: The tree's root name, display cap and display modes.
    ///   - sync: The unread-sync policy's settings.
    public init(configuration: BadgeTree.Configuration = .init(), sync: SyncPolicy.Configuration = .init()) {
        state = Locked(State(tree: BadgeTree(configuration: configuration), sync: SyncPolicy(configuration: sync)))
    }

    /// Creates a center over an existing tree and sync policy state.
    public init(tree: BadgeTree, sync: SyncPolicy = SyncPolicy(configuration: .init())) {
        state = Locked(State(tree: tree, sync: sync))
    }

    /// Creates a center from an archive whose settings are `base` with the archive's overrides.
    init(archive: Archive, base: BadgeTree.Configuration, fileBacked: Bool = true) {
        var s = State(tree: archive.tree, sync: archive.sync, base: base)
        s.overrides = archive.overrides
        s.account = archive.account
        s.device = archive.device
        s.events = archive.events
        s.nextEventSeq = archive.nextEventSeq
        s.fileBacked = fileBacked
        state = Locked(s)
    }

    deinit {
        // Streams of states and decrements finish: nothing will ever change again.
        let (observers, listeners, eventListeners) = state.withLock { s in
            (s.observers, s.decrementListeners, s.eventListeners)
        }
        for list in observers.values { for observer in list { observer.onEnd?() } }
        for continuation in listeners.values { continuation.finish() }
        for continuation in eventListeners.values { continuation.finish() }
    }

    /// The unread-sync policy's state as it is now.
    public var syncPolicy: SyncPolicy { state.withLock { $0.sync } }

    /// Tells the sync policy what happened, at event time `now`, and returns the sync it
    /// triggers, if any (see ``SyncPolicy/handle(_:at:)``).
    @discardableResult
    public func handle(_ happening: SyncPolicy.Happening, at now: Double) -> SyncPolicy.Reason? {
        state.withLock { s in
            let reason = s.sync.handle(happening, at: now)
            if s.recording != nil { s.recording?.sync = s.sync }
            return reason
        }
    }

    /// A copy of the tree as it is now.
    public var tree: BadgeTree { state.withLock { $0.tree } }

    /// The settings in force (they change with ``setContribution(_:of:)`` and ``setDisplay(_:of:)``).
    public var configuration: BadgeTree.Configuration { state.withLock { $0.tree.configuration } }

    /// The root's count: the number for the app icon (`UNMutableNotificationContent.badge`,
    /// `UNUserNotificationCenter.setBadgeCount`).
    public var total: Int { state.withLock { $0.tree.total } }

    /// The marks that make `path` show, deepest first (see ``BadgeTree/explain(_:)``): why a
    /// badge is there.
    public func explain(_ path: String) -> [MarkRecord] { state.withLock { $0.tree.explain(path) } }

    /// The current state of `path`; a path with no node (or not in this tree) is hidden.
    public func state(of path: String) -> BadgeState { state.withLock { $0.tree.state(of: path) } }

    /// The current state of `path`. A path of another root is a programming error: it stops
    /// a debug build (an `assertionFailure`) and reads as hidden in a release build.
    public func state(of path: BadgePath) -> BadgeState {
        refuseForeign(path)
        return state(of: path.rawValue)
    }

    /// Stops a debug build, naming the path and the center's root, when `path` is not a
    /// valid path of this center (built from ``BadgePath/root`` for a center whose root is
    /// another, say): the `BadgePath` forms that cannot throw refuse it loudly instead of
    /// showing a blank badge. Release builds go on (the path reads as hidden).
    func refuseForeign(_ path: BadgePath) {
        do {
            try validate(path.rawValue)
        } catch {
            assertionFailure("BadgeCenter refused \(error)")
        }
    }

    /// Sets a dot on `path` (see `BadgeTree.set(_:)`).
    @discardableResult
    public func set(_ path: String) throws(BadgePathError) -> Outcome {
        try perform(.set(path: path, count: nil, expires: nil, once: nil, timed: false))
    }

    /// Sets `path`'s count (see `BadgeTree.set(_:count:)`).
    @discardableResult
    public func set(_ path: String, count: Int) throws(BadgePathError) -> Outcome {
        try perform(.set(path: path, count: count, expires: nil, once: nil, timed: false))
    }

    /// Adds to `path`'s count (see `BadgeTree.increment(_:by:)`).
    @discardableResult
    public func increment(_ path: String, by k: Int = 1) throws(BadgePathError) -> Outcome {
        try perform(.increment(path: path, by: k))
    }

    /// Sets a dot on `path` that expires at `expires` and holds the once token `once` (see
    /// `BadgeTree.set(_:expires:once:source:)`); ``expire(through:)`` clears it when due.
    @discardableResult
    public func set(_ path: String, expires: Double?, once: String? = nil) throws(BadgePathError) -> Outcome {
        try perform(.set(path: path, count: nil, expires: expires, once: once, timed: true))
    }

    /// Sets `path`'s count, expiring at `expires` (see `BadgeTree.set(_:count:expires:once:source:)`).
    @discardableResult
    public func set(_ path: String, count: Int, expires: Double?, once: String? = nil) throws(BadgePathError) -> Outcome {
        try perform(.set(path: path, count: count, expires: expires, once: once, timed: true))
    }

    /// Clears every mark due at or before `time` (see `BadgeTree.expire(through:)`); observers
    /// hear the changes as for a clear.
    @discardableResult
    public func expire(through time: Double) -> Expiry {
        var expiry = Expiry.none
        // Never throws: expiring validates no path.
        _ = try? perform(.expire(through: time)) { expiry = $0 }
        return expiry
    }

    /// Clears `path` (see `BadgeTree.clear(_:force:)`).
    @discardableResult
    public func clear(_ path: String, force: Bool = false) throws(BadgePathError) -> Outcome {
        try perform(.clear(path: path, force: force))
    }

    /// Changes how `path`'s aggregate reaches its parent, on the live center: `.none` mutes a
    /// chat (its count stays on its own badge but leaves the tab's and the icon's).
    ///
    /// Observers hear every node whose (count, show) changed; when the icon's total drops, the
    /// outcome carries the decrement to send (its `paths` is `[path]`).
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    /// - Complexity: O(nodes).
    @discardableResult
    public func setContribution(_ contribution: Contribution, of path: String) throws(BadgePathError) -> Outcome {
        try perform(.contribute(path: path, mode: contribution))
    }

    /// Changes how `path` shows its badge, on the live center; its observers hear the new
    /// display when it differs.
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree, or the mode is a
    ///   custom badge with an empty name.
    @discardableResult
    public func setDisplay(_ mode: DisplayMode, of path: String) throws(BadgePathError) -> Outcome {
        try perform(.display(path: path, mode: mode))
    }

    /// Frees the nodes that hold nothing (see ``BadgeTree/compacted()``); observers hear
    /// nothing, since no path's state changes.
    ///
    /// A center also does this by itself: when a change leaves its tree with more than twice
    /// the nodes it had after the last compaction (and more than ``autoCompactMinimum``), so
    /// observing and clearing one chat cell after another never piles up nodes. Observers and
    /// models are kept by path, not by node: they stay, and hear nothing.
    ///
    /// - Returns: how many nodes were freed.
    @discardableResult
    public func compact() -> Int {
        state.withLock { s in
            let before = s.tree.nodeCount
            s.tree = s.tree.compacted()
            s.compactAbove = State.compactionBound(for: s.tree)
            return before - s.tree.nodeCount
        }
    }

    /// Observes `path`: `handler` hears its state at once (on this thread, before the call
    /// returns, even while another thread is delivering, so this first call may run at the
    /// same time as another observation's handler), then each time its (count, show) or
    /// display changes, through descendants too, and only then; the changes made meanwhile
    /// come after the first call, in order.
    ///
    /// Observing the same path again with the same `owner` replaces the handler and returns
    /// the same observation. The observation ends when the token is cancelled or released,
    /// or when `owner` is deallocated. Observing makes no node: a path that is never marked
    /// costs only its observer.
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    public func observe(
        _ path: String, owner: AnyObject? = nil,
        _ handler: @escaping @Sendable (BadgeState) -> Void
    ) throws(BadgePathError) -> BadgeObservation {
        try observe(path, owner: owner, onEnd: nil, handler)
    }

    /// Observes `path` on behalf of `owner`, which the handler receives, so it never needs to
    /// capture it: the center holds the owner weakly and the observation ends when it is
    /// deallocated.
    ///
    /// ```swift
    /// try center.observe("root.chat", owner: badgeCache) { cache, state in cache.store(state) }
    /// ```
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    public func observe<Owner: AnyObject & Sendable>(
        _ path: String, owner: Owner,
        _ handler: @escaping @Sendable (Owner, BadgeState) -> Void
    ) throws(BadgePathError) -> BadgeObservation {
        try observe(path, owner: owner, onEnd: nil) { [weak owner] state in
            if let owner { handler(owner, state) }
        }
    }

    /// Observes a `BadgePath`; it does not throw. A path outside this tree's root is a
    /// programming error: it stops a debug build (a release build hears it once, hidden).
    public func observe(
        _ path: BadgePath, owner: AnyObject? = nil,
        _ handler: @escaping @Sendable (BadgeState) -> Void
    ) -> BadgeObservation {
        refuseForeign(path)
        return register(path.rawValue, owner: owner, onEnd: nil, handler)
    }

    func observe(
        _ path: String, owner: AnyObject?, onEnd: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (BadgeState) -> Void
    ) throws(BadgePathError) -> BadgeObservation {
        try validate(path)
        return register(path, owner: owner, onEnd: onEnd, handler)
    }

    /// Checks that `path` is valid in this tree (well formed, under the root).
    func validate(_ path: String) throws(BadgePathError) {
        try state.withLock { (s: inout State) throws(BadgePathError) in try s.tree.validate(path) }
    }

    /// Adds (or replaces) an observer, hands it the current state on this thread, then lets
    /// the changes held back meanwhile go.
    private func register(
        _ path: String, owner: AnyObject?, onEnd: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (BadgeState) -> Void
    ) -> BadgeObservation {
        let (id, serial, current) = state.withLock { (s: inout State) -> (UInt64, UInt64, BadgeState) in
            var list = s.observers[path] ?? []
            let id: UInt64
            let serial = s.nextID
            s.nextID += 1
            if let owner, let existing = list.firstIndex(where: { $0.owner?.is(owner) == true }) {
                id = list[existing].id
                s.held[list[existing].serial] = nil
                list[existing].ended = true
                list[existing] = Observer(
                    id: id, path: path, owner: list[existing].owner, handler: handler,
                    serial: serial, tokens: list[existing].tokens + 1, onEnd: onEnd)
            } else {
                id = serial
                if owner != nil { s.owned += 1 }
                list.append(
                    Observer(
                        id: id, path: path, owner: owner.map(WeakOwner.init), handler: handler,
                        serial: serial, tokens: 1, onEnd: onEnd))
            }
            s.observers[path] = list
            s.held[serial] = []
            return (id, serial, s.tree.state(of: path))
        }
        handler(current)
        state.withLock { s in
            if let held = s.held.removeValue(forKey: serial) { s.pending.append(contentsOf: held) }
        }
        deliver()
        return BadgeObservation(center: self, id: id, path: path)
    }

    /// Number of live observations (for tests and diagnostics); observations whose owner is
    /// gone are not counted.
    public var observationCount: Int {
        state.withLock { s in
            Self.sweepOwners(in: &s)
            return s.observers.values.reduce(0) { $0 + $1.count }
        }
    }

    /// Whether observation `id` of `path` is still live.
    package func isObserving(id: UInt64, path: String) -> Bool {
        state.withLock { s in
            s.observers[path]?.contains { $0.id == id && $0.owner?.isGone != true } ?? false
        }
    }

    package func cancel(id: UInt64, path: String) {
        state.withLock { s in Self.end(id: id, path: path, in: &s) }
    }

    /// Drops one token of an observation, and ends it when that was the last.
    package func release(id: UInt64, path: String) {
        state.withLock { s in
            guard let i = s.observers[path]?.firstIndex(where: { $0.id == id }) else { return }
            guard let observer = s.observers[path]?[i] else { return }
            observer.tokens -= 1
            if observer.tokens == 0 { Self.end(id: id, path: path, in: &s) }
        }
    }

    private static func end(id: UInt64, path: String, in s: inout State) {
        guard let list = s.observers[path], let i = list.firstIndex(where: { $0.id == id }) else { return }
        if list[i].owner != nil { s.owned -= 1 }
        list[i].ended = true
        s.held[list[i].serial] = nil
        s.observers[path]?.remove(at: i)
        if s.observers[path]?.isEmpty == true { s.observers[path] = nil }
        s.pending.removeAll { $0.0.id == id }
    }

    /// Ends every observation whose owner has been deallocated.
    private static func sweepOwners(in s: inout State) {
        guard s.owned > 0 else { return }
        var dead: [(UInt64, String)] = []
        for list in s.observers.values {
            for o in list where o.owner?.isGone == true { dead.append((o.id, o.path)) }
        }
        for (id, path) in dead { end(id: id, path: path, in: &s) }
    }

    /// Applies one operation under the lock: the tree changes, the shared file's journal (when
    /// recording) gets the operation, a read or a setting records its server event, and
    /// observers are queued, then told.
    private func perform(
        _ op: JournalOp, expiry: (Expiry) -> Void = { _ in }
    ) throws(BadgePathError) -> Outcome {
        let outcome = try state.withLock { (s: inout State) throws(BadgePathError) -> Outcome in
            let marksBefore = s.tree.markCount
            let overrideBefore: Contribution?
            if case .contribute(let path, _) = op { overrideBefore = s.overrides.contribute[path] } else { overrideBefore = nil }
            var expired = Expiry.none
            let outcome: Outcome
            if case .expire(let time) = op {
                expired = s.tree.expire(through: time)
                outcome = expired.outcome
            } else {
                outcome = try Self.apply(op, tree: &s.tree, overrides: &s.overrides, base: s.base)
            }
            // Amortised: a compaction costs O(marks · depth) and comes only once the node
            // count has doubled since the last one, so O(depth) per node made.
            if s.tree.nodeCount > s.compactAbove {
                s.tree = s.tree.compacted()
                s.compactAbove = State.compactionBound(for: s.tree)
            }
            s.recording?.ops.append(op)
            switch op {
            case .clear(let path, let force) where s.tree.markCount < marksBefore:
                Self.record(.clear, path: path, force: force, mode: nil, decrement: outcome.decrement, in: &s)
            case .contribute(let path, _) where s.overrides.contribute[path] != overrideBefore:
                let mode = s.overrides.contribute[path]?.rawValue ?? "rules"
                Self.record(.contribute, path: path, force: false, mode: mode, decrement: nil, in: &s)
            default: break
            }
            Self.queue(outcome, in: &s)
            expiry(expired)
            return outcome
        }
        deliver()
        return outcome
    }

    /// Applies one operation to a tree and its run-time settings: what a center does, and
    /// what a reader of the shared file's journal replays. A setting equal to `base`'s
    /// removes its override; a setting never carries a decrement (it is not a read).
    static func apply(
        _ op: JournalOp, tree: inout BadgeTree, overrides: inout SettingOverrides, base: BadgeTree.Configuration
    ) throws(BadgePathError) -> Outcome {
        switch op {
        case .set(let path, let count, let expires, let once, let timed):
            if timed {
                if let count { return try tree.set(path, count: count, expires: expires, once: once) }
                return try tree.set(path, expires: expires, once: once)
            }
            if let count { return try tree.set(path, count: count) }
            return try tree.set(path)
        case .increment(let path, let k):
            return try tree.increment(path, by: k)
        case .clear(let path, let force):
            return try tree.clear(path, force: force)
        case .expire(let time):
            return tree.expire(through: time).outcome
        case .contribute(let path, let mode):
            var outcome = try tree.setContribution(mode, of: path)
            outcome.decrement = nil
            if mode == (base.contribute[path] ?? .count) {
                overrides.contribute[path] = nil
                tree.configuration.contribute[path] = base.contribute[path]
            } else {
                overrides.contribute[path] = mode
            }
            return outcome
        case .display(let path, let mode):
            let outcome = try tree.setDisplay(mode, of: path)
            if mode == (base.display[path] ?? .number) {
                overrides.display[path] = nil
                tree.configuration.display[path] = base.display[path]
            } else {
                overrides.display[path] = mode
            }
            return outcome
        }
    }

    /// Records a server event (when logged in) and tells its listeners.
    private static func record(
        _ kind: ServerEvent.Kind, path: String, force: Bool, mode: String?, decrement: Decrement?, in s: inout State
    ) {
        guard let account = s.account, let device = s.device else { return }
        let event = ServerEvent(
            kind: kind, id: ServerEvent.newID(), seq: s.nextEventSeq, account: account, device: device, path: path,
            at: s.clock(), force: force, mode: mode, decrement: decrement)
        s.nextEventSeq += 1
        s.events.append(event)
        if var recording = s.recording {
            recording.events = (recording.events ?? []) + [event]
            s.recording = recording
        }
        announce(event, in: &s)
    }

    /// Hands a new event to the listeners of ``serverEvents()`` and, for a read, of ``decrements()``.
    private static func announce(_ event: ServerEvent, in s: inout State) {
        for continuation in s.eventListeners.values { continuation.yield(event) }
        if let request = DecrementRequest(event), !s.decrementListeners.isEmpty {
            for continuation in s.decrementListeners.values { continuation.yield(request) }
        }
    }

    /// Queues the notifications `outcome` causes (under the lock), for their observers.
    private static func queue(_ outcome: Outcome, in s: inout State) {
        if !s.observers.isEmpty {
            for change in outcome.changes {
                guard let list = s.observers[change.path] else { continue }
                for observer in list {
                    if !s.held.isEmpty, s.held[observer.serial] != nil {
                        s.held[observer.serial]?.append((observer, change))
                    } else {
                        s.pending.append((observer, change))
                    }
                }
            }
        }
    }

    /// Delivers queued notifications unless another call is already doing so.
    private func deliver() {
        while true {
            // Double-buffered: the queue is swapped for the spare (empty, with capacity) and
            // the delivered buffer becomes the next spare, so delivering allocates nothing.
            let taken: [(Observer, BadgeState)]? = state.withLock { s in
                if s.delivering || s.pending.isEmpty { return nil }
                s.delivering = true
                var out: [(Observer, BadgeState)] = []
                swap(&out, &s.spare)  // out: the spare buffer; spare: empty
                swap(&out, &s.pending)  // out: the queue to deliver; pending: the spare buffer
                return out
            }
            guard var batch = taken else { return }
            for (observer, change) in batch {
                let live = state.withLock { s -> Bool in
                    if observer.ended { return false }
                    if let owner = observer.owner, owner.isGone {
                        Self.end(id: observer.id, path: observer.path, in: &s)
                        return false
                    }
                    return true
                }
                if live { observer.handler(change) }
            }
            batch.removeAll(keepingCapacity: true)
            state.withLock { s in
                s.delivering = false
                s.spare = batch
            }
        }
    }

    /// Registers a listener for ``decrements``; it hears the pending reads' decrements first.
    func addDecrementListener(_ continuation: AsyncStream<DecrementRequest>.Continuation) -> UInt64 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.decrementListeners[id] = continuation
            for event in s.events { if let request = DecrementRequest(event) { continuation.yield(request) } }
            return id
        }
    }

    func removeDecrementListener(_ id: UInt64) {
        _ = state.withLock { s in s.decrementListeners.removeValue(forKey: id) }
    }

    /// Registers a listener for ``serverEvents()``; it hears the pending events first.
    func addEventListener(_ continuation: AsyncStream<ServerEvent>.Continuation) -> UInt64 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.eventListeners[id] = continuation
            for event in s.events { continuation.yield(event) }
            return id
        }
    }

    func removeEventListener(_ id: UInt64) {
        _ = state.withLock { s in s.eventListeners.removeValue(forKey: id) }
    }

    /// Takes on what a file holds (a reload, or the result of a change through the file):
    /// observers hear what changed; events this center has not seen are announced, once;
    /// events acknowledged here stay gone.
    @discardableResult
    func adopt(_ archive: Archive, dropped: [DroppedSetting]) -> Outcome {
        let outcome = state.withLock { s -> Outcome in
            var outcome = s.tree.difference(to: archive.tree)
            outcome.decrement = nil
            s.tree = archive.tree
            s.compactAbove = State.compactionBound(for: s.tree)
            s.sync = archive.sync
            s.overrides = archive.overrides
            s.account = archive.account
            s.device = archive.device
            s.nextEventSeq = max(s.nextEventSeq, archive.nextEventSeq)
            s.dropped = dropped
            s.fileBacked = true
            var known = s.acknowledged
            for event in s.events { known.insert(event.id) }
            var inFile = Set<String>()
            for event in archive.events { inFile.insert(event.id) }
            s.acknowledged.formIntersection(inFile)
            s.events = archive.events.filter { !s.acknowledged.contains($0.id) }
            for event in s.events where !known.contains(event.id) { Self.announce(event, in: &s) }
            Self.queue(outcome, in: &s)
            return outcome
        }
        deliver()
        return outcome
    }

    /// The archive, under the lock.
    func snapshot() -> Archive {
        state.withLock { s in
            Archive(
                tree: s.tree, sync: s.sync, overrides: s.overrides, account: s.account, device: s.device, events: s.events,
                nextEventSeq: s.nextEventSeq)
        }
    }

    func setDropped(_ dropped: [DroppedSetting]) { state.withLock { $0.dropped = dropped } }

    func dropped() -> [DroppedSetting] { state.withLock { $0.dropped } }

    /// The code's configuration this center's settings start from.
    var baseConfiguration: BadgeTree.Configuration { state.withLock { $0.base } }

    /// The events' clock.
    var eventClock: @Sendable () -> Double { state.withLock { $0.clock } }

    /// Starts recording changes for the shared file's journal.
    func startRecording() { state.withLock { $0.recording = JournalRecord() } }

    /// The change recorded since ``startRecording()``, and the archive after it.
    func finishRecording() -> (JournalRecord, Archive) {
        let record = state.withLock { s in
            let r = s.recording ?? JournalRecord()
            s.recording = nil
            return r
        }
        return (record, snapshot())
    }
}

/// An observer's owner, compared by identity while it lives and never retained.
///
/// Unchecked Sendable: a weak reference (not Sendable), set in `init` and only compared
/// with `===` under the center's lock.
private final class WeakOwner: @unchecked Sendable {
    // Only compared with `===` under the center's lock; never dereferenced otherwise.
    private weak var object: AnyObject?

    init(_ object: AnyObject) { self.object = object }

    /// Whether this is `other` (false once the owner is gone, whatever the address).
    func `is`(_ other: AnyObject) -> Bool { object.map { $0 === other } ?? false }

    /// Whether the owner has been deallocated.
    var isGone: Bool { object == nil }
}

/// A live observation; it ends when cancelled or when the last reference is released.
///
/// A repeated observation (same path, same owner) hands out one token per call: cancelling
/// any of them ends it, and it also ends once all of them are released.
public final class BadgeObservation: Sendable {
    private weak let center: BadgeCenter?
    private let id: UInt64
    /// The observed path.
    public let path: String

    package init(center: BadgeCenter, id: UInt64, path: String) {
        self.center = center
        self.id = id
        self.path = path
    }

    /// Ends the observation; the handler is not called again.
    public func cancel() { center?.cancel(id: id, path: path) }

    /// Whether the observation still delivers (not cancelled, its center alive).
    public var isLive: Bool { center?.isObserving(id: id, path: path) ?? false }

    deinit { center?.release(id: id, path: path) }
}

// What the server must learn from the app (the SharedFileFormat and EmbeddingTheTree articles): reads
// and settings as server events, pending until acknowledged.

extension BadgeCenter {
    /// Tells the center whose badges these are: every server event from now on names this
    /// account and device, so the server counts a read as that device's own report.
    ///
    /// Until a center is logged in it records no server events. Through the shared file
    /// (``withSharedFile(_:_:)``) the login is kept in the file, so the extension's changes
    /// name the same account and device.
    ///
    /// ```swift
    /// try center.withSharedFile(badgesPath) { shared in shared.login(account: "u42", device: "phone") }
    /// ```
    public func login(account: String, device: String) {
        state.withLock { s in
            s.account = account
            s.device = device
            if s.recording != nil { s.recording?.login = [account, device] }
        }
    }

    /// Forgets the login: no more server events are recorded (the pending ones stay).
    public func logout() {
        state.withLock { s in
            s.account = nil
            s.device = nil
            if s.recording != nil { s.recording?.login = [] }
        }
    }

    /// The account given at login, if any.
    public var account: String? { state.withLock { $0.account } }

    /// The device given at login, if any.
    public var device: String? { state.withLock { $0.device } }

    /// Sets the clock that stamps server events' `at` (UNIX seconds; the wall clock unless
    /// set). It is called under the center's lock: it must not call into the center.
    public func setEventClock(_ clock: @escaping @Sendable () -> Double) {
        state.withLock { $0.clock = clock }
    }

    /// The server events not yet acknowledged, oldest first: send their ``ServerEvent/line``s,
    /// then acknowledge them.
    ///
    /// ```swift
    /// for event in center.pendingEvents { try await api.send(event.line) }
    /// ```
    public var pendingEvents: [ServerEvent] { state.withLock { $0.events } }

    /// Drops the pending events with these ids (the server has them); unknown ids are
    /// ignored. Through the shared file, acknowledge inside ``withSharedFile(_:_:)`` so the
    /// file forgets them too.
    ///
    /// ```swift
    /// center.acknowledgeEvents(sent.map(\.id))
    /// ```
    public func acknowledgeEvents(_ ids: some Sequence<String>) {
        let gone = Set(ids)
        guard !gone.isEmpty else { return }
        state.withLock { s in
            let acknowledged = s.events.filter { gone.contains($0.id) }.map(\.id)
            guard !acknowledged.isEmpty else { return }
            s.events.removeAll { gone.contains($0.id) }
            if s.fileBacked { s.acknowledged.formUnion(acknowledged) }
            if var recording = s.recording {
                recording.acknowledged = (recording.acknowledged ?? []) + acknowledged
                s.recording = recording
            }
        }
    }

    /// Drops the pending event with this id and every one before it; an unknown id drops
    /// nothing.
    ///
    /// ```swift
    /// if let last = center.pendingEvents.last { center.acknowledgeEvents(through: last.id) }
    /// ```
    public func acknowledgeEvents(through id: String) {
        let ids = state.withLock { s -> [String] in
            guard let i = s.events.firstIndex(where: { $0.id == id }) else { return [] }
            return s.events[...i].map(\.id)
        }
        acknowledgeEvents(ids)
    }

    /// The server events as an asynchronous sequence: the pending ones first (so none made
    /// before the iterating task starts is lost), then each new one once, including those a
    /// reload or a change through the shared file brings from another process. It ends when
    /// the iterating task is cancelled or the center is deallocated.
    ///
    /// ```swift
    /// let events = center.serverEvents()
    /// Task {
    ///     for await event in events {
    ///         try await api.send(event.line)
    ///         center.acknowledgeEvents([event.id])
    ///     }
    /// }
    /// ```
    public func serverEvents() -> AsyncStream<ServerEvent> {
        let (stream, continuation) = AsyncStream<ServerEvent>.makeStream()
        let id = addEventListener(continuation)
        continuation.onTermination = { [weak self] _ in self?.removeEventListener(id) }
        return stream
    }
}
