import BadgeFlowTestSupport
import Foundation
import Testing

@testable import BadgeFlow

/// A generated day of a backend — ≥ 10k accounts of several devices, pushes, silent reads,
/// reads on the web, logouts, 410s, duplicates, bad lines, expiring marks and `expire` ticks —
/// checked against a model written here, not derived from the filter: what each account's
/// total is, and what each device shows given only what the filter tells the server to send
/// (stamped `payload` badges, `badgeUpdates`) and what its own app does.
@Suite struct ReplayCheckTests {
    /// The model of one account: its marks (chat counts by thread, an inbox count that may
    /// expire) and what each logged-in device shows.
    struct ModelAccount {
        var chats: [String: Int] = [:]
        var inbox = 0
        var inboxExpires: Int?
        var shows: [String: Int] = [:]
        var total: Int { chats.values.reduce(0, +) + inbox }

        /// Marks due at or before `time` go (as the account's next event at `time` would).
        mutating func expire(through time: Int) {
            if let e = inboxExpires, e <= time {
                inbox = 0
                inboxExpires = nil
            }
        }
    }

    /// One result line, parsed.
    private func parse(_ line: Substring) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any])
    }

    private func updates(_ value: Any?) -> [(String, Int)] {
        ((value as? [[String: Any]]) ?? []).compactMap { u in
            guard let d = u["device"] as? String, let b = u["badge"] as? Int else { return nil }
            return (d, b)
        }
    }

    @Test func everyDeviceShowsItsAccountsTotalAfterEveryResult() throws {
        var r = SplitMix64(seed: 26)
        var session = FilterSession(rules: .builtIn, stamp: true)
        var model: [String: ModelAccount] = [:]
        let accounts = (0..<10_000).map { "acct\($0)" }
        var time = 1_795_000_000
        var seq = 0
        var sentWithID: [String] = []
        var checkedReconciles = 0, duplicates = 0, rejected = 0, expiredAccounts = 0

        /// Feeds one line and returns its parsed result.
        func feed(_ line: String) throws -> [String: Any] {
            seq += 1
            session.feed(line)
            let out = String(decoding: session.takeOutput(), as: UTF8.self)
            let lines = out.split(separator: "\n")
            try #require(lines.count == 1, "seq \(seq): \(line)")
            return try parse(lines[0])
        }

        /// After a result for `id`: every logged-in device shows the model's total.
        func check(_ id: String, _ result: [String: Any], line: String) {
            guard let account = model[id] else { return }
            for (device, shown) in account.shows where shown != account.total {
                Issue.record("seq \(seq): \(id)/\(device) shows \(shown), total \(account.total): \(line) -> \(result)")
            }
        }

        /// Applies what a result tells the server to send to `id`'s devices.
        func deliver(_ id: String, updates list: [(String, Int)], leaving: String? = nil) {
            for (device, badge) in list {
                if device == leaving {
                    if badge != 0 { Issue.record("seq \(seq): \(device) left \(id) and was sent \(badge)") }
                    continue
                }
                guard model[id]?.shows[device] != nil else {
                    Issue.record("seq \(seq): an update for \(id)/\(device), which is not logged in")
                    continue
                }
                model[id]?.shows[device] = badge
            }
        }

        // Every account starts with 2 or 3 devices logging in.
        for id in accounts {
            model[id] = ModelAccount()
            for d in 0..<(2 + r.below(2)) {
                time += 1
                let result = try feed(#"{"op":"login","account":"\#(id)","device":"d\#(d)","at":\#(time)}"#)
                #expect(updates(result["badgeUpdates"]).isEmpty)
                model[id]?.shows["d\(d)"] = 0
            }
        }
        for step in 0..<50_000 {
            time += 1 + r.below(3)
            if step % 5_000 == 4_999 {
                // A fleet-wide tick.
                let result = try feed(#"{"op":"expire","at":\#(time)}"#)
                let entries = (result["accounts"] as? [[String: Any]]) ?? []
                var listed = Set<String>()
                for e in entries {
                    guard let id = e["account"] as? String else { continue }
                    listed.insert(id)
                    model[id]?.expire(through: time)
                    #expect(e["icon"] as? Int == model[id]?.total, "seq \(seq) \(id)")
                    deliver(id, updates: updates(e["badgeUpdates"]))
                    check(id, result, line: "expire")
                }
                for (id, account) in model where account.inboxExpires.map({ $0 <= time }) ?? false {
                    Issue.record("seq \(seq): \(id)'s inbox was due at \(account.inboxExpires ?? 0) and not expired")
                }
                expiredAccounts += listed.count
                continue
            }
            let id = accounts[r.below(accounts.count)]
            guard var account = model[id] else { continue }
            let members = account.shows.keys.sorted()
            let device = members.isEmpty ? nil : members[r.below(members.count)]
            let thread = "t\(r.below(4))"
            let who = #""account":"\#(id)","at":\#(time)"# + (device.map { #","device":"\#($0)""# } ?? "")
            var line: String
            enum Kind { case alert, silentRead, webRead, accountPush, inbox, tick, logout, unregister, login, reconcile, bad, duplicate }
            var kind: Kind
            switch r.below(100) {
            case 0..<30: kind = .alert
            case 30..<40: kind = .silentRead
            case 40..<48: kind = .webRead
            case 48..<52: kind = .accountPush
            case 52..<60: kind = .inbox
            case 60..<68: kind = .tick
            case 68..<72: kind = .logout
            case 72..<75: kind = .unregister
            case 75..<84: kind = .login
            case 84..<90: kind = .reconcile
            case 90..<95: kind = .bad
            default: kind = .duplicate
            }
            if device == nil && [.alert, .silentRead, .tick, .logout, .unregister, .reconcile].contains(kind) { kind = .login }
            if kind == .duplicate && sentWithID.isEmpty { kind = .alert }
            account.expire(through: time)
            switch kind {
            case .alert:
                let messageID = "m\(seq)"
                line =
                    #"{"op":"push",\#(who),"id":"\#(messageID)","payload":{"aps":{"alert":"hi","thread-id":"\#(thread)"}}}"#
                sentWithID.append(line)
                if sentWithID.count > 64 { sentWithID.removeFirst() }
                account.chats[thread, default: 0] += 1
            case .silentRead:
                line = #"{"op":"push",\#(who),"payload":{"aps":{"content-available":1},"type":"read","thread":"\#(thread)"}}"#
                account.chats[thread] = nil
            case .webRead:
                line = #"{"op":"clear","account":"\#(id)","at":\#(time),"path":"root.chat.\#(thread)"}"#
                account.chats[thread] = nil
            case .accountPush:
                line = #"{"op":"push","account":"\#(id)","at":\#(time),"payload":{"aps":{"alert":"all","thread-id":"\#(thread)"}}}"#
                account.chats[thread, default: 0] += 1
            case .inbox:
                let n = 1 + r.below(5), ttl = 50 + r.below(20_000)
                line = #"{"op":"set",\#(who),"path":"root.inbox","count":\#(n),"ttl":\#(ttl)}"#
                account.inbox = n
                account.inboxExpires = time + ttl
            case .tick:
                line = #"{"op":"tick",\#(who)}"#
            case .logout:
                line = #"{"op":"logout",\#(who)}"#
            case .unregister:
                line = #"{"op":"unregister",\#(who)}"#
            case .login:
                let newcomer = "d\(3 + r.below(3))"
                line = #"{"op":"login","account":"\#(id)","device":"\#(newcomer)","at":\#(time)}"#
            case .reconcile:
                line = #"{"op":"reconcile",\#(who),"badge":\#(account.shows[device ?? ""] ?? 0)}"#
            case .bad:
                let variants = [
                    #"{"op":"clear",\#(who),"path":"root.chat.\#(thread)."}"#,
                    #"{"op":"push","account":"\#(id)","device":"intruder","at":\#(time + 99_999),"payload":{"aps":{"badge":"x"}}}"#,
                    #"{"op":"set","account":"\#(id)","device":"intruder","path":"elsewhere","ttl":1}"#,
                    #"{"op":"login","account":"\#(id)","device":"intruder","id":""}"#,
                    #"{"op":"reconcile","account":"\#(id)","badge":3}"#,
                    "{\"op\":",
                ]
                line = variants[r.below(variants.count)]
            case .duplicate:
                line = sentWithID[r.below(sentWithID.count)]
            }
            let result = try feed(line)
            switch kind {
            case .bad:
                #expect(result["error"] != nil, "seq \(seq): \(line)")
                rejected += 1
                // The model is unchanged (its expiry is applied only by a real event).
                continue
            case .duplicate:
                #expect(result["duplicate"] as? Bool == true, "seq \(seq)")
                #expect(result["badgeUpdates"] == nil && result["payload"] == nil)
                duplicates += 1
                continue
            default:
                break
            }
            #expect(result["error"] == nil, "seq \(seq): \(line) -> \(result)")
            #expect(result["icon"] as? Int == account.total, "seq \(seq): \(line) -> \(result)")
            // What the line itself delivers, then what the server is told to send.
            var leaving: String? = nil
            switch kind {
            case .alert:
                let payload = result["payload"] as? [String: Any]
                let badge = (payload?["aps"] as? [String: Any])?["badge"] as? Int
                #expect(badge == account.total, "seq \(seq)")
                if let device, let badge { account.shows[device] = badge }
            case .accountPush:
                let payload = result["payload"] as? [String: Any]
                let badge = (payload?["aps"] as? [String: Any])?["badge"] as? Int ?? -1
                for d in account.shows.keys { account.shows[d] = badge }
            case .tick, .inbox:
                // The device's own app reported: it set its icon to the total.
                if let device { account.shows[device] = account.total }
            case .login:
                // The new device's app sets its icon to the total.
                if case let d as String = result["device"] { account.shows[d] = account.total }
            case .logout:
                leaving = device
                account.shows[device ?? ""] = nil
            case .unregister:
                let sent = updates(result["badgeUpdates"]).contains { $0.0 == device }
                #expect(!sent, "seq \(seq): an unregistered device was sent a badge")
                account.shows[device ?? ""] = nil
            case .reconcile:
                // The device reported what the model says it shows: nothing comes back (unless
                // a mark expired at this very event, which changes the total).
                if result["expired"] == nil {
                    #expect(result["badgeUpdates"] == nil, "seq \(seq): \(result)")
                    checkedReconciles += 1
                }
            case .silentRead, .webRead, .bad, .duplicate:
                break
            }
            model[id] = account
            deliver(id, updates: updates(result["badgeUpdates"]), leaving: leaving)
            check(id, result, line: line)
        }
        #expect(checkedReconciles > 1_000 && duplicates > 500 && rejected > 1_000 && expiredAccounts > 100)
    }
}
