// The center's changes for paths built with BadgePath (`BadgePath.root.child("chat").child(id)`).
// They throw as the String forms do: a BadgePath is well formed, but only the tree knows its
// root name and whether a built path stayed within the limits. A BadgeNode (BadgeNode.swift)
// is a path checked against its center once: its changes do not throw.

extension BadgeCenter {
    /// Sets a dot on `path` (see ``set(_:)-(String)``).
    @discardableResult
    public func set(_ path: BadgePath) throws(BadgePathError) -> Outcome { try set(path.rawValue) }

    /// Sets `path`'s count (see ``set(_:count:)-(String,_)``).
    @discardableResult
    public func set(_ path: BadgePath, count: Int) throws(BadgePathError) -> Outcome {
        try set(path.rawValue, count: count)
    }

    /// Adds to `path`'s count (see ``increment(_:by:)-(String,_)``).
    @discardableResult
    public func increment(_ path: BadgePath, by k: Int = 1) throws(BadgePathError) -> Outcome {
        try increment(path.rawValue, by: k)
    }

    /// Clears `path` (see ``clear(_:force:)-(String,_)``).
    @discardableResult
    public func clear(_ path: BadgePath, force: Bool = false) throws(BadgePathError) -> Outcome {
        try clear(path.rawValue, force: force)
    }
}
