extension BadgeCenter {
    /// The states of `path` as an asynchronous sequence: its current state first, then each
    /// change of its (count, show), in change order.
    ///
    /// The sequence ends when the task iterating it is cancelled (or the iterator is
    /// dropped); its observation ends with it. States are buffered as `bufferingPolicy` says
    /// while the consumer is busy: `.unbounded` (the default) keeps every change, and
    /// `.bufferingNewest(1)` keeps only the latest, which is all a view needs.
    ///
    /// ```swift
    /// for await state in try center.states(of: "root.chat") {
    ///     tabItem.badgeValue = state.count > 0 ? "\(state.count)" : nil
    /// }
    /// ```
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    public func states(
        of path: String,
        bufferingPolicy: AsyncStream<BadgeState>.Continuation.BufferingPolicy = .unbounded
    ) throws(BadgePathError) -> AsyncStream<BadgeState> {
        let (stream, continuation) = AsyncStream<BadgeState>.makeStream(bufferingPolicy: bufferingPolicy)
        let token = try observe(path) { state in continuation.yield(state) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// Observes `path` on the main actor: `handler` runs on the main actor, in change order,
    /// whatever thread made the change.
    ///
    /// The current state is delivered before this returns (the call is on the main actor);
    /// later changes are delivered asynchronously on the main actor, one after another in the
    /// order they were made. Cancelling or releasing the token stops delivery, including of
    /// changes already queued. Observing the same path again with the same living `owner`
    /// replaces the handler, as ``observe(_:owner:_:)`` does.
    ///
    /// ```swift
    /// @MainActor final class ChatTab {
    ///     var token: BadgeObservation?
    ///     func bind(_ center: BadgeCenter, item: UITabBarItem) throws {
    ///         token = try center.observeOnMainActor("root.chat", owner: self) { state in
    ///             item.badgeValue = state.count > 0 ? "\(state.count)" : nil
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    @MainActor
    public func observeOnMainActor(
        _ path: String, owner: AnyObject? = nil,
        _ handler: @escaping @MainActor (BadgeState) -> Void
    ) throws(BadgePathError) -> BadgeObservation {
        let relay = MainActorRelay(handler)
        let token = try observe(path, owner: owner) { state in relay.enqueue(state) }
        relay.attach(token)
        // The current state (and anything queued since) is delivered now, on the main actor.
        relay.drain()
        return token
    }
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

    init(_ handler: @escaping @MainActor (BadgeState) -> Void) { self.handler = handler }

    /// Remembers the observation, weakly: once the caller releases it, delivery stops.
    func attach(_ token: BadgeObservation) {
        queue.withLock { $0.token = token }
    }

    /// Queues a state; schedules a drain unless one is pending.
    func enqueue(_ state: BadgeState) {
        let schedule = queue.withLock { q -> Bool in
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
