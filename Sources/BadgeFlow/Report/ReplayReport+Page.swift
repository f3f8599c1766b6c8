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
        h.raw(" Icon policy <code>\(rules.icon == .tree ? "tree" : "payload")</code>.</p></header>\n")
        nav(&h)
        h.raw("<main>\n")
        summary(&h)
        unmatchedSection(&h)
        marksSection(&h)
        h.raw("<section id=\"accounts\" aria-labelledby=\"accounts-h\"><h2 id=\"accounts-h\">Accounts shown</h2>")
        h.raw(
            "<p>Each account named with <code>--account</code>, and the \(shownByTime) whose icon stayed above zero the longest (event time; ties: more results).</p>\n"
        )
        for (n, account) in shown.enumerated() { section(account, number: n, into: &h) }
        if shown.isEmpty { h.raw("<p>No account to show: the input has no applied event.</p>") }
        h.raw("</section>\n</main>\n<script>\(Self.script)</script>\n</body></html>\n")
        return h.out
    }

    private func nav(_ h: inout HTMLText) {
        h.raw("<nav aria-labelledby=\"nav-h\"><h2 id=\"nav-h\">Find an account</h2>")
        h.raw("<label for=\"filter\">Account id contains</label> ")
        h.raw("<input id=\"filter\" type=\"search\" autocomplete=\"off\" aria-controls=\"account-list accounts\">")
        h.raw(" <span id=\"filter-count\" role=\"status\" aria-live=\"polite\">\(shown.count) shown</span>")
        h.raw("<ul id=\"account-list\">")
        for (n, a) in shown.enumerated() {
            h.raw("<li data-entry=\"")
            h.text(a.id)
            h.raw("\"><a href=\"#account-\(n)\">")
            h.text(a.id.isEmpty ? "(default device)" : a.id)
            h.raw("</a> icon \(a.icon)\(a.named ? ", named" : "")</li>")
        }
        h.raw("</ul></nav>\n")
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
            "<table><thead><tr><th scope=\"col\">payload keys</th><th scope=\"col\">pushes</th><th scope=\"col\">example seq</th></tr></thead><tbody>"
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
        marksTable(oldestMarks, withAccount: true, into: &h)
        h.raw("</section>\n")
    }

    private func marksTable(_ marks: [MarkAge], withAccount: Bool, into h: inout HTMLText) {
        h.raw("<table><thead><tr>")
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

    private func section(_ a: AccountDetail, number n: Int, into h: inout HTMLText) {
        h.raw("<section class=\"account\" id=\"account-\(n)\" tabindex=\"-1\" data-account=\"")
        h.text(a.id)
        h.raw("\" aria-labelledby=\"account-\(n)-h\"><h3 id=\"account-\(n)-h\">Account <code>")
        h.text(a.id.isEmpty ? "\"\"" : a.id)
        h.raw("</code></h3><p>")
        h.raw(a.named ? "Named with <code>--account</code>. " : "")
        h.raw("Icon at the end: <strong data-final=\"icon\">\(a.icon)</strong>; above zero for \(Self.duration(a.aboveZero)); ")
        h.raw("<span data-final=\"results\">\(a.results)</span> results")
        if a.omitted > 0 { h.raw(" (the table and chart hold the last \(a.rows.count); \(a.omitted) earlier ones left out)") }
        h.raw(".</p>")
        h.raw(
            "<table class=\"devices\"><caption>Each device's number at the end (what the server knows it shows)</caption><thead><tr><th scope=\"col\">device</th><th scope=\"col\">number</th></tr></thead><tbody>"
        )
        if a.devices.isEmpty { h.raw("<tr><td colspan=\"2\">no device</td></tr>") }
        for d in a.devices {
            h.raw("<tr><th scope=\"row\">")
            h.text(d.device.isEmpty ? "\"\"" : d.device)
            h.raw("</th><td data-device=\"")
            h.text(d.device)
            h.raw("\" data-final=\"delivered\">\(d.badge)</td></tr>")
        }
        h.raw("</tbody></table>")
        chart(a, number: n, into: &h)
        h.raw("<details\(a.rows.count <= 100 ? " open" : "")><summary>Results (\(a.rows.count))</summary><table class=\"rows\"><thead><tr>")
        for c in ["seq", "op", "device", "path", "rule", "change", "decrement", "badge updates", "icon"] {
            h.raw("<th scope=\"col\">\(c)</th>")
        }
        h.raw("</tr></thead><tbody>")
        for r in a.rows {
            h.raw(r.error != nil ? "<tr class=\"error\">" : r.unmatched ? "<tr class=\"unmatched\">" : "<tr>")
            h.raw("<td>\(r.seq)</td><td>\(r.op)</td><td>")
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
        marksTable(a.marks, withAccount: false, into: &h)
        if !a.settings.isEmpty {
            // The account's own settings (a user's mutes), over the rules' contribute.
            h.raw("<h4>Settings at the end</h4><ul class=\"settings\">")
            for s in a.settings {
                h.raw("<li data-setting=\"contribute\"><code>")
                h.text(s.path)
                h.raw("</code> contributes <code>\(s.mode.rawValue)</code></li>")
            }
            h.raw("</ul>")
        }
        h.raw("</section>\n")
    }

    static let palette = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]

    private func chart(_ a: AccountDetail, number n: Int, into h: inout HTMLText) {
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
        h.raw("<figure><svg viewBox=\"0 0 \(Int(width)) 200\" role=\"img\" aria-labelledby=\"chart-\(n)-t chart-\(n)-d\">")
        h.raw("<title id=\"chart-\(n)-t\">Icon of account ")
        h.text(a.id)
        h.raw(" over \(a.timed ? "event time" : "seq")</title><desc id=\"chart-\(n)-d\">")
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
        h.raw("<text x=\"\(Self.fixed(left))\" y=\"196\">\(first)</text>")
        h.raw("<text x=\"\(Self.fixed(right))\" y=\"196\" text-anchor=\"end\">\(last)</text>")
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
            h.raw("<path class=\"device\" stroke=\"\(Self.palette[k % Self.palette.count])\" d=\"\(path)\"><title>device ")
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
        h.raw("(each device's delivered number). Markers: ▼ decrement, ◆ badge update, ● unmatched push, ✕ error.</figcaption></figure>")
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
        td{font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:600;white-space:nowrap}\
        .tallies{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}.metrics td{text-align:right}\
        nav ul{columns:3;padding-left:18px}section.account{border-top:2px solid #444;margin-top:18px}\
        section.account:focus{outline:3px solid #1f77b4}a:focus,input:focus,summary:focus{outline:3px solid #1f77b4}\
        svg{width:100%;height:auto;font-size:11px}.axis{stroke:#444}\
        .icon{fill:none;stroke:#d62728;stroke-width:2}.device{fill:none;stroke-width:1.5;stroke-dasharray:5 3}\
        .m-dec{fill:#2ca02c}.m-upd{fill:#1f77b4}.m-unm{fill:#ff7f0e}.m-err{stroke:#d62728;stroke-width:2}\
        tr.error td{background:#fdd}tr.unmatched td{background:#ffe8cc}[hidden]{display:none}
        """

    static let script = """
        (function(){
        var box=document.getElementById('filter'),count=document.getElementById('filter-count');
        var sections=document.querySelectorAll('section[data-account]'),entries=document.querySelectorAll('li[data-entry]');
        function apply(){var q=box.value.toLowerCase(),n=0;
        sections.forEach(function(s){var hit=s.getAttribute('data-account').toLowerCase().indexOf(q)>=0;s.hidden=!hit;if(hit)n++;});
        entries.forEach(function(e){e.hidden=e.getAttribute('data-entry').toLowerCase().indexOf(q)<0;});
        count.textContent=n+' shown';}
        box.addEventListener('input',apply);
        var m=/^#filter=(.*)$/.exec(location.hash);if(m){box.value=decodeURIComponent(m[1]);apply();}
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
