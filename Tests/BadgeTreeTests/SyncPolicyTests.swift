import Testing
@testable import BadgeTree

private func policy(pages: Set<String> = ["home", "mine"], interval: Double = 60, away: Double = 60) -> SyncPolicy {
    SyncPolicy(configuration: .init(pages: pages, interval: interval, away: away))
}

/// A policy logged in at `at` (no sync: login alone does not trigger one).
private func loggedIn(at t: Double = 0) -> SyncPolicy {
    var p = policy()
    _ = p.handle(.login, at: t)
    return p
}

@Suite struct SyncPolicyTests {
    @Test func aDeviceStartsLoggedOutInTheForegroundWithNoPage() {
        let p = policy()
        #expect(!p.loggedIn)
        #expect(p.foreground)
        #expect(p.visible.isEmpty)
    }

    // §5.1 Sync only while logged in.
    @Test func nothingSyncsWhileLoggedOut() {
        var p = policy()
        #expect(p.handle(.push, at: 0) == nil)
        #expect(p.handle(.appear("home"), at: 1) == nil)
        #expect(p.handle(.tick, at: 1000) == nil)
        #expect(p.handle(.disappear("home"), at: 1001) == nil)
        #expect(p.handle(.appear("home"), at: 5000) == nil)
        #expect(p.handle(.other, at: 9000) == nil)
    }

    @Test func logoutSilencesEverything() {
        var p = loggedIn()
        #expect(p.handle(.appear("home"), at: 1) == .firstAppearance)
        #expect(p.handle(.logout, at: 2) == nil)
        #expect(p.handle(.push, at: 3) == nil)
        #expect(p.handle(.tick, at: 500) == nil)
    }

    @Test func loginAloneDoesNotSync() {
        var p = policy()
        #expect(p.handle(.login, at: 10) == nil)
        #expect(p.loggedIn)
    }

    // §5.2 A received push triggers a sync.
    @Test func aPushSyncs() {
        var p = loggedIn()
        #expect(p.handle(.push, at: 1) == .push)
        #expect(p.handle(.push, at: 1) == .push)  // every push, not once
    }

    // §5.3 The interval, while in the foreground with a watched page visible.
    @Test func theIntervalRunsFromTheLastSync() {
        var p = loggedIn(at: 100)
        _ = p.handle(.background, at: 100)
        #expect(p.handle(.appear("home"), at: 101) == .firstAppearance)  // resets the interval
        _ = p.handle(.foreground, at: 102)
        #expect(p.handle(.tick, at: 160) == nil)  // 59 s since the last sync
        #expect(p.handle(.tick, at: 161) == .interval)  // 60 s
        #expect(p.handle(.tick, at: 200) == nil)
        #expect(p.handle(.tick, at: 221) == .interval)
    }

    @Test func theIntervalCountsFromLoginWithoutAnyEarlierSync() {
        var p = policy(pages: ["home"])
        _ = p.handle(.appear("home"), at: 0)  // logged out: no sync, page visible
        _ = p.handle(.login, at: 10)
        #expect(p.handle(.tick, at: 69) == nil)
        #expect(p.handle(.tick, at: 70) == .interval)
    }

    @Test func anyEventChecksTheInterval() {
        var p = loggedIn()
        #expect(p.handle(.appear("home"), at: 0) == .firstAppearance)
        #expect(p.handle(.other, at: 60) == .interval)
        #expect(p.handle(.appear("feed"), at: 120) == .interval)
        #expect(p.handle(.disappear("feed"), at: 180) == .interval)
    }

    @Test func noIntervalInTheBackgroundOrWithoutAWatchedPage() {
        var p = loggedIn()
        #expect(p.handle(.appear("feed"), at: 0) == nil)  // not watched
        #expect(p.handle(.tick, at: 500) == nil)
        #expect(p.handle(.appear("home"), at: 501) == .firstAppearance)
        _ = p.handle(.background, at: 502)
        #expect(p.handle(.tick, at: 1000) == nil)
        // Back in the foreground, the interval since the last sync has long passed.
        #expect(p.handle(.foreground, at: 1001) == .interval)
    }

    @Test func aSyncForAnotherReasonRestartsTheInterval() {
        var p = loggedIn()
        #expect(p.handle(.appear("home"), at: 0) == .firstAppearance)
        #expect(p.handle(.push, at: 50) == .push)
        #expect(p.handle(.tick, at: 100) == nil)  // 50 s since the push
        #expect(p.handle(.tick, at: 110) == .interval)
    }

    // §5.4 The first appearance of a watched page after login.
    @Test func theFirstAppearanceOfEachWatchedPageAfterLoginSyncs() {
        var p = loggedIn()
        #expect(p.handle(.appear("home"), at: 1) == .firstAppearance)
        #expect(p.handle(.appear("mine"), at: 2) == .firstAppearance)
        _ = p.handle(.disappear("home"), at: 3)
        #expect(p.handle(.appear("home"), at: 4) == nil)  // back after 1 s: not first, not away long
        #expect(p.handle(.appear("other"), at: 5) == nil)  // not watched
        // After logging in again, appearances are first ones again.
        _ = p.handle(.logout, at: 6)
        _ = p.handle(.login, at: 7)
        #expect(p.handle(.appear("home"), at: 8) == .firstAppearance)
    }

    @Test func aSecondLoginWhileLoggedInIsNotANewLogin() {
        var p = loggedIn()
        #expect(p.handle(.appear("home"), at: 1) == .firstAppearance)
        _ = p.handle(.login, at: 2)
        _ = p.handle(.disappear("home"), at: 3)
        #expect(p.handle(.appear("home"), at: 4) == nil)
    }

    // §5.5 A watched page back after being away longer than `away`.
    @Test func aPageBackAfterLongerThanAwaySyncs() {
        var p = loggedIn()
        _ = p.handle(.background, at: 0)  // keep the interval out of this test
        #expect(p.handle(.appear("home"), at: 0) == .firstAppearance)
        _ = p.handle(.disappear("home"), at: 10)
        #expect(p.handle(.appear("home"), at: 70) == nil)  // exactly 60 s: not longer
        _ = p.handle(.disappear("home"), at: 80)
        #expect(p.handle(.appear("home"), at: 140.5) == .returned)
    }

    @Test func awayIsMeasuredPerPage() {
        var p = loggedIn()
        _ = p.handle(.background, at: 0)
        _ = p.handle(.appear("home"), at: 0)
        _ = p.handle(.appear("mine"), at: 0)
        _ = p.handle(.disappear("home"), at: 1)
        _ = p.handle(.disappear("mine"), at: 100)
        #expect(p.handle(.appear("mine"), at: 110) == nil)
        #expect(p.handle(.appear("home"), at: 110) == .returned)
    }

    // Priority: push > first-appearance > returned > interval; one sync per event.
    @Test func theFirstReasonInPriorityOrderIsGiven() {
        #expect(
            [SyncPolicy.Reason.interval, .returned, .push, .firstAppearance].sorted()
                == [.push, .firstAppearance, .returned, .interval])
        // first-appearance and interval at once: first-appearance.
        var p = loggedIn()
        _ = p.handle(.appear("mine"), at: 0)
        #expect(p.handle(.appear("home"), at: 500) == .firstAppearance)
        // returned and interval at once: returned.
        _ = p.handle(.disappear("home"), at: 501)
        #expect(p.handle(.appear("home"), at: 700) == .returned)
        // push and interval at once: push.
        #expect(p.handle(.push, at: 900) == .push)
        // The interval restarted at the push.
        #expect(p.handle(.tick, at: 901) == nil)
    }

    @Test func aSavedPolicyResumesWhereItWas() {
        var p = loggedIn()
        _ = p.handle(.appear("home"), at: 5)
        _ = p.handle(.disappear("mine"), at: 6)
        var restored = SyncPolicy(
            configuration: p.configuration, loggedIn: p.loggedIn, foreground: p.foreground,
            visible: p.visible, appearedSinceLogin: p.appearedSinceLogin,
            disappearedAt: p.disappearedAt, intervalStart: p.intervalStart)
        #expect(restored == p)
        #expect(restored.handle(.tick, at: 65) == .interval)
        #expect(p.handle(.tick, at: 65) == .interval)
    }
}
