extension BadgeCenter {
    /// The states of `path` as an asynchronous sequence: its current state first, then each
    /// change, in change order.
    ///
    /// The sequence ends when the task iterating it is cancelled (or the iterator is
    /// dropped), and when the center is deallocated; its observation ends with it. States
    /// are buffered as `bufferingPolicy` says while the consumer is busy: `.unbounded` (the
    /// default) keeps every change, and `.bufferingNewest(1)` keeps only the latest, which is
    /// all a view needs.
    ///
    /// ```swift
    /// for await state in try center.states(of: "root.chat", bufferingPolicy: .bufferingNewest(1)) {
    ///     tabItem.badgeValue = state.badgeValue
    /// }
    /// ```
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    public func states(
        of path: String,
        bufferingPolicy: AsyncStream<BadgeState>.Continuation.BufferingPolicy = .unbounded
    ) throws(BadgePathError) -> AsyncStream<BadgeState> {
        let (stream, continuation) = AsyncStream<BadgeState>.makeStream(bufferingPolicy: bufferingPolicy)
        let token = try observe(path, owner: nil, onEnd: { continuation.finish() }) { state in continuation.yield(state) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// Observes `path` on the main actor: `handler` runs on the main actor, in change order,
    /// whatever thread made the change.
    ///
    /// The current state is delivered before this returns (the call is on the main actor);
    /// later changes are delivered asynchronously on the main actor, one after another in the
    /// order they were made. With `coalescing`, states that arrive before the main actor gets
    /// to them collapse into the latest: 10,000 changes in a row make one call, not 10,000.
    /// Cancelling or releasing the token, or the owner's deallocation, stops delivery,
    /// including of changes already queued. Observing the same path again with the same living
    /// `owner` replaces the handler, as ``observe(_:owner:_:)-(String,AnyObject?,_)`` does.
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    @MainActor
    public func observeOnMainActor(
        _ path: String, owner: AnyObject? = nil, coalescing: Bool = false,
        _ handler: @escaping @MainActor (BadgeState) -> Void
    ) throws(BadgePathError) -> BadgeObservation {
        let relay = MainActorRelay(coalescing: coalescing, handler)
        let token = try observe(path, owner: owner, onEnd: nil) { state in relay.enqueue(state) }
        relay.attach(token)
        // The current state (and anything queued since) is delivered now, on the main actor.
        relay.drain()
        return token
    }

    /// Observes `path` on the main actor on behalf of `owner` (a view controller, a view),
    /// which the handler receives: it never captures `self`, so it cannot keep the screen
    /// alive, and the observation ends when the owner is deallocated (or the token is
    /// released or cancelled).
    ///
    /// ```swift
    /// token = try center.observeOnMainActor("root.chat", owner: self) { controller, state in
    ///     controller.tabBarItem.badgeValue = state.badgeValue
    /// }
    /// ```
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    @MainActor
    public func observeOnMainActor<Owner: AnyObject>(
        _ path: String, owner: Owner, coalescing: Bool = false,
        _ handler: @escaping @MainActor (Owner, BadgeState) -> Void
    ) throws(BadgePathError) -> BadgeObservation {
        let weakOwner = MainActorWeak(owner)
        return try observeOnMainActor(path, owner: owner as AnyObject, coalescing: coalescing) { state in
            if let owner = weakOwner.object { handler(owner, state) }
        }
    }

    /// ``observeOnMainActor(_:owner:coalescing:_:)-(String,Owner,_,_)`` for a `BadgePath`: it
    /// cannot fail (a path outside this tree's root is heard once, hidden).
    @MainActor
    public func observeOnMainActor<Owner: AnyObject>(
        _ path: BadgePath, owner: Owner, coalescing: Bool = false,
        _ handler: @escaping @MainActor (Owner, BadgeState) -> Void
    ) -> BadgeObservation {
        let weakOwner = MainActorWeak(owner)
        let relay = MainActorRelay(coalescing: coalescing) { state in
            if let owner = weakOwner.object { handler(owner, state) }
        }
        let token = observe(path, owner: owner as AnyObject) { state in relay.enqueue(state) }
        relay.attach(token)
        relay.drain()
        return token
    }

    /// The decrements the center's changes cause, as an asynchronous sequence, each with an id
    /// that increases by one per decrement (from 1, per center), so a call to the server that
    /// failed can be retried with the same id and the server can drop a repeat.
    ///
    /// The sequence holds every decrement made after it was created (unbounded buffer); it
    /// ends when the iterating task is cancelled or the center is deallocated.
    ///
    /// ```swift
    /// for await request in center.decrements() {
    ///     try await api.decrementBadge(by: request.decrement.by, requestID: request.id)
    /// }
    /// ```
    public func decrements() -> AsyncStream<DecrementRequest> {
        let (stream, continuation) = AsyncStream<DecrementRequest>.makeStream()
        let id = addDecrementListener(continuation)
        continuation.onTermination = { [weak self] _ in self?.removeDecrementListener(id) }
        return stream
    }
}

/// A decrement to send to the server, with an id for an idempotent retry.
public struct DecrementRequest: Sendable, Equatable, Codable {
    /// Increases by one per decrement of a center, from 1.
    public var id: UInt64
    /// How much the icon number dropped, and which marks caused it.
    public var decrement: Decrement

    /// Creates a request.
    public init(id: UInt64, decrement: Decrement) {
        self.id = id
        self.decrement = decrement
    }
}

/// A weak reference read only on the main actor.
///
/// Unchecked Sendable: set in `init`, then read only by main-actor handlers.
private final class MainActorWeak<Object: AnyObject>: @unchecked Sendable {
    // Written once in `init`; read only by main-actor handlers.
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// Carries one observation's states to the main actor in order: a locked FIFO drained by at
/// most one main-actor task at a time, so task scheduling can never reorder them.
private final class MainActorRelay: Sendable {
    private struct Queue {
        var states: [BadgeState] = []
        var scheduled = false
        /// Weak: the caller's reference is what keeps the observation alive.
        weak var token: BadgeObservation?
    }

    private let queue = Locked(Queue())
    private let handler: @MainActor (BadgeState) -> Void
    /// Whether a state replaces the ones still queued.
    private let coalescing: Bool

    init(coalescing: Bool, _ handler: @escaping @MainActor (BadgeState) -> Void) {
        self.coalescing = coalescing
        self.handler = handler
    }

    /// Remembers the observation, weakly: once the caller releases it, delivery stops.
    func attach(_ token: BadgeObservation) {
        queue.withLock { $0.token = token }
    }

    /// Queues a state; schedules a drain unless one is pending.
    func enqueue(_ state: BadgeState) {
        let schedule = queue.withLock { q -> Bool in
            if coalescing { q.states.removeAll(keepingCapacity: true) }
            q.states.append(state)
            if q.scheduled { return false }
            q.scheduled = true
            return true
        }
        if schedule { Task { @MainActor in self.drain() } }
    }

    /// Delivers every queued state in order while the observation lives.
    @MainActor
    func drain() {
        while true {
            let next = queue.withLock { q -> (BadgeState, BadgeObservation?)? in
                if q.states.isEmpty {
                    q.scheduled = false
                    return nil
                }
                return (q.states.removeFirst(), q.token)
            }
            guard let (state, token) = next else { return }
            guard let token, token.isLive else { continue }
            handler(state)
        }
    }
}
