/// The report of one account as plain text, for a terminal (`badgeflow report --account ID --text`).
extension ReplayReport {
    /// Account `id`'s answer as text: its devices (at the end and those that left), the lines
    /// that changed a device's number, the icon or were rejected or duplicates, and the marks that
    /// make the total at the end with who set them; nil when `id` is not shown (name it with
    /// `accounts:` when making the report).
    public func text(for id: String) -> String? {
        guard let a = shown.first(where: { $0.id == id }) else { return nil }
        let shownID = id.isEmpty ? "\"\"" : id
        var out = ""
        func line(_ s: String = "") { out += s + "\n" }
        func when(_ t: Double) -> String { a.timed ? Self.timeText(t) : "-" }
        guard let e = entry(id) else {
            line("account \(shownID): no line of the input names it")
            return out
        }
        line("account \(shownID): icon \(a.icon) at the end; \(a.results) results, \(a.duplicates) duplicates, \(a.errors) errors")
        let flags = e.flags.map(\.title)
        if !flags.isEmpty { line("flags: " + flags.joined(separator: "; ")) }
        if let start = startTime { line("input: events from \(Self.timeText(start)) to \(Self.timeText(endTime))") }
        line()
        line("devices (the number the server knows each shows):")
        let present = Set(a.devices.map(\.device))
        var table: [[String]] = [["device", "number", "status"]]
        for d in a.devices {
            table.append([
                d.device.isEmpty ? "\"\"" : d.device, "\(d.badge)", d.badge == a.icon ? "shows the total" : "NOT the total (\(a.icon))",
            ])
        }
        for d in a.departed where !present.contains(d.device) {
            table.append([
                d.device.isEmpty ? "\"\"" : d.device, "\(d.badge)",
                "left by \(d.op) at seq \(d.seq) (\(when(d.time)))\(d.badge != 0 ? ", showing \(d.badge)" : "")",
            ])
        }
        if table.count == 1 { table.append(["(none)", "", ""]) }
        out += Self.columns(table, indent: "  ")
        line()
        line("lines that changed a device's number or the icon, or were rejected or duplicates:")
        var rows: [[String]] = [["seq", "time", "op", "id", "device", "path", "change", "icon", "device numbers after"]]
        var icon: Int? = nil
        var quiet = 0
        for r in a.rows {
            let changed = !r.delivered.isEmpty || (r.icon != nil && r.icon != icon) || r.error != nil || r.duplicate
            if let i = r.icon { icon = i }
            guard changed else {
                quiet += 1
                continue
            }
            let numbers = r.delivered.map { "\($0.device.isEmpty ? "\"\"" : $0.device) \($0.badge < 0 ? "left" : String($0.badge))" }
            rows.append([
                "\(r.seq)", a.timed ? Self.timeText(r.time) : "-", r.op, r.id.map { (r.duplicate ? "DUPLICATE " : "") + $0 } ?? "",
                r.device, r.path, r.change, r.icon.map(String.init) ?? "", numbers.joined(separator: ", "),
            ])
        }
        out += Self.columns(rows, indent: "  ")
        var notes: [String] = []
        if quiet > 0 { notes.append("\(quiet) other lines changed neither") }
        if a.omitted > 0 { notes.append("\(a.omitted) earlier results not kept") }
        if !notes.isEmpty { line("  (" + notes.joined(separator: "; ") + ")") }
        line()
        line("marks that make the total at the end (\(a.icon)), with who set them:")
        var marks: [[String]] = [["path", "mark", "set by", "seq", "device", "set at", "age"]]
        for m in a.marks {
            let row = a.rows.first { $0.seq == m.seq }
            marks.append([
                m.path, m.mark, m.origin, "\(m.seq)", row.map { $0.device.isEmpty ? "(account)" : $0.device } ?? "?",
                row.map { when($0.time) } ?? "-", Self.duration(m.age),
            ])
        }
        if a.marks.isEmpty { marks.append(["(none)", "", "", "", "", "", ""]) }
        out += Self.columns(marks, indent: "  ")
        line()
        if a.settings.isEmpty {
            line("settings: none (every path contributes as the rules say)")
        } else {
            line("settings (the account's own, over the rules; contribute none: muted, adds nothing):")
            out += Self.columns([["path", "contributes"]] + a.settings.map { [$0.path, $0.mode.rawValue] }, indent: "  ")
        }
        return out
    }

    /// Rows as left-aligned columns (two spaces apart), trailing spaces trimmed.
    static func columns(_ rows: [[String]], indent: String) -> String {
        var widths: [Int] = []
        for r in rows {
            for (i, c) in r.enumerated() {
                if i == widths.count { widths.append(0) }
                widths[i] = max(widths[i], c.count)
            }
        }
        var out = ""
        for r in rows {
            var l = indent
            for (i, c) in r.enumerated() {
                l += c
                if i < r.count - 1 { l += String(repeating: " ", count: widths[i] - c.count + 2) }
            }
            while l.hasSuffix(" ") { l.removeLast() }
            out += l + "\n"
        }
        return out
    }
}
