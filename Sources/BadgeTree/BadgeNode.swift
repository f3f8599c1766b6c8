/// A path of one center, checked against that center's root and the path limits when it is
/// made: its changes cannot fail, so they do not throw.
///
/// Start from the center's ``BadgeCenter/root`` and add children, or check a path once with
/// ``BadgeCenter/node(_:)-(String)``. A path that cannot be valid (a wrong root, a typo such
/// as `root..chat`, an id so long that the path passes ``BadgePath/maxBytes``) is refused
/// there, with a `BadgePathError`, never later and never silently.
///
/// ```swift
/// let chats = try center.root.child("chat")        // root.chat, made once
/// let bob = try chats.child("bob@mail.com")         // root.chat.bob@mail%2Ecom
/// bob.increment()                                   // no `try`: it cannot fail
/// let outcome = bob.clear()                         // outcome.decrement: what to send
/// ```
///
/// A node holds its center (strongly), so its changes always go to the center that checked
/// it; the center's root never changes, so a node stays valid for the center's life.
public struct BadgeNode: Hashable, Sendable, CustomStringConvertible {
    /// The center whose root and limits the path was checked against.
    public let center: BadgeCenter
    /// The checked path.
    public let path: BadgePath

    /// A node of `center` whose path is known valid there.
    init(center: BadgeCenter, checked path: BadgePath) {
        self.center = center
        self.path = path
    }

    /// The path text.
    public var description: String { path.rawValue }

    /// The node of the child for `id`, escaped so it stays one segment (as
    /// ``BadgePath/child(_:)``: `bob@mail.com` becomes `bob@mail%2Ecom`).
    ///
    /// - Throws: `BadgePathError` when the child's path passes ``BadgePath/maxSegments`` or
    ///   ``BadgePath/maxBytes``.
    public func child(_ id: String) throws(BadgePathError) -> BadgeNode {
        let child = path.child(id)
        try BadgePath.validate(child.rawValue)
        return BadgeNode(center: center, checked: child)
    }

    /// The node of the child for `id`, whatever `id` holds: it cannot fail, so it takes no
    /// `try`. The id is escaped as ``BadgePath/child(_:)`` escapes it; an id so long that the
    /// path would pass ``BadgePath/maxBytes`` is named by a digest instead (`%H` and 16 hex
    /// digits of its 64-bit FNV-1a hash), the same for the same id in every process.
    ///
    /// ```swift
    /// let chats = center.root.child(escaping: "chat")
    /// chats.child(escaping: sender).increment()          // any sender id, no `try`
    /// ```
    ///
    /// The depth is the code's, not the id's: a node of ``BadgePath/maxSegments`` segments has
    /// no children, and calling this there is a programming error (it stops a debug build;
    /// a release build gets a node whose changes change nothing).
    public func child(escaping id: String) -> BadgeNode {
        var segment = BadgePath.childSegment(id)
        if path.rawValue.utf8.count + 1 + segment.utf8.count > BadgePath.maxBytes {
            segment = Self.digestSegment(id)
        }
        let child = BadgePath(unchecked: path.rawValue + "." + segment)
        if (try? BadgePath.validate(child.rawValue)) == nil {
            assertionFailure("\(child.rawValue): a path has at most \(BadgePath.maxSegments) segments and \(BadgePath.maxBytes) bytes")
        }
        return BadgeNode(center: center, checked: child)
    }

    /// `%H` and the 64-bit FNV-1a hash of `id`'s UTF-8 bytes in hex: a segment of 18 bytes.
    static func digestSegment(_ id: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.utf8 { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16, uppercase: true)
        return "%H" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The parent's node, or nil for the root.
    public var parent: BadgeNode? { path.parent.map { BadgeNode(center: center, checked: $0) } }

    /// The node's current state.
    public var state: BadgeState { center.state(of: path) }

    /// Sets a dot (see `BadgeCenter.set(_:)`).
    @discardableResult
    public func set() -> Outcome { checked { p throws(BadgePathError) in try center.set(p) } }

    /// Sets the count; 0 or less clears the mark (see `BadgeCenter.set(_:count:)`).
    @discardableResult
    public func set(count: Int) -> Outcome { checked { p throws(BadgePathError) in try center.set(p, count: count) } }

    /// Sets a dot that expires at `expires` and holds the once token `once` (see
    /// `BadgeCenter.set(_:expires:once:)`).
    @discardableResult
    public func set(expires: Double?, once: String? = nil) -> Outcome {
        checked { p throws(BadgePathError) in try center.set(p, expires: expires, once: once) }
    }

    /// Sets the count, expiring at `expires` (see `BadgeCenter.set(_:count:expires:once:)`).
    @discardableResult
    public func set(count: Int, expires: Double?, once: String? = nil) -> Outcome {
        checked { p throws(BadgePathError) in try center.set(p, count: count, expires: expires, once: once) }
    }

    /// Adds `k` to the count (see `BadgeCenter.increment(_:by:)`).
    @discardableResult
    public func increment(by k: Int = 1) -> Outcome {
        checked { p throws(BadgePathError) in try center.increment(p, by: k) }
    }

    /// Clears the own mark, or with `force` every mark below too (see
    /// `BadgeCenter.clear(_:force:)`).
    @discardableResult
    public func clear(force: Bool = false) -> Outcome {
        checked { p throws(BadgePathError) in try center.clear(p, force: force) }
    }

    /// Changes how the node's aggregate reaches its parent: `.none` mutes it (see
    /// ``BadgeCenter/setContribution(_:of:)``).
    @discardableResult
    public func setContribution(_ contribution: Contribution) -> Outcome {
        checked { p throws(BadgePathError) in try center.setContribution(contribution, of: p) }
    }

    /// Whether two nodes are the same path of the same center.
    public static func == (lhs: BadgeNode, rhs: BadgeNode) -> Bool {
        lhs.center === rhs.center && lhs.path == rhs.path
    }

    /// Hashes the center's identity and the path.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(center))
        hasher.combine(path)
    }

    /// Runs a change that only a path invalid in `center` could make throw. The path was
    /// checked against the center's root (which never changes) and the limits when this node
    /// was made, so the `catch` is never taken; it returns "nothing changed" rather than trap.
    private func checked(_ change: (String) throws(BadgePathError) -> Outcome) -> Outcome {
        do { return try change(path.rawValue) } catch { return .unchanged }
    }
}

extension BadgeCenter {
    /// The node of this center's root: the start of paths whose changes cannot fail.
    ///
    /// ```swift
    /// let chat = try center.root.child("chat")   // throws only past the path limits
    /// chat.increment()                            // no `try`: the path is known valid
    /// ```
    public var root: BadgeNode {
        BadgeNode(center: self, checked: BadgePath(unchecked: configuration.root))
    }

    /// Checks `path` against this center's root and the path limits once, and returns its
    /// node, whose changes do not throw.
    ///
    /// - Throws: `BadgePathError` when `path` is not a valid path of this center (a typo such
    ///   as `root..chat`, a root other than the center's).
    public func node(_ path: String) throws(BadgePathError) -> BadgeNode {
        try validate(path)
        return BadgeNode(center: self, checked: BadgePath(unchecked: path))
    }

    /// Checks a `BadgePath` against this center's root once (see ``node(_:)-(String)``).
    ///
    /// - Throws: `BadgePathError` when the path does not start with this center's root.
    public func node(_ path: BadgePath) throws(BadgePathError) -> BadgeNode { try node(path.rawValue) }
}
