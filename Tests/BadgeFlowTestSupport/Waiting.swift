import Foundation

/// Polls `condition` every `poll` seconds until it holds or `deadline` seconds have passed;
/// whether it held (checked once more at the deadline). What the tests wait with instead of a
/// fixed sleep: on a fast machine the wait ends as soon as the condition holds, on a loaded one
/// it lasts up to the deadline, and a condition that never holds fails the test.
public func waitUntil(
    deadline seconds: TimeInterval, poll: TimeInterval = 0.01, _ condition: () throws -> Bool
) rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try condition() { return true }
        usleep(useconds_t(poll * 1e6))
    }
    return try condition()
}

/// A value shared between a test and the threads it starts, behind a lock.
public final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A guarded `value`.
    public init(_ value: Value) { self.value = value }

    /// The value now.
    public func get() -> Value { lock.withLock { value } }

    /// Replaces the value.
    public func set(_ newValue: Value) { lock.withLock { value = newValue } }

    /// Changes the value in place under the lock; what `body` returns.
    @discardableResult
    public func update<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}

/// A gate a job waits at until the test opens it: a job is then still running at the moment
/// the test chooses (not for a fixed while, which a loaded machine can outlast).
public final class Gate: Sendable {
    private let state = Guarded((arrived: false, open: false))

    /// A closed gate.
    public init() {}

    /// Whether a job has come to the gate (see ``pass(within:)``).
    public var hasArrival: Bool { state.get().arrived }

    /// Opens the gate: a waiting job goes on, later ones pass at once.
    public func open() { state.update { $0.open = true } }

    /// Waits until the gate is open; false when `seconds` passed first.
    @discardableResult
    public func pass(within seconds: TimeInterval = 60) -> Bool {
        state.update { $0.arrived = true }
        return waitUntil(deadline: seconds, poll: 0.001) { state.get().open }
    }

    /// Opens the gate on a thread of its own once `condition` holds (or after `seconds`).
    public func open(when condition: @escaping @Sendable () -> Bool, within seconds: TimeInterval = 60) {
        Thread { [self] in
            _ = waitUntil(deadline: seconds, poll: 0.001, condition)
            open()
        }.start()
    }
}
