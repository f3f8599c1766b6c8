import Observation

/// A path's badge state as an `@Observable` object, for SwiftUI: a view that reads
/// ``state`` redraws when it changes, with no observation code of its own.
///
/// Get one from ``BadgeCenter/model(for:)-(String)``; the same path gives the same model while
/// it is alive. The model observes the center on the main actor, coalescing: a burst of
/// changes makes one update per main-actor turn. Its observation ends when the model is
/// deallocated.
///
/// ```swift
/// struct Tabs: View {
///     let chat: BadgeModel       // try center.model(for: "root.chat"), made once
///     var body: some View {
///         TabView {
///             ChatList().tabItem { Label("Chat", systemImage: "message") }
///                 .badge(chat.state.badgeValue.map { Text($0) })
///         }
///     }
/// }
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class BadgeModel {
    /// The observed path.
    public let path: String
    /// The path's state as the main actor last heard it.
    public private(set) var state: BadgeState
    @ObservationIgnored private var token: BadgeObservation?

    init(center: BadgeCenter, path: BadgePath) {
        self.path = path.rawValue
        state = center.state(of: path)
        token = center.observeOnMainActor(path, owner: self, coalescing: true) { model, state in
            model.state = state
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension BadgeCenter {
    /// The `@Observable` model of `path`: a main-actor object whose ``BadgeModel/state`` is
    /// the path's state, for SwiftUI. The same path gives the same model while someone holds it.
    ///
    /// - Throws: `BadgePathError` when the path is not valid in this tree.
    @MainActor
    public func model(for path: String) throws(BadgePathError) -> BadgeModel {
        try validate(path)
        return model(for: BadgePath(unchecked: path))
    }

    /// The `@Observable` model of a `BadgePath`; it does not throw. A path outside this tree's
    /// root stops a debug build (a release build's model stays hidden).
    @MainActor
    public func model(for path: BadgePath) -> BadgeModel {
        if let model = models.withLock({ $0[path.rawValue]?.object }) as? BadgeModel { return model }
        let model = BadgeModel(center: self, path: path)
        models.withLock { cache in
            cache = cache.filter { $0.value.object != nil }
            cache[path.rawValue] = WeakModel(model)
        }
        return model
    }
}

/// A model held weakly by its center's cache.
///
/// Unchecked Sendable: set in `init`, read under the cache's lock, the model used on the
/// main actor only.
final class WeakModel: @unchecked Sendable {
    // Set once in `init`; read under the cache's lock and used on the main actor only.
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
