import Testing
@testable import BadgeFlow

/// `Event` keeps the fields few lines carry out of line: it must still behave as a plain
/// value, whichever fields are set and in whatever order.
@Suite struct EventTests {
    private static let warning = Diagnostic.warning(.unknownApsKey, "unknown aps key \"x\"", at: "/aps/x")

    private func stamp() -> PayloadStamp {
        PayloadStamp(bytes: Array(#"{"aps":{"badge":}}"#.utf8), split: 16)
    }

    @Test func aNewEventHasNoneOfTheRareFields() {
        let event = Event(op: .push)
        #expect(event.id == nil)
        #expect(event.atText == nil)
        #expect(event.ttl == nil)
        #expect(event.once == nil)
        #expect(event.page == nil)
        #expect(event.warnings.isEmpty)
        #expect(event.stamp == nil)
    }

    @Test func eachRareFieldReadsBackWhatWasSetAndCanBeCleared() {
        var event = Event(op: .set)
        event.id = "evt-1"
        event.atText = "\"2026-11-22T10:00:00Z\""
        event.ttl = 3600
        event.once = "promo-7"
        event.page = "home"
        event.warnings = [Self.warning]
        event.stamp = stamp()
        #expect(event.id == "evt-1")
        #expect(event.atText == "\"2026-11-22T10:00:00Z\"")
        #expect(event.ttl == 3600)
        #expect(event.once == "promo-7")
        #expect(event.page == "home")
        #expect(event.warnings.map(\.message) == [Self.warning.message])
        #expect(event.stamp == stamp())

        event.id = nil
        event.ttl = nil
        event.warnings = []
        #expect(event.id == nil)
        #expect(event.ttl == nil)
        #expect(event.warnings.isEmpty)
        // The others are untouched.
        #expect(event.once == "promo-7")
        #expect(event.page == "home")
        #expect(event.stamp == stamp())
    }

    @Test func aCopyChangesIndependentlyOfItsOriginal() {
        var original = Event(op: .push)
        original.once = "a"
        original.warnings = [Self.warning]
        var copy = original
        copy.once = "b"
        copy.page = "inbox"
        copy.warnings.append(Self.warning)
        #expect(original.once == "a")
        #expect(original.page == nil)
        #expect(original.warnings.count == 1)
        #expect(copy.once == "b")
        #expect(copy.page == "inbox")
        #expect(copy.warnings.count == 2)

        // And the original, changed after the copy, leaves the copy alone.
        original.id = "x"
        #expect(copy.id == nil)
    }

    @Test func aCopyOfAnEventWithoutRareFieldsGetsItsOwn() {
        let original = Event(op: .appear)
        var copy = original
        copy.page = "home"
        #expect(original.page == nil)
        #expect(copy.page == "home")
    }
}
