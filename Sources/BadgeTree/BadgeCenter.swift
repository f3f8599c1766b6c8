/// A badge tree shared between threads, with observers.
///
/// ```swift
/// let center = BadgeCenter()
/// let token = try center.observe("root.promotion") { state in
///     print(state.path, state.display)           // at once, then on every change
/// }
/// try center.set("root.promotion.item1")          // observer hears count 0, show true, "dot"
/// token.cancel()
/// ```
///
/// ## Threading
///
/// Every operation takes one lock, changes the tree, and queues the notifications it caused.
/// Three ways to hear them:
///
/// - ``observe(_:owner:_:)``: the handler runs after the lock is released, on the thread
///   that made the change, in the order the changes were made; if another thread is already
///   delivering, it delivers these too and the caller returns at once. A handler may call back
///   into the center (even mutate it) without deadlocking. Use it off the UI, or hop yourself.
/// - ``observeOnMainActor(_:owner:_:)``: the handler is `@MainActor`; it hears the current
///   state before the call returns and every later change on the main actor, in change
///   order, whichever thread made it. This is the one for UIKit.
/// - ``states(of:bufferingPolicy:)``: an `AsyncStream` of states (current first, then changes);
///   it ends when the consuming task is cancelled. This is the one for SwiftUI's `.task`.
///
/// ```swift
/// // SwiftUI: the view's task ends the observation when the view goes away.
/// struct ChatTab: View {
///     let center: BadgeCenter
///     @State private var badge = 0
///     var body: some View {
///         ChatList().badge(badge)
///             .task { if let states = try? center.states(of: "root.chat") { for await s in states { badge = s.count } } }
///     }
/// }
///
/// // UIKit: the token lives as long as the controller.
/// final class TabController: UITabBarController {
///     private var token: BadgeObservation?
///     override func viewDidLoad() {
///         super.viewDidLoad()
///         token = try? center.observeOnMainActor("root.chat", owner: self) { [weak self] s in
///             self?.tabBar.items?[0].badgeValue = s.count > 0 ? "\(s.count)" : nil
///         }
///     }
/// }
/// ```
///
/// An `owner` is compared by identity while it lives and is never retained: a new object
/// that happens to reuse a released one's address is a new owner.
public final class BadgeCenter: Sendable {
    private struct Observer {
        let id: UInt64
        let path: String
        /// The owner, held weakly: identity is compared while it lives, so a new object at a
        /// dead one's address is a new owner (an `ObjectIdentifier` would be reused).
        let owner: WeakOwner?
        let handler: @Sendable (BadgeState) -> Void
        /// Which handler this is: a repeated observation keeps `id` but replaces the handler,
        /// and notifications queued for the old one are dropped.
        let serial: UInt64
        /// Tokens handed out for this observation; it ends when the last one is released.
        var tokens: Int
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
    }

    private let state: Locked<State>

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

    /// The unread-sync policy's state as it is now.
    public var syncPolicy: SyncPolicy { state.withLock { $0.sync } }

    /// Tells the sync policy what happened, at event time `now`, and returns the sync it
    /// triggers, if any (see ``SyncPolicy/handle(_:at:)``).
    @discardableResult
    public func handle(_ happening: SyncPolicy.Happening, at now: Double) -> SyncPolicy.Reason? {
        state.withLock { $0.sync.handle(happening, at: now) }
    }

    /// A copy of the tree as it is now.
    public var tree: BadgeTree { state.withLock { $0.tree } }

    /// The current state of `path`.
    public func state(of path: String) -> BadgeState { state.withLock { $0.tree.state(of: path) } }

    /// Sets a dot on `path` (see `BadgeTree.set(_:)`).
    @discardableResult
    public func set(_ path: String) throws(BadgePathError) -> Outcome {
        try mutate { (tree: inout BadgeTree) throws(BadgePathError) in try tree.set(path) }
    }

    /// Sets `path`'s count (see `BadgeTree.set(_:count:)`).
    @discardableResult
    public func set(_ path: String, count: Int) throws(BadgePathError) -> Outcome {
        try mutate { (tree: inout BadgeTree) throws(BadgePathError) in try tree.set(path, count: count) }
    }

    /// Adds to `path`'s count (see `BadgeTree.increment(_:by:)`).
    @discardableResult
    public func increment(_ path: String, by k: Int = 1) throws(BadgePathError) -> Outcome {
        try mutate { (tree: inout BadgeTree) throws(BadgePathError) in try tree.increment(path, by: k) }
    }

    /// Sets a dot on `path` that expires at `expires` and holds the once token `once` (see
    /// `BadgeTree.set(_:expires:once:source:)`).
    @discardableResult
    public func set(_ path: String, expires: Double?, once: String? = nil) throws(BadgePathError) -> Outcome {
        try mutate { (tree: inout BadgeTree) throws(BadgePathError) in try tree.set(path, expires: expires, once: once) }
    }

    /// Clears every mark due at or before `time` (see `BadgeTree.expire(through:)`); observers
    /// hear the changes as for a clear.
    @discardableResult
    public func expire(through time: Double) -> Expiry {
        var expiry = Expiry.none
        // The body never throws: expiring validates no path.
        _ = try? mutate { (tree: inout BadgeTree) -> Outcome in
            expiry = tree.expire(through: time)
            return expiry.outcome
        }
        return expiry
    }

    /// Clears `path` (see `BadgeTree.clear(_:force:)`).
    @discardableResult
    public func clear(_ path: String, force: Bool = false) throws(BadgePathError) -> Outcome {
        try mutate { (tree: inout BadgeTree) throws(BadgePathError) in try tree.clear(path, force: force) }
    }

    /// Observes `path`: `handler` hears its state at once, then each time its (count, show)
    /// changes, through descendants too, and only then.
    ///
    /// Observing the same path again with the same `owner` replaces the handler and returns
    /// the same observation. The observation ends when the token is cancelled or released.
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    public func observe(
        _ path: String, owner: AnyObject? = nil,
        _ handler: @escaping @Sendable (BadgeState) -> Void
    ) throws(BadgePathError) -> BadgeObservation {
        let id: UInt64 = try state.withLock { (s: inout State) throws(BadgePathError) -> UInt64 in
            _ = try s.tree.node(path)
            var list = s.observers[path] ?? []
            let id: UInt64
            let serial = s.nextID
            s.nextID += 1
            if let owner, let existing = list.firstIndex(where: { $0.owner?.is(owner) == true }) {
                id = list[existing].id
                list[existing] = Observer(
                    id: id, path: path, owner: list[existing].owner, handler: handler,
                    serial: serial, tokens: list[existing].tokens + 1)
            } else {
                id = serial
                list.append(
                    Observer(
                        id: id, path: path, owner: owner.map(WeakOwner.init), handler: handler,
                        serial: serial, tokens: 1))
            }
            s.observers[path] = list
            if let observer = list.first(where: { $0.id == id }) {
                s.pending.append((observer, s.tree.state(of: path)))
            }
            return id
        }
        deliver()
        return BadgeObservation(center: self, id: id, path: path)
    }

    /// Number of live observations (for tests and diagnostics).
    public var observationCount: Int { state.withLock { $0.observers.values.reduce(0) { $0 + $1.count } } }

    /// Whether observation `id` of `path` is still live.
    package func isObserving(id: UInt64, path: String) -> Bool {
        state.withLock { s in s.observers[path]?.contains { $0.id == id } ?? false }
    }

    package func cancel(id: UInt64, path: String) {
        state.withLock { s in Self.end(id: id, path: path, in: &s) }
    }

    /// Drops one token of an observation, and ends it when that was the last.
    package func release(id: UInt64, path: String) {
        state.withLock { s in
            guard let i = s.observers[path]?.firstIndex(where: { $0.id == id }) else { return }
            s.observers[path]?[i].tokens -= 1
            if s.observers[path]?[i].tokens == 0 { Self.end(id: id, path: path, in: &s) }
        }
    }

    private static func end(id: UInt64, path: String, in s: inout State) {
        s.observers[path]?.removeAll { $0.id == id }
        if s.observers[path]?.isEmpty == true { s.observers[path] = nil }
        s.pending.removeAll { $0.0.id == id }
    }

    private func mutate(_ body: (inout BadgeTree) throws(BadgePathError) -> Outcome) throws(BadgePathError) -> Outcome {
        let outcome = try state.withLock { (s: inout State) throws(BadgePathError) -> Outcome in
            let outcome = try body(&s.tree)
            if !s.observers.isEmpty {
                for change in outcome.changes {
                    for observer in s.observers[change.path] ?? [] { s.pending.append((observer, change)) }
                }
            }
            return outcome
        }
        deliver()
        return outcome
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
                let live = state.withLock { s in s.observers[observer.path]?.contains { $0.serial == observer.serial } ?? false }
                if live { observer.handler(change) }
            }
            batch.removeAll(keepingCapacity: true)
            state.withLock { s in
                s.delivering = false
                s.spare = batch
            }
        }
    }
}

/// An observer's owner, compared by identity while it lives and never retained.
private final class WeakOwner: @unchecked Sendable {
    // Only compared with `===` under the center's lock; never dereferenced otherwise.
    private weak var object: AnyObject?

    init(_ object: AnyObject) { self.object = object }

    /// Whether this is `other` (false once the owner is gone, whatever the address).
    func `is`(_ other: AnyObject) -> Bool { object.map { $0 === other } ?? false }
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
