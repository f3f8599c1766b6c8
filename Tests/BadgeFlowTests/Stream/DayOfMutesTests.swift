import BadgeFlowTestSupport
import BadgeTree
import Foundation
import Testing

@testable import BadgeFlow

/// A day of a fleet, as a backend and its apps would see it: pushes, reads on several devices,
/// per-account mutes and unmutes (`contribute`), a rules change mid-stream (a tab muted in the
/// rules) followed by a fleet-wide reconcile, and a fleet-wide reconcile at the end. Checked:
///
/// - every device's number, as a sender acting on the results knows it (pushes that set the
///   icon, its own app's reports, `badgeUpdates`), equals its account's total at the end;
/// - the server's totals equal those of one `BadgeCenter` per account (the app library) fed
///   the same events, after every event of that account and at the end;
/// - no `contribute` result carries a decrement.
///
/// `BADGEFLOW_DAY_LINES` and `BADGEFLOW_DAY_ACCOUNTS` scale it (defaults 20,000 and 2,000).
@Suite struct DayOfMutesTests {
    static let rulesBefore = """
        {"version":1,"root":"root",
         "contribute":{"root.chat.bots":"dot"},
         "rules":[
          {"name":"chat","match":{"/type":"chat"},"path":"root.chat.{/thread}","action":"increment"},
          {"name":"friend","match":{"/type":"friend"},"path":"root.discover.friends","action":"increment"},
          {"name":"read","match":{"/type":"read"},"path":"root.chat.{/thread}","action":"clear"}]}
        """
    /// The same, with friend requests muted in the rules: many totals drop at once.
    static let rulesAfter = rulesBefore.replacingOccurrences(
        of: #""contribute":{"root.chat.bots":"dot"}"#,
        with: #""contribute":{"root.chat.bots":"dot","root.discover.friends":"none"}"#)

    /// What a sender knows each device shows, from the result lines it acts on.
    struct Sender {
        var shown: [String: [String: Int]] = [:]
        var total: [String: Int] = [:]

        mutating func take(_ line: String, event: Event?) throws {
            guard let value = try? JSONValue.parse(line), case .object(let fields) = value else {
                Issue.record("not JSON: \(line)")
                return
            }
            func field(_ k: String) -> JSONValue? { fields.first { $0.0 == k }?.1 }
            if field("error") != nil {
                Issue.record("error line: \(line)")
                return
            }
            func updates(_ v: JSONValue?, account: String) {
                guard case .array(let items)? = v else { return }
                for case .object(let u) in items {
                    guard case .string(let d)? = u.first(where: { $0.0 == "device" })?.1,
                        case .int(let n)? = u.first(where: { $0.0 == "badge" })?.1
                    else { continue }
                    shown[account, default: [:]][d] = Int(n)
                }
            }
            if case .array(let accounts)? = field("accounts") {
                for case .object(let entry) in accounts {
                    guard case .string(let a)? = entry.first(where: { $0.0 == "account" })?.1 else { continue }
                    if case .int(let icon)? = entry.first(where: { $0.0 == "icon" })?.1 { total[a] = Int(icon) }
                    updates(entry.first { $0.0 == "badgeUpdates" }?.1, account: a)
                }
                return
            }
            guard let event, let account = event.account, case .int(let icon)? = field("icon") else { return }
            if case .bool(true)? = field("duplicate") { return }
            total[account] = Int(icon)
            let setsIcon = event.kind?.setsIcon ?? true
            // A device joins with its first event, showing 0 until something is delivered.
            if !event.device.isEmpty && shown[account]?[event.device] == nil { shown[account, default: [:]][event.device] = 0 }
            if !event.device.isEmpty {
                // A push that sets the icon delivers it; a device reporting what it shows
                // shows that; any other op but push is the device's own app setting its icon.
                if event.op == .reconcile, let n = event.badge {
                    shown[account, default: [:]][event.device] = n
                } else if event.op != .push || setsIcon {
                    shown[account, default: [:]][event.device] = Int(icon)
                }
            } else if event.op == .push && setsIcon {
                // Sent to every device of the account.
                for d in shown[account, default: [:]].keys { shown[account]?[d] = Int(icon) }
            }
            updates(field("badgeUpdates"), account: account)
        }
    }

    @Test func everyDeviceEndsOnItsTotalAndTheAppAgrees() throws {
        let env = ProcessInfo.processInfo.environment
        let lineCount = env["BADGEFLOW_DAY_LINES"].flatMap(Int.init) ?? 20_000
        let accountCount = env["BADGEFLOW_DAY_ACCOUNTS"].flatMap(Int.init) ?? 2_000
        let before = try RuleSet.parse(Self.rulesBefore)
        let after = try RuleSet.parse(Self.rulesAfter)
        var g = SplitMix64(seed: 42)
        let threads = ["bob", "amy", "bots", "team"]
        let devices = ["phone", "ipad", "mac"]
        var lines: [String] = []
        lines.reserveCapacity(lineCount + 2)
        var mutes = 0, unmutes = 0
        for i in 0..<lineCount {
            let a = "u\(Int.random(in: 0..<accountCount, using: &g))"
            let d = devices[Int.random(in: 0..<(Int.random(in: 0..<4, using: &g) == 0 ? 3 : 1), using: &g)]
            let t = threads.randomElement(using: &g) ?? "bob"
            let at = i
            switch Int.random(in: 0..<20, using: &g) {
            case 0..<8:
                lines.append(
                    #"{"op":"push","account":"\#(a)","device":"\#(d)","at":\#(at),"payload":{"aps":{"alert":"m"},"type":"chat","thread":"\#(t)"}}"#
                )
            case 8..<10:
                lines.append(
                    #"{"op":"push","account":"\#(a)","at":\#(at),"payload":{"aps":{"alert":"f"},"type":"friend"}}"#)
            case 10:
                lines.append(
                    #"{"op":"push","account":"\#(a)","device":"\#(d)","at":\#(at),"push-type":"background","payload":{"aps":{"content-available":1},"type":"read","thread":"\#(t)"}}"#
                )
            case 11..<14:
                lines.append(#"{"op":"clear","account":"\#(a)","device":"\#(d)","at":\#(at),"path":"root.chat.\#(t)","id":"c\#(i)"}"#)
            case 14:
                lines.append(#"{"op":"clear","account":"\#(a)","at":\#(at),"path":"root.discover.friends"}"#)
            case 15, 16:
                mutes += 1
                let mode = ["none", "dot"].randomElement(using: &g) ?? "none"
                lines.append(
                    #"{"op":"contribute","account":"\#(a)","device":"\#(d)","at":\#(at),"path":"root.chat.\#(t)","mode":"\#(mode)","id":"m\#(i)"}"#
                )
            case 17:
                unmutes += 1
                let mode = ["count", "rules"].randomElement(using: &g) ?? "rules"
                lines.append(
                    #"{"op":"contribute","account":"\#(a)","device":"\#(d)","at":\#(at),"path":"root.chat.\#(t)","mode":"\#(mode)","id":"m\#(i)"}"#
                )
            case 18: lines.append(#"{"op":"login","account":"\#(a)","device":"\#(d)","at":\#(at)}"#)
            default: lines.append(#"{"op":"reconcile","account":"\#(a)","device":"\#(d)","badge":\#(Int.random(in: 0..<3, using: &g))}"#)
            }
        }
        let half = lines.count / 2
        lines.insert(#"{"op":"reconcile"}"#, at: half)
        lines.append(#"{"op":"reconcile"}"#)

        // Server totals compared with the app's (after every event of an account, and at the end).
        var totalsCompared = 0, totalsDiffering = 0
        var sender = Sender()
        var centers: [String: BadgeCenter] = [:]
        var settings: [String: [String: Contribution]] = [:]
        var session = FilterSession(rules: before)
        var rules = before
        let analyzer = LineAnalyzer(rules: before)
        for (i, line) in lines.enumerated() {
            if i == half {
                // The rules change: every account goes through the state's JSON and comes
                // back under the new rules, as a run with another --rules loads it.
                var next = BadgeStream(rules: after)
                for id in session.stream.accountIDs {
                    guard let a = try session.stream.account(id) else { continue }
                    let text = StateFile.encodeAccount(a)
                    next.addLoaded(try StateFile.decodeAccount(text, at: "", file: "day", rules: after), as: id, compact: false)
                }
                session = FilterSession(stream: next)
                rules = after
                #expect(after.changeNotice(from: before).totalsCanChange)
                // The app updates too: its marks and its user's mutes under the new settings.
                for (id, center) in centers {
                    var tree = BadgeTree(configuration: after.tree)
                    try tree.restore(contentsOf: center.tree.records)
                    let fresh = BadgeCenter(tree: tree)
                    for (path, mode) in settings[id] ?? [:] { try fresh.setContribution(mode, of: path) }
                    centers[id] = fresh
                }
            }
            // The line's result read in place (`output.bytes` copies the whole output so far:
            // quadratic over a 200k-line day).
            let mark = session.output.count
            session.feed(line)
            let text = session.output.withUnsafeBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[mark...]), as: UTF8.self) }
                .trimmingCharacters(in: .newlines)
            var event: Event? = nil
            if case .event(let e) = analyzer.analyze(line) { event = e }
            try sender.take(text, event: event)
            guard let event, let account = event.account else { continue }
            if event.op == .contribute { #expect(!text.contains("decrement"), "\(text)") }
            // The app: one center per account, fed what its server was fed.
            let center = centers[account] ?? BadgeCenter(configuration: rules.tree)
            centers[account] = center
            if text.contains(#""duplicate":true"#) { continue }
            switch event.op {
            case .push:
                if let path = event.path {
                    if case .clear = event.action { try center.clear(path) } else { try center.increment(path) }
                }
            case .clear: try center.clear(event.path ?? "")
            case .contribute:
                let path = event.path ?? ""
                if case .mode(let m)? = event.setting {
                    settings[account, default: [:]][path] = m
                    try center.setContribution(m, of: path)
                } else {
                    settings[account]?.removeValue(forKey: path)
                    try center.setContribution(rules.tree.contribute[path] ?? .count, of: path)
                }
            default: break
            }
            let server = try #require(try session.stream.account(account))
            #expect(server.tree.total == center.total, "line \(i + 1): \(line)")
            totalsCompared += 1
            if server.tree.total != center.total { totalsDiffering += 1 }
        }
        #expect(session.stream.rejected == 0)
        var devicesChecked = 0, wrong = 0
        for id in session.stream.accountIDs {
            let server = try #require(try session.stream.account(id))
            #expect(server.tree.total == centers[id]?.total)
            totalsCompared += 1
            if server.tree.total != centers[id]?.total { totalsDiffering += 1 }
            // An account without a device shows its number nowhere: a reconcile lists only
            // accounts with a device to repair, so the sender's last total of it may be old.
            #expect(
                server.devices.isEmpty || sender.total[id] == server.tree.total,
                "account \(id): devices \(server.devices.map { ($0.key, $0.value.delivered) }), shown \(sender.shown[id] ?? [:])")
            for (device, _) in server.devices {
                devicesChecked += 1
                if (sender.shown[id]?[device] ?? 0) != server.tree.total { wrong += 1 }
            }
        }
        #expect(wrong == 0)
        #expect(totalsDiffering == 0)
        print(
            "day: \(lines.count) lines, \(session.stream.accountCount) accounts, \(devicesChecked) devices checked, \(mutes) mutes, \(unmutes) unmutes, 2 fleet-wide reconciles, a rules change at line \(half + 1); devices not on their account's total (mismatches): \(wrong); server totals equal to the BadgeTree centers': \(totalsCompared - totalsDiffering) of \(totalsCompared) compared (after each event, and every account at the end)"
        )
        #expect(session.stream.accountCount >= min(accountCount, lineCount) / 2)
    }
}
