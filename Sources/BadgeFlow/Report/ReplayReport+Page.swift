/// The report as one self-contained HTML page.
///
/// Charts are inline SVG drawn here, not by a script or a chart library: the page needs no
/// network and nothing vendored, reads the same in Chromium, Firefox and Safari, prints, and
/// its figures are in the markup a test (or a screen reader) reads. The one script is the
/// filter box (`#filter=TEXT` in the address fills it in).
extension ReplayReport {
    /// The page, titled with `title` (e.g. the input's names).
    public func page(title: String) -> String {
        var h = HTMLText()
        h.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        h.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        h.raw("<link rel=\"icon\" href=\"data:,\"><title>badgeflow report: ")
        h.text(title)
        h.raw("</title><style>\(Self.style)</style></head><body>\n")
        h.raw("<header><h1>Why is that number on the screen?</h1><p>Replay of <code>")
        h.text(title)
        h.raw("</code> with the filter's engine: every figure below is one <code>badgeflow filter</code> writes for the same input.")
        h.raw(" Icon policy <code>\(rules.icon == .tree ? "tree" : "payload")</code>.")
        h.raw(
            " A path that contributes <code>none</code> (muted in the rules, or by the account's own setting) adds nothing to the icon.</p>"
        )
        facts(&h)
        h.raw("</header>\n")
        nav(&h)
        h.raw("<main>\n")
        groupsSection(&h)
        summary(&h)
        unmatchedSection(&h)
        marksSection(&h)
        h.raw("<section id=\"accounts\" aria-labelledby=\"accounts-h\"><h2 id=\"accounts-h\">Accounts shown</h2>")
        h.raw(
            "<p>Each account named with <code>--account</code>, the \(shownByTime) whose icon stayed above zero the longest (event time; ties: more results), and up to \(groupCap) of each group support asks about (above).</p>\n"
        )
        for account in shown { section(account, into: &h) }
        if shown.isEmpty { h.raw("<p>No account to show: the input has no applied event.</p>") }
        h.raw("</section>\n</main>\n")
        indexScript(&h)
        h.raw("<script>\(Self.script)</script>\n</body></html>\n")
        return h.out
    }

    /// The first screen's line: the input's time range and totals.
    private func facts(_ h: inout HTMLText) {
        h.raw("<p id=\"facts\">Events from <time data-time=\"first\">")
        h.raw(startTime.map { Self.timeText($0) } ?? "(no event time)")
        h.raw("</time> to <time data-time=\"last\">")
        h.raw(startTime == nil ? "(no event time)" : Self.timeText(endTime))
        h.raw("</time>: <strong>\(results)</strong> results, <strong>\(accountCount)</strong> accounts")
        h.raw(" (\(index.count) in the input), <strong>\(deviceCount)</strong> devices at the end,")
        h.raw(" <strong>\(errors)</strong> errors, <strong data-metric=\"duplicates\">\(duplicates)</strong> duplicates.</p>")
    }

    /// The element id of account `id`'s section: `account-` and the id, every byte but
    /// `A-Z a-z 0-9 - . _ ~` percent-encoded (so `#account-…` links and URLs agree).
    static func anchor(_ id: String) -> String {
        var out = "account-"
        let hex = Array("0123456789ABCDEF".utf8)
        for b in id.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(b >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(b & 15)]))
            }
        }
        return out
    }

    /// `word` as a POSIX shell word: as it is when it needs no quoting, else in single quotes.
    static func shellWord(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.utf8.allSatisfy { b in
                switch b {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "@%+=:,./_-".utf8.contains(b)
                }
            }
        guard !plain else { return word }
        var out = "'"
        for c in word.unicodeScalars {
            if c == "'" { out += "'\\''" } else { out.unicodeScalars.append(c) }
        }
        return out + "'"
    }

    /// The command that reports account `id` (`text`: as text for a terminal).
    public func command(for id: String, text: Bool = false) -> String {
        var words = command.before.map(Self.shellWord)
        words += ["--account", Self.shellWord(id)]
        if text { words.append("--text") }
        words += command.after.map(Self.shellWord)
        return words.joined(separator: " ")
    }

    private func nav(_ h: inout HTMLText) {
        h.raw("<nav id=\"find\" aria-labelledby=\"nav-h\" data-command-before=\"")
        h.text((command.before.map(Self.shellWord) + ["--account"]).joined(separator: " "))
        h.raw("\" data-command-after=\"")
        h.text(command.after.map(Self.shellWord).joined(separator: " "))
        h.raw("\"><h2 id=\"nav-h\">Find an account or a device</h2>")
        h.raw("<label for=\"filter\">Account or device id contains</label> ")
        h.raw("<input id=\"filter\" type=\"search\" autocomplete=\"off\" aria-controls=\"search-results account-list accounts\">")
        h.raw(" <span id=\"filter-count\" role=\"status\" aria-live=\"polite\">\(shown.count) shown</span>")
        if indexComplete {
            h.raw(
                "<p>The search covers all \(index.count) accounts of the input and their devices (<code>report.html#filter=TEXT</code> opens with it filled in). "
            )
        } else {
            h.raw(
                "<p id=\"index-partial\">The input has \(index.count) accounts: more than the page's index holds within its size budget, so the search covers the accounts flagged below and those shown. For any other account: <code>"
            )
            h.text(command(for: "ID"))
            h.raw("</code> (or with <code>--text</code> for a terminal). ")
        }
        h.raw("An account not shown in detail gives the command that shows it.</p>")
        h.raw("<table id=\"search-results\" hidden><caption>Found in the index</caption><thead><tr>")
        for c in ["account", "icon at the end", "devices (number at the end)", "flags", "detail"] {
            h.raw("<th scope=\"col\">\(c)</th>")
        }
        h.raw("</tr></thead><tbody></tbody></table><p id=\"search-more\"></p>")
        h.raw("<ul id=\"account-list\">")
        for a in shown {
            h.raw("<li data-entry=\"")
            h.text(a.id)
            h.raw("\"><a href=\"#\(Self.anchor(a.id))\">")
            h.text(a.id.isEmpty ? "(default device)" : a.id)
            h.raw("</a> icon \(a.icon)\(a.named ? ", named" : "")</li>")
        }
        h.raw("</ul></nav>\n")
    }

    /// The groups support asks about, with their counts and the accounts shown.
    private func groupsSection(_ h: inout HTMLText) {
        h.raw("<section id=\"groups\" aria-labelledby=\"groups-h\"><h2 id=\"groups-h\">Accounts support asks about</h2><ul>")
        for g in groups {
            h.raw(
                "<li data-group=\"\(g.reason.rawValue)\" data-count=\"\(g.count)\">\(g.reason.title) (flag <code>\(g.reason.flag.map(String.init) ?? "")</code>): <strong>\(g.count)</strong> account\(g.count == 1 ? "" : "s")"
            )
            if g.count > g.shown.count { h.raw(", the \(g.shown.count) most striking shown") }
            if !g.shown.isEmpty { h.raw(": ") }
            for (k, id) in g.shown.enumerated() {
                h.raw(k > 0 ? ", " : "")
                h.raw("<a data-member=\"")
                h.text(id)
                h.raw("\" href=\"#\(Self.anchor(id))\">")
                h.text(id.isEmpty ? "\"\"" : id)
                h.raw("</a>")
            }
            h.raw("</li>")
        }
        h.raw("</ul>")
        if !indexComplete {
            h.raw("<p>The others of each group are in the search index (by flag).</p>")
        }
        h.raw("</section>\n")
    }

    /// The index as text in a `<script type="text/plain">`: one account a line,
    /// `id TAB icon TAB flags TAB results TAB duplicates TAB errors TAB devices TAB left`,
    /// devices as `id=n` separated by spaces, left ones as `id=n@seq`; `\`, `<`, `=`, space
    /// and control characters in ids written `\uXXXX` (`\\` for a backslash).
    private func indexScript(_ h: inout HTMLText) {
        h.raw(
            "<script type=\"text/plain\" id=\"account-index\" data-accounts=\"\(index.count)\" data-listed=\"\(indexEntries)\" data-complete=\"\(indexComplete)\">"
        )
        h.raw(indexLines)
        h.raw("</script>\n")
    }

    /// The index lines (every account, or past ``indexBudget`` the flagged and shown ones).
    func indexText(complete: Bool) -> (text: String, entries: Int) {
        var out = ""
        var entries = 0
        out.reserveCapacity(min(indexBudget, index.count * 40))
        func esc(_ s: String) {
            for c in s.unicodeScalars {
                switch c {
                case "\\": out += "\\\\"
                case "<", "=", " ", "&", "@": out += Self.escaped(c)
                default: if c.value < 0x20 || c.value == 0x7F { out += Self.escaped(c) } else { out.unicodeScalars.append(c) }
                }
            }
        }
        let shownIDs = Set(shown.map(\.id))
        for e in index where complete || !e.flags.isEmpty || shownIDs.contains(e.id) {
            // Past the budget (flagged accounts alone can be many), the rest is left out.
            if !complete && out.utf8.count > indexBudget { break }
            entries += 1
            esc(e.id)
            out += "\t\(e.icon)\t"
            for f in e.flags { if let c = f.flag { out.append(c) } }
            out += "\t\(e.results)\t\(e.duplicates)\t\(e.errors)\t"
            for (k, d) in e.devices.enumerated() {
                if k > 0 { out += " " }
                esc(d.device)
                out += "=\(d.badge)"
            }
            out += "\t"
            for (k, d) in e.left.enumerated() {
                if k > 0 { out += " " }
                esc(d.device)
                out += "=\(d.badge)@\(d.seq)"
            }
            out += "\n"
        }
        return (out, entries)
    }

    static func escaped(_ c: Unicode.Scalar) -> String {
        let hex = String(c.value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private func summary(_ h: inout HTMLText) {
        h.raw("<section id=\"summary\" aria-labelledby=\"summary-h\"><h2 id=\"summary-h\">Summary</h2>")
        h.raw("<table class=\"metrics\"><caption>The run's figures</caption><tbody>")
        let metrics: [(String, String, Int)] = [
            ("results", "Results (non-blank lines)", results),
            ("errors", "Error lines", errors),
            ("accounts", "Accounts at the end", accountCount),
            ("devices", "Devices at the end", deviceCount),
            ("decrements", "Decrements (an expire: one per account)", decrements),
            ("decrement-total", "Sum of the decrements", decrementTotal),
            ("badge-updates", "Badge updates (entries)", badgeUpdates),
            ("unmatched", "Pushes no rule matched", unmatched),
        ]
        for (key, label, value) in metrics {
            h.raw("<tr><th scope=\"row\">\(label)</th><td data-metric=\"\(key)\">\(value)</td></tr>")
        }
        h.raw("</tbody></table>\n<div class=\"tallies\">")
        tally(byOp, caption: "Results by op", key: "op", into: &h)
        tally(byKind, caption: "Pushes by kind", key: "kind", into: &h)
        tally(byRule, caption: "Pushes by rule", key: "rule", into: &h)
        tally(errorsByCode, caption: "Errors by code", key: "code", into: &h)
        tally(syncs, caption: "Syncs by reason", key: "reason", into: &h)
        h.raw("</div></section>\n")
    }

    private func tally(_ table: [String: Tally], caption: String, key: String, into h: inout HTMLText) {
        h.raw("<table class=\"tally\" data-tally=\"\(key)\"><caption>\(caption)</caption>")
        h.raw("<thead><tr><th scope=\"col\">\(key)</th><th scope=\"col\">results</th><th scope=\"col\">first seq</th></tr></thead><tbody>")
        if table.isEmpty { h.raw("<tr><td colspan=\"3\">none</td></tr>") }
        for (name, t) in Self.ordered(table) {
            h.raw("<tr><td>")
            h.text(name)
            h.raw("</td><td>\(t.count)</td><td>\(t.firstSeq)</td></tr>")
        }
        h.raw("</tbody></table>")
    }

    /// Most first; ties in byte order.
    static func ordered(_ table: [String: Tally]) -> [(String, Tally)] {
        table.map { ($0.key, $0.value) }.sorted {
            $0.1.count != $1.1.count ? $0.1.count > $1.1.count : $0.0.utf8.lexicographicallyPrecedes($1.0.utf8)
        }
    }

    private func unmatchedSection(_ h: inout HTMLText) {
        h.raw("<section id=\"unmatched\" aria-labelledby=\"unmatched-h\"><h2 id=\"unmatched-h\">Pushes the rules ignore</h2>")
        h.raw(
            "<p>Push results with <code>\"rule\":null</code>, by payload shape (the keys present). A payload no rule routes adds nothing, so a count another path set is never cleared by it: the usual cause of a number that stays. <code>sed -n 'Np'</code> prints the example line.</p>"
        )
        h.raw(
            "<table><caption>Unmatched pushes by payload shape</caption><thead><tr><th scope=\"col\">payload keys</th><th scope=\"col\">pushes</th><th scope=\"col\">example seq</th></tr></thead><tbody>"
        )
        if shapes.isEmpty { h.raw("<tr><td colspan=\"3\">none: every push matched a rule</td></tr>") }
        for (shape, t) in Self.ordered(shapes) {
            h.raw("<tr><td><code>")
            h.text(shape)
            h.raw("</code></td><td>\(t.count)</td><td>\(t.firstSeq)</td></tr>")
        }
        if otherShapes > 0 { h.raw("<tr><td>other shapes</td><td>\(otherShapes)</td><td></td></tr>") }
        h.raw("</tbody></table></section>\n")
    }

    private func marksSection(_ h: inout HTMLText) {
        h.raw("<section id=\"marks\" aria-labelledby=\"marks-h\"><h2 id=\"marks-h\">Marks standing longest</h2>")
        h.raw(
            "<p>At the end of the replay, over all accounts: age (from the event that set the mark to the last event time of the input), the rule and the seq that set it.</p>"
        )
        marksTable(oldestMarks, withAccount: true, caption: "The oldest marks over all accounts", into: &h)
        h.raw("</section>\n")
    }

    private func marksTable(_ marks: [MarkAge], withAccount: Bool, caption: String, into h: inout HTMLText) {
        h.raw("<table class=\"marks\"><caption>\(caption)</caption><thead><tr>")
        if withAccount { h.raw("<th scope=\"col\">account</th>") }
        h.raw(
            "<th scope=\"col\">path</th><th scope=\"col\">mark</th><th scope=\"col\">age</th><th scope=\"col\">set by</th><th scope=\"col\">seq</th></tr></thead><tbody>"
        )
        if marks.isEmpty { h.raw("<tr><td colspan=\"\(withAccount ? 6 : 5)\">no marks</td></tr>") }
        for m in marks {
            h.raw("<tr>")
            if withAccount {
                h.raw("<td>")
                h.text(m.account.isEmpty ? "\"\"" : m.account)
                h.raw("</td>")
            }
            h.raw("<td><code>")
            h.text(m.path)
            h.raw("</code></td><td>")
            h.text(m.mark)
            h.raw("</td><td>\(Self.duration(m.age))</td><td>")
            h.text(m.origin)
            h.raw("</td><td>\(m.seq)</td></tr>")
        }
        h.raw("</tbody></table>")
    }

    private func section(_ a: AccountDetail, into h: inout HTMLText) {
        let anchor = Self.anchor(a.id)
        h.raw("<section class=\"account\" id=\"\(anchor)\" tabindex=\"-1\" data-account=\"")
        h.text(a.id)
        h.raw("\" aria-labelledby=\"\(anchor)-h\"><h3 id=\"\(anchor)-h\">Account <code>")
        h.text(a.id.isEmpty ? "\"\"" : a.id)
        h.raw("</code></h3><p>Shown because: ")
        h.text(a.reasons.map(\.title).joined(separator: "; "))
        h.raw(".<br>Icon at the end: <strong data-final=\"icon\">\(a.icon)</strong>; above zero for \(Self.duration(a.aboveZero)); ")
        h.raw(
            "<span data-final=\"results\">\(a.results)</span> results, <span data-final=\"duplicates\">\(a.duplicates)</span> duplicates, <span data-final=\"errors\">\(a.errors)</span> errors"
        )
        if a.omitted > 0 { h.raw(" (the table and chart hold the last \(a.rows.count); \(a.omitted) earlier ones left out)") }
        h.raw(". Text for a terminal: <code>")
        h.text(command(for: a.id, text: true))
        h.raw("</code></p>")
        devicesTable(a, into: &h)
        chart(a, anchor: anchor, into: &h)
        h.raw("<details\(a.rows.count <= 100 ? " open" : "")><summary>Results (\(a.rows.count))</summary><table class=\"rows\">")
        h.raw("<caption>Results of account <code>")
        h.text(a.id.isEmpty ? "\"\"" : a.id)
        h.raw(
            "</code>, in input order (time: the account's event time after the line; an error line's own <code>at</code>)</caption><thead><tr>"
        )
        for c in ["seq", "time", "op", "id", "device", "path", "rule", "change", "decrement", "badge updates", "icon"] {
            h.raw("<th scope=\"col\">\(c)</th>")
        }
        h.raw("</tr></thead><tbody>")
        for r in a.rows {
            h.raw(
                r.error != nil
                    ? "<tr class=\"error\">" : r.duplicate ? "<tr class=\"duplicate\">" : r.unmatched ? "<tr class=\"unmatched\">" : "<tr>")
            h.raw("<td>\(r.seq)</td><td>\(a.timed ? Self.timeText(r.time) : "")</td><td>\(r.op)</td><td>")
            if let id = r.id {
                h.raw(r.duplicate ? "<mark>duplicate</mark> " : "")
                h.raw("<code>")
                h.text(id)
                h.raw("</code>")
            }
            h.raw("</td><td>")
            h.text(r.device)
            h.raw("</td><td><code>")
            h.text(r.path)
            h.raw("</code></td><td>")
            h.text(r.rule)
            h.raw("</td><td>")
            h.text(r.change)
            h.raw("</td><td>\(r.decrement.map { "−\($0)" } ?? "")</td><td>")
            h.text(r.updates.map { "\($0.device)→\($0.badge)" }.joined(separator: " "))
            h.raw("</td><td>\(r.icon.map(String.init) ?? "")</td></tr>")
        }
        h.raw("</tbody></table></details>")
        h.raw("<h4>Tree at the end</h4>")
        marksTable(a.marks, withAccount: false, caption: "Marks that make the total at the end, with who set them", into: &h)
        // The account's own settings (a user's mutes, `contribute` events), over the rules'.
        h.raw("<h4>Settings at the end</h4>")
        if a.settings.isEmpty {
            h.raw("<p class=\"settings\">None: every path contributes as the rules say.</p>")
        } else {
            h.raw("<ul class=\"settings\">")
            for s in a.settings {
                h.raw("<li data-setting=\"contribute\"><code>")
                h.text(s.path)
                h.raw(
                    "</code> contributes <code>\(s.mode.rawValue)</code>\(s.mode == Contribution.none ? " (muted: adds nothing to the icon)" : "")</li>"
                )
            }
            h.raw("</ul>")
        }
        h.raw("</section>\n")
    }

    /// Each device at the end, then each that left during the day (what it showed, when).
    private func devicesTable(_ a: AccountDetail, into h: inout HTMLText) {
        h.raw(
            "<table class=\"devices\"><caption>Each device's number (what the server knows it shows): at the end, and when it left</caption><thead><tr><th scope=\"col\">device</th><th scope=\"col\">number</th><th scope=\"col\">status</th></tr></thead><tbody>"
        )
        let present = Set(a.devices.map(\.device))
        let gone = a.departed.filter { !present.contains($0.device) }
        if a.devices.isEmpty && gone.isEmpty { h.raw("<tr><td colspan=\"3\">no device</td></tr>") }
        for d in a.devices {
            h.raw("<tr><th scope=\"row\">")
            h.text(d.device.isEmpty ? "\"\"" : d.device)
            h.raw("</th><td data-device=\"")
            h.text(d.device)
            h.raw("\" data-final=\"delivered\">\(d.badge)</td><td>")
            h.raw(d.badge == a.icon ? "shows the total" : "<mark>not the total (\(a.icon))</mark>")
            if let back = a.departed.last(where: { $0.device == d.device }) {
                h.raw("; left at seq \(back.seq) (\(back.op)) and came back")
            }
            h.raw("</td></tr>")
        }
        for d in gone {
            h.raw("<tr class=\"left\"><th scope=\"row\">")
            h.text(d.device.isEmpty ? "\"\"" : d.device)
            h.raw("</th><td data-left-device=\"")
            h.text(d.device)
            h.raw("\" data-seq=\"\(d.seq)\">\(d.badge)</td><td>left by <code>\(d.op)</code> at seq \(d.seq)")
            if a.timed { h.raw(", \(Self.timeText(d.time))") }
            h.raw(d.badge != 0 ? ", <mark>showing \(d.badge)</mark>" : ", showing 0")
            h.raw(d.op == "logout" && d.badge != 0 ? " (its logout result sent it 0)" : "")
            h.raw("</td></tr>")
        }
        h.raw("</tbody></table>")
    }

    /// Okabe–Ito's colour-blind-safe palette (Okabe and Ito, "Color Universal Design", 2008),
    /// black kept for the icon: no red/green pair carries meaning, and each device's line also
    /// has its own dash pattern.
    static let palette = ["#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442"]
    static let dashes = ["6 3", "2 2", "8 3 2 3"]

    private func chart(_ a: AccountDetail, anchor n: String, into h: inout HTMLText) {
        let width = 960.0, plotTop = 10.0, plotBottom = 150.0, left = 44.0, right = 950.0
        let xs = a.rows.map { a.timed ? $0.time : Double($0.seq) }
        let xMin = xs.min() ?? 0, xMax = xs.max() ?? 1
        let span = xMax > xMin ? xMax - xMin : 1
        var yMax = 1
        for r in a.rows {
            yMax = max(yMax, r.icon ?? 0)
            for d in r.delivered { yMax = max(yMax, d.badge) }
        }
        func x(_ v: Double) -> String { Self.fixed(left + (v - xMin) / span * (right - left - 10)) }
        func y(_ v: Int) -> String { Self.fixed(plotBottom - Double(v) / Double(yMax) * (plotBottom - plotTop)) }
        let decrements = a.rows.filter { $0.decrement != nil }.count
        let updates = a.rows.reduce(0) { $0 + $1.updates.count }
        let unmatched = a.rows.filter(\.unmatched).count
        let errors = a.rows.filter { $0.error != nil }.count
        let peak = a.rows.compactMap(\.icon).max() ?? 0
        h.raw("<figure><svg viewBox=\"0 0 \(Int(width)) 214\" role=\"img\" aria-labelledby=\"\(n)-ct \(n)-cd\">")
        h.raw("<title id=\"\(n)-ct\">Icon of account ")
        h.text(a.id)
        h.raw(" over \(a.timed ? "event time" : "seq")</title><desc id=\"\(n)-cd\">")
        h.text(
            "Step chart: the icon peaks at \(peak) and ends at \(a.icon); dashed lines are each device's delivered number; markers below: \(decrements) decrements, \(updates) badge updates, \(unmatched) unmatched pushes, \(errors) errors. The results table below holds the same figures."
        )
        h.raw("</desc>")
        // Axes.
        h.raw(
            "<line class=\"axis\" x1=\"\(Self.fixed(left))\" y1=\"\(Self.fixed(plotBottom))\" x2=\"\(Self.fixed(right))\" y2=\"\(Self.fixed(plotBottom))\"/>"
        )
        h.raw(
            "<line class=\"axis\" x1=\"\(Self.fixed(left))\" y1=\"\(Self.fixed(plotTop))\" x2=\"\(Self.fixed(left))\" y2=\"\(Self.fixed(plotBottom))\"/>"
        )
        h.raw("<text x=\"\(Self.fixed(left - 6))\" y=\"\(Self.fixed(plotTop + 8))\" text-anchor=\"end\">\(yMax)</text>")
        h.raw("<text x=\"\(Self.fixed(left - 6))\" y=\"\(Self.fixed(plotBottom))\" text-anchor=\"end\">0</text>")
        let first = a.timed ? Self.timeText(xMin) : "seq \(Int(xMin))"
        let last = a.timed ? Self.timeText(xMax) : "seq \(Int(xMax))"
        h.raw("<text x=\"\(Self.fixed(left))\" y=\"211\">\(first)</text>")
        h.raw("<text x=\"\(Self.fixed(right))\" y=\"211\" text-anchor=\"end\">\(last)</text>")
        // The icon, solid steps.
        var path = ""
        for (i, r) in a.rows.enumerated() {
            guard let icon = r.icon else { continue }
            path += path.isEmpty ? "M\(x(xs[i])),\(y(icon))" : "H\(x(xs[i]))V\(y(icon))"
        }
        if !path.isEmpty { h.raw("<path class=\"icon\" d=\"\(path)H\(Self.fixed(right))\"><title>icon</title></path>") }
        // Each device's delivered number, dashed steps (a device that left ends its line).
        var devices: [String] = []
        for r in a.rows { for d in r.delivered where !devices.contains(d.device) { devices.append(d.device) } }
        devices.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (k, device) in devices.enumerated() {
            var path = ""
            var current: Int? = nil
            for (i, r) in a.rows.enumerated() {
                guard let d = r.delivered.first(where: { $0.device == device }) else { continue }
                if let c = current, c >= 0 { path += "H\(x(xs[i]))" }
                if d.badge < 0 {
                    current = nil
                } else {
                    path += current == nil ? "M\(x(xs[i])),\(y(d.badge))" : "V\(y(d.badge))"
                    current = d.badge
                }
            }
            if current != nil { path += "H\(Self.fixed(right))" }
            guard !path.isEmpty else { continue }
            h.raw(
                "<path class=\"device\" stroke=\"\(Self.palette[k % Self.palette.count])\" stroke-dasharray=\"\(Self.dashes[k % Self.dashes.count])\" d=\"\(path)\"><title>device "
            )
            h.text(device.isEmpty ? "\"\"" : device)
            h.raw("</title></path>")
        }
        // Markers under the axis.
        for (i, r) in a.rows.enumerated() {
            if let by = r.decrement {
                h.raw("<path class=\"m-dec\" d=\"M\(x(xs[i])),162l-4,-6h8z\"><title>seq \(r.seq): decrement by \(by)</title></path>")
            }
            if !r.updates.isEmpty {
                h.raw("<path class=\"m-upd\" d=\"M\(x(xs[i])),166l4,4l-4,4l-4,-4z\"><title>seq \(r.seq): badge updates ")
                h.text(r.updates.map { "\($0.device)→\($0.badge)" }.joined(separator: " "))
                h.raw("</title></path>")
            }
            if r.unmatched {
                h.raw(
                    "<circle class=\"m-unm\" cx=\"\(x(xs[i]))\" cy=\"179\" r=\"3.5\"><title>seq \(r.seq): push no rule matched</title></circle>"
                )
            }
            if r.duplicate {
                h.raw(
                    "<rect class=\"m-dup\" x=\"\(Self.fixed((Double(x(xs[i])) ?? 0) - 3))\" y=\"190\" width=\"6\" height=\"6\"><title>seq \(r.seq): duplicate</title></rect>"
                )
            }
            if let code = r.error {
                h.raw("<path class=\"m-err\" d=\"M\(x(xs[i])),183l6,6m0,-6l-6,6\"><title>seq \(r.seq): error \(code)</title></path>")
            }
        }
        h.raw("</svg><figcaption>Solid: the icon. Dashed: ")
        for (k, device) in devices.enumerated() {
            h.raw("<span style=\"color:\(Self.palette[k % Self.palette.count])\">")
            h.text(device.isEmpty ? "\"\"" : device)
            h.raw("</span> ")
        }
        h.raw(
            "(each device's delivered number). Markers: ▼ decrement, ◆ badge update, ● unmatched push, ✕ error, □ duplicate, each at its own line's time. Colours: Okabe–Ito.</figcaption></figure>"
        )
    }

    static func fixed(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    /// `3d 4h`, `12m 5s`, `40s`.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 86400 { return "\(s / 86400)d \(s % 86400 / 3600)h" }
        if s >= 3600 { return "\(s / 3600)h \(s % 3600 / 60)m" }
        if s >= 60 { return "\(s / 60)m \(s % 60)s" }
        return "\(s)s"
    }

    /// UNIX seconds as `2026-11-25 23:10:00Z` (UTC).
    static func timeText(_ t: Double) -> String {
        let s = Int(t.rounded(.down))
        var days = s / 86400
        var rem = s % 86400
        if rem < 0 {
            rem += 86400
            days -= 1
        }
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d)) \(two(rem / 3600)):\(two(rem % 3600 / 60)):\(two(rem % 60))Z"
    }

    static let style = """
        body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:0 12px;color:#222}\
        table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}\
        td{font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:600}\
        .tallies{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}.metrics td{text-align:right}\
        nav ul{columns:3;padding-left:18px}section.account{border-top:2px solid #444;margin-top:18px}\
        section.account:focus{outline:3px solid #0072B2}a:focus,input:focus,summary:focus{outline:3px solid #0072B2}\
        svg{width:100%;height:auto;font-size:11px}.axis{stroke:#444}\
        .icon{fill:none;stroke:#000;stroke-width:2.5}.device{fill:none;stroke-width:1.5}\
        .m-dec{fill:#0072B2}.m-upd{fill:#E69F00}.m-unm{fill:#CC79A7}.m-err{stroke:#D55E00;stroke-width:2}\
        .m-dup{fill:none;stroke:#56B4E9;stroke-width:1.5}mark{background:#F0E442;color:#000}\
        tr.error td{background:#FBE3D6}tr.unmatched td{background:#FCF5CF}tr.duplicate td{background:#DDEEFA}\
        tr.left td,tr.left th{color:#555}#facts{font-size:15px}[hidden]{display:none}
        """

    /// The search box: filters the sections shown (by account id) and searches the index
    /// (account and device ids); `#filter=TEXT` fills it in.
    static let script = """
        (function(){
        var box=document.getElementById('filter'),count=document.getElementById('filter-count');
        var nav=document.getElementById('find'),table=document.getElementById('search-results');
        var body=table.tBodies[0],more=document.getElementById('search-more');
        var sections=document.querySelectorAll('section[data-account]'),entries=document.querySelectorAll('li[data-entry]');
        var detailed={};sections.forEach(function(s){detailed[s.getAttribute('data-account')]=s.id;});
        function unesc(s){return s.indexOf('\\\\')<0?s:s.replace(/\\\\(u[0-9a-fA-F]{4}|\\\\)/g,function(m,c){return c==='\\\\'?c:String.fromCharCode(parseInt(c.slice(1),16));});}
        var raw=null,lower=null;
        function escq(q){var o='';for(var i=0;i<q.length;i++){var c=q.charCodeAt(i),ch=q.charAt(i);
        if(ch==='\\\\')o+='\\\\\\\\';else if('<= &@'.indexOf(ch)>=0||c<32||c===127)o+='\\\\u'+('000'+c.toString(16)).slice(-4);else o+=ch;}return o;}
        function keyOf(l){var f=l.split('\\t');return (unesc(f[0])+'\\n'+(f[6]||'').split(' ').map(function(d){return unesc(d.split('=')[0]);}).join('\\n')+'\\n'+(f[7]||'').split(' ').map(function(d){return unesc(d.split('=')[0]);}).join('\\n')).toLowerCase();}
        function words(s){return /^[A-Za-z0-9@%+=:,.\\/_-]+$/.test(s)?s:"'"+s.replace(/'/g,"'\\\\''")+"'";}
        var flagNames={m:'device not at the total',l:'device left showing a number',d:'duplicates',e:'errors'};
        function cell(tr,text){var td=document.createElement('td');td.textContent=text;tr.appendChild(td);return td;}
        function row(l){var f=l.split('\\t'),id=unesc(f[0]),tr=document.createElement('tr');tr.setAttribute('data-result',id);
        var td=document.createElement('td'),where=detailed[id];
        if(where){var a=document.createElement('a');a.href='#'+where;a.textContent=id===''?'""':id;td.appendChild(a);}else td.textContent=id===''?'""':id;
        tr.appendChild(td);cell(tr,f[1]).setAttribute('data-icon','');
        var devs=(f[6]?f[6].split(' ').map(function(d){var p=d.split('=');return unesc(p[0])+' '+p[1];}):[]).join(', ');
        var gone=(f[7]?f[7].split(' ').map(function(d){var p=d.split('='),q=p[1].split('@');return unesc(p[0])+' left showing '+q[0]+' (seq '+q[1]+')';}):[]).join(', ');
        cell(tr,devs+(gone?(devs?'; ':'')+gone:'')).setAttribute('data-devices',f[6]||'');
        cell(tr,f[2].split('').map(function(c){return flagNames[c];}).join(', ')+' ('+f[3]+' results, '+f[4]+' duplicates, '+f[5]+' errors)').setAttribute('data-flags',f[2]);
        var d=document.createElement('td');
        if(where){d.textContent='shown below';}else{d.appendChild(document.createTextNode('not in detail on this page; run: '));var c=document.createElement('code');c.setAttribute('data-command','');
        c.textContent=nav.getAttribute('data-command-before')+' '+words(id)+' '+nav.getAttribute('data-command-after');d.appendChild(c);}
        tr.appendChild(d);return tr;}
        function lineAt(p){var s=raw.lastIndexOf('\\n',p)+1,t=raw.indexOf('\\n',p);return [s,t<0?raw.length:t];}
        function search(q){body.textContent='';more.textContent='';if(!q){table.hidden=true;return 0;}
        if(raw===null){raw='\\n'+document.getElementById('account-index').textContent;lower=raw.toLowerCase();if(lower.length!==raw.length)lower=raw;}
        var e=escq(q),seen={},exact=[],hits=[],from=0,p,r;
        function take(list,s,t){if(seen[s])return;var l=raw.slice(s,t),k=keyOf(l);if(k.indexOf(q)<0)return;
        if(list===exact&&('\\n'+k+'\\n').indexOf('\\n'+q+'\\n')<0)return;seen[s]=1;list.push(l);}
        if((p=lower.indexOf('\\n'+e+'\\t'))>=0){r=lineAt(p+1);take(exact,r[0],r[1]);}
        ['\\t','\\x20'].forEach(function(b){from=0;while(exact.length<50&&(p=lower.indexOf(b+e+'=',from))>=0){r=lineAt(p+1);take(exact,r[0],r[1]);from=r[1];}});
        from=0;while(hits.length<200&&(p=lower.indexOf(e,from))>=0){r=lineAt(p);take(hits,r[0],r[1]);from=r[1];}
        var all=exact.concat(hits),n=all.length;all.slice(0,50).forEach(function(l){body.appendChild(row(l));});
        table.hidden=false;more.textContent=n===0?'Not in the index: no account or device of this input has this id.':(n>50?'First 50 of '+(n>=200?'200 or more':n)+' found; type more of the id.':'');return n;}
        function apply(){var q=box.value.toLowerCase(),n=0;
        sections.forEach(function(s){var hit=s.getAttribute('data-account').toLowerCase().indexOf(q)>=0;s.hidden=!hit;if(hit)n++;});
        entries.forEach(function(e){e.hidden=e.getAttribute('data-entry').toLowerCase().indexOf(q)<0;});
        var found=search(q);count.textContent=n+' shown'+(q?'; '+found+' in the index':'');return n;}
        box.addEventListener('input',apply);
        var m=/^#(?:filter|search)=(.*)$/.exec(location.hash);
        if(m){box.value=decodeURIComponent(m[1]);if(apply()>0){var first=document.querySelector('section[data-account]:not([hidden])');if(first)first.scrollIntoView();}}
        document.documentElement.setAttribute('data-ready-ms',String(Math.round(performance.now())));
        })();
        """
}

/// HTML text with escaping.
struct HTMLText {
    var out = ""

    /// Markup as it is.
    mutating func raw(_ s: String) { out += s }

    /// Text and attribute values, escaped.
    mutating func text(_ s: String) {
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
    }
}
