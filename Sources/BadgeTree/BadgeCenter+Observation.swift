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
    /// does not throw; a path outside this tree's root stops a debug build (a release build
    /// hears it once, hidden).
    @MainActor
    public func observeOnMainActor<Owner: AnyObject>(
        _ path: BadgePath, owner: Owner, coalescing: Bool = false,
        _ handler: @escaping @MainActor (Owner, BadgeState) -> Void
    ) -> BadgeObservation {
        refuseForeign(path)
        let weakOwner = MainActorWeak(owner)
        let relay = MainActorRelay(coalescing: coalescing) { state in
            if let owner = weakOwner.object { handler(owner, state) }
        }
        let token = observe(path, owner: owner as AnyObject) { state in relay.enqueue(state) }
        relay.attach(token)
        relay.drain()
        return token
    }

    /// The reads' decrements, as an asynchronous sequence: a view of the server events
    /// (``serverEvents()``) that carry a decrement, for a server that keeps a plain counter.
    ///
    /// The sequence starts with the pending (not yet acknowledged) reads, so a read made
    /// before the iterating task gets going is not lost, then holds each new read's decrement
    /// once, including reads made in another process through the shared file, which arrive
    /// with the ``reload(from:)-(String)`` or ``withSharedFile(_:_:)`` that brings them
    /// (never a net difference of two files). Each request's ``DecrementRequest/eventID`` is
    /// its event's ``ServerEvent/id``, so a retried call can be dropped by the server; a
    /// mute, an unmute and an expiry are not reads and make none. Acknowledge the event once
    /// the server has it (``acknowledgeEvents(through:)``), or the next sequence starts with it
    /// again. It ends when the iterating task is cancelled or the center is deallocated.
    ///
    /// ```swift
    /// let requests = center.decrements()      // made before the Task: nothing to lose
    /// Task {
    ///     for await request in requests {
    ///         try await api.decrementBadge(by: request.decrement.by, requestID: request.eventID)
    ///         center.acknowledgeEvents([request.eventID])
    ///     }
    /// }
    /// ```
    public func decrements() -> AsyncStream<DecrementRequest> {
        let (stream, continuation) = AsyncStream<DecrementRequest>.makeStream()
        let id = addDecrementListener(continuation)
        continuation.onTermination = { [weak self] _ in self?.removeDecrementListener(id) }
        return stream
    }
}

/// A read's decrement to send to the server, with ids for an idempotent retry.
public struct DecrementRequest: Sendable, Equatable, Codable {
    /// The read's ``ServerEvent/seq``: increases by one per server event of a center or file.
    public var id: UInt64
    /// How much the icon number dropped, and which marks caused it.
    public var decrement: Decrement
    /// The read's ``ServerEvent/id``, unique everywhere: the retry key to send.
    public var eventID: String

    /// Creates a request.
    public init(id: UInt64, decrement: Decrement, eventID: String = "") {
        self.id = id
        self.decrement = decrement
        self.eventID = eventID
    }

    /// The request of a read event; nil for a setting or a read that lowered nothing.
    public init?(_ event: ServerEvent) {
        guard let decrement = event.decrement else { return nil }
        self.init(id: event.seq, decrement: decrement, eventID: event.id)
    }

    private enum Key: String, CodingKey { case id, decrement, eventID }

    /// Decodes `{id, decrement, eventID}` (`eventID` optional).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        id = try c.decode(UInt64.self, forKey: .id)
        decrement = try c.decode(Decrement.self, forKey: .decrement)
        eventID = try c.decodeIfPresent(String.self, forKey: .eventID) ?? ""
    }

    /// Encodes `{id, decrement, eventID}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(id, forKey: .id)
        try c.encode(decrement, forKey: .decrement)
        try c.encode(eventID, forKey: .eventID)
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
