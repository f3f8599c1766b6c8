import Testing

@testable import BadgeFlow

@Suite struct FilterMetricsTests {
    /// Applies `lines` one by one and counts each result, as `ParallelFilter` does.
    private func counted(_ lines: [String]) -> (FilterMetrics, [StreamResult]) {
        var stream = BadgeStream(rules: .builtIn)
        let analyzer = LineAnalyzer(rules: .builtIn)
        var metrics = FilterMetrics()
        var results: [StreamResult] = []
        for (i, line) in lines.enumerated() {
            if let r = stream.apply(analyzer.analyze(line), seq: i + 1) {
                metrics.count(r)
                results.append(r)
            }
        }
        return (metrics, results)
    }

    @Test func countsErrorsByCodeDecrementsBadgeUpdatesAndDuplicates() {
        let (m, results) = counted([
            #"{"op":"push","account":"u","device":"phone","id":"1","payload":{"aps":{"alert":"a","thread-id":"bob"}}}"#,
            #"{"op":"push","account":"u","device":"ipad","id":"2","payload":{"aps":{"alert":"b","thread-id":"bob"}}}"#,
            #"{"op":"push","account":"u","device":"ipad","id":"2","payload":{"aps":{"alert":"b","thread-id":"bob"}}}"#,
            #"{"op":"clear","account":"u","device":"phone","path":"root.chat.bob"}"#,
            "not json",
            #"{"op":"nope"}"#,
            #"{"op":"clear"}"#,
            "",
        ])
        #expect(results.count == 7)
        #expect(m.results == 7)
        #expect(m.duplicates == 1)
        #expect(m.errors == ["invalid-json": 1, "unknown-op": 1, "missing-field": 1])
        #expect(m.errorTotal == 3)
        // The same figures, read from the result values one by one.
        let decrements = results.compactMap { $0.applied?.outcome.decrement?.by }
        #expect(m.decrements == decrements.count && m.decrements > 0)
        #expect(m.decrementTotal == decrements.reduce(0, +) && m.decrementTotal == 2)
        let updates = results.compactMap { $0.applied?.badgeUpdates.count }.reduce(0, +)
        #expect(m.badgeUpdates == updates && updates > 0)
    }

    @Test func aFleetExpireCountsEachAccountsDecrementAndUpdates() {
        let (m, results) = counted([
            #"{"op":"set","account":"a","device":"p","path":"root.inbox","count":2,"ttl":60,"at":0}"#,
            #"{"op":"set","account":"b","device":"q","path":"root.inbox","count":3,"ttl":60,"at":0}"#,
            #"{"op":"login","account":"b","device":"r","at":1}"#,
            #"{"op":"expire","at":120}"#,
        ])
        let fleet = results.last?.applied?.fleet ?? []
        #expect(fleet.count == 2, "both marks expire in one fleet-wide line")
        #expect(m.decrements == 2)
        #expect(m.decrementTotal == 5)
        #expect(m.decrementTotal == fleet.compactMap { $0.outcome.decrement?.by }.reduce(0, +))
        let fleetUpdates = fleet.map(\.badgeUpdates.count).reduce(0, +)
        let eventUpdates = results.dropLast().map { $0.applied?.badgeUpdates.count ?? 0 }.reduce(0, +)
        #expect(m.badgeUpdates == fleetUpdates + eventUpdates)
        #expect(fleetUpdates == 3, "p, q and r are each owed the new total")
    }

    @Test func theTextHasEveryFamilyInAFixedOrderAndErrorsSortedByCode() {
        var m = FilterMetrics()
        m.linesRead = 12
        m.results = 10
        m.errors = ["wrong-type": 2, "invalid-json": 1]
        m.decrementTotal = 5
        m.longestCheckpointPause = 0.25
        m.committedSeq = 12
        let text = m.prometheusText.string
        #expect(text.hasSuffix("\n"))
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(types.map(String.init) == FilterMetrics.names)
        // Counters end in _total, gauges do not.
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            #expect(parts[2].hasSuffix("_total") == (parts[3] == "counter"), "\(line)")
        }
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(samples.contains("badgeflow_lines_read_total 12"))
        #expect(samples.contains("badgeflow_decrement_by_total 5"))
        #expect(samples.contains("badgeflow_checkpoint_longest_pause_seconds 0.25"))
        #expect(samples.contains("badgeflow_committed_seq 12"))
        let errors = samples.filter { $0.hasPrefix("badgeflow_errors_total") }
        #expect(errors == [#"badgeflow_errors_total{code="invalid-json"} 1"#, #"badgeflow_errors_total{code="wrong-type"} 2"#])
    }

    @Test func parallelFilterCountsWhatItWritesAndWritesTheSameBytes() {
        let lines = (0..<5000).map { i -> String in
            switch i % 5 {
            case 0:
                return
                    #"{"op":"push","account":"u\#(i % 7)","device":"d\#(i % 3)","id":"\#(i % 50)","payload":{"aps":{"alert":"x","thread-id":"t\#(i % 4)"}}}"#
            case 1: return #"{"op":"clear","account":"u\#(i % 7)","device":"d\#(i % 3)","path":"root.chat.t\#(i % 4)"}"#
            case 2: return i % 3 == 0 ? "not json" : #"{"op":"nope"}"#
            case 3: return ""
            default: return #"{"op":"login","account":"u\#(i % 7)","device":"d\#(i % 5)"}"#
            }
        }
        func run(counting: Bool, jobs: Int) -> ([UInt8], FilterMetrics?) {
            let filter = ParallelFilter(stream: BadgeStream(rules: .builtIn), jobs: jobs, linesPerBatch: 256)
            if counting { filter.metrics = FilterMetrics() }
            var out: [UInt8] = []
            for var line in lines {
                line.withUTF8 { filter.feed(.text(UnsafeRawBufferPointer($0))) { out += $0.bytes } }
            }
            filter.finish { out += $0.bytes }
            return (out, filter.metrics)
        }
        let (plain, none) = run(counting: false, jobs: 2)
        let (bytes, counted) = run(counting: true, jobs: 2)
        #expect(none == nil)
        #expect(bytes == plain)
        let m = counted ?? FilterMetrics()
        let text = String(decoding: bytes, as: UTF8.self)
        let resultLines = text.split(separator: "\n")
        #expect(m.results == resultLines.count && m.results == 4000)
        #expect(m.errorTotal == resultLines.filter { $0.contains(#""error":{"code""#) }.count)
        #expect(m.errors["invalid-json"] == resultLines.filter { $0.contains(#""code":"invalid-json""#) }.count)
        #expect(m.duplicates == resultLines.filter { $0.contains(#""duplicate":true"#) }.count && m.duplicates > 0)
        #expect(m.decrements == resultLines.filter { $0.contains(#""decrement":{"#) }.count && m.decrements > 0)
        // Each badgeUpdates entry is {"device":…,"badge":N}; nothing else here has a "badge".
        #expect(m.badgeUpdates == text.ranges(of: #""badge":"#).count && m.badgeUpdates > 0)
    }

    /// `--metrics` counts while the result lines are written from the tree
    /// (``BadgeStream/apply(_:seq:into:counting:)``): the same figures as counting the result
    /// values, and the same bytes as a run that counts nothing, on every scenario with a
    /// decrement, a badge update, a duplicate, a fleet-wide expire or a rejected line.
    @Test func countingWhileWritingEqualsCountingTheValues() throws {
        let names = [
            "account-day", "bad-lines", "chat-read-elsewhere", "devices-join-leave", "duplicate-ids", "fleet-expire",
            "rejected-lines", "report-expire", "silent-read", "unread-sync",
        ]
        var seen = FilterMetrics()
        for name in names {
            let input = try Fixtures.text("scenarios/\(name).ndjson").split(separator: "\n", omittingEmptySubsequences: false)
            let analyzer = LineAnalyzer(rules: .builtIn)
            var byValue = BadgeStream(rules: .builtIn), plain = BadgeStream(rules: .builtIn)
            var counting = BadgeStream(rules: .builtIn)
            var fromValues = FilterMetrics(), whileWriting = FilterMetrics()
            var plainOut = JSONWriter(), countedOut = JSONWriter()
            for (i, line) in input.enumerated() {
                if let r = byValue.apply(analyzer.analyze(String(line)), seq: i + 1) { fromValues.count(r) }
                plain.apply(analyzer.analyze(String(line)), seq: i + 1, into: &plainOut)
                counting.apply(analyzer.analyze(String(line)), seq: i + 1, into: &countedOut, counting: &whileWriting)
            }
            #expect(whileWriting == fromValues, "\(name)")
            #expect(countedOut.bytes == plainOut.bytes, "\(name)")
            seen.results += whileWriting.results
            seen.decrements += whileWriting.decrements
            seen.badgeUpdates += whileWriting.badgeUpdates
            seen.duplicates += whileWriting.duplicates
            seen.errors.merge(whileWriting.errors, uniquingKeysWith: +)
        }
        // The scenarios hold every kind of figure, so no count is compared at zero only.
        #expect(seen.decrements > 0 && seen.badgeUpdates > 0 && seen.duplicates > 0 && seen.errorTotal > 0)
    }
}
