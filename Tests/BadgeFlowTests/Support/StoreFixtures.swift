@testable import BadgeFlow

/// Accounts for the database stores' tests (every format with checkpoints alike).
enum StoreFixtures {
    /// A stream that tracks changes, in which each account of `ids` has one device (logged
    /// in, shown a badge) and three marks, each with its source.
    static func stream(accounts ids: [String], rules: RuleSet = .builtIn) -> BadgeStream {
        let analyzer = LineAnalyzer(rules: rules)
        var stream = BadgeStream(rules: rules)
        stream.tracksChanges = true
        var seq = 0
        for id in ids {
            for line in [
                #"{"op":"login","account":"\#(id)","device":"d0","at":1732269600}"#,
                #"{"op":"push","account":"\#(id)","device":"d0","at":1732269700,"payload":{"aps":{"alert":"hi","thread-id":"t3"}}}"#,
                #"{"op":"push","account":"\#(id)","device":"d0","at":1732269701,"payload":{"aps":{"alert":"m","category":"mail"}}}"#,
                #"{"op":"set","account":"\#(id)","device":"d0","at":1732269702,"path":"root.promotion.c2"}"#,
            ] {
                seq += 1
                _ = stream.apply(analyzer.analyze(line), seq: seq)
            }
        }
        return stream
    }
}

extension StorePrefetcher {
    /// A read-ahead through `connections`, each read on a worker of its own, as
    /// `FilterPipeline` makes it.
    static func over(_ connections: [StoreConnection], rules: RuleSet = .builtIn) -> StorePrefetcher {
        StorePrefetcher(readers: connections, workers: connections.indices.map { Worker(name: "test-read\($0 + 1)") }, rules: rules)
    }
}

extension StoreCheckpointer {
    /// Commits through `connection` on a worker of its own, as `FilterPipeline` makes it.
    static func over(_ connection: StoreConnection) -> StoreCheckpointer {
        StoreCheckpointer(connection: connection, worker: Worker(name: "test-commit"))
    }
}
