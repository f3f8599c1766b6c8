import BadgeFlow

/// Formats batch results as text, JSON or JUnit XML.
struct BatchReport {
    let results: [BatchRunner.Result]
    let colored: Bool

    var counts: (pass: Int, fail: Int, new: Int, updated: Int, error: Int) {
        var c = (pass: 0, fail: 0, new: 0, updated: 0, error: 0)
        for r in results {
            switch r.status {
            case .pass: c.pass += 1
            case .fail: c.fail += 1
            case .new: c.new += 1
            case .updated: c.updated += 1
            case .error: c.error += 1
            }
        }
        return c
    }

    private func paint(_ s: String, _ code: String) -> String { colored ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    var summary: String {
        let c = counts
        var parts = ["\(c.pass) passed", "\(c.fail) failed"]
        if c.new > 0 { parts.append("\(c.new) new") }
        if c.updated > 0 { parts.append("\(c.updated) updated") }
        if c.error > 0 { parts.append("\(c.error) error\(c.error == 1 ? "" : "s")") }
        return "\(results.count) file\(results.count == 1 ? "" : "s"): " + parts.joined(separator: ", ")
    }

    /// One line per file, a unified diff under each failure, and a summary line.
    func text() -> String {
        var out = ""
        for r in results {
            switch r.status {
            case .pass: out += paint("PASS", "32") + "  \(r.file)\n"
            case .new: out += paint("NEW", "33") + "   \(r.file)  (no \(r.expectedFile); --update writes it)\n"
            case .updated: out += paint("UPDATED", "36") + " \(r.file)  → \(r.expectedFile)\n"
            case .error: out += paint("ERROR", "31;1") + " \(r.file): \(r.message)\n"
            case .fail:
                out += paint("FAIL", "31;1") + "  \(r.file)\n"
                out += diff(r).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { "      " + $0 + "\n" }.joined()
            }
        }
        out += summary + "\n"
        return out
    }

    /// The unified diff of the first differing line.
    func diff(_ r: BatchRunner.Result) -> String {
        var d = "--- \(r.expectedFile)\n+++ \(r.file) (actual output)\n@@ -\(r.line) +\(r.line) @@\n"
        if let e = r.expectedLine { d += paint("-" + e, "31") + "\n" }
        if let a = r.actualLine { d += paint("+" + a, "32") + "\n" }
        return d
    }

    /// `{"files":[…],"summary":{…}}` for scripts.
    func json() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("files")
        w.beginArray()
        for r in results {
            w.beginObject()
            w.key("file"); w.string(r.file)
            w.key("status"); w.string(r.status.rawValue)
            w.key("expected"); w.string(r.expectedFile)
            if r.status == .fail {
                w.key("line"); w.int(r.line)
                w.key("expectedLine"); if let e = r.expectedLine { w.string(e) } else { w.null() }
                w.key("actualLine"); if let a = r.actualLine { w.string(a) } else { w.null() }
            }
            if !r.message.isEmpty { w.key("message"); w.string(r.message) }
            w.endObject()
        }
        w.endArray()
        let c = counts
        w.key("summary")
        w.beginObject()
        w.key("files"); w.int(results.count)
        w.key("passed"); w.int(c.pass)
        w.key("failed"); w.int(c.fail)
        w.key("new"); w.int(c.new)
        w.key("updated"); w.int(c.updated)
        w.key("errors"); w.int(c.error)
        w.endObject()
        w.endObject()
        w.newline()
        return w.bytes
    }

    private static func xml(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(ch)
            default:
                if ch.value < 0x20 { out += "\u{FFFD}" } else { out.unicodeScalars.append(ch) }
            }
        }
        return out
    }

    /// JUnit XML: one testcase per file; failures carry the diff, errors the message.
    func junit() -> String {
        let c = counts
        let plain = BatchReport(results: results, colored: false)
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"badgeflow batch\" tests=\"\(results.count)\" failures=\"\(c.fail)\" errors=\"\(c.error)\">\n"
        out +=
            "  <testsuite name=\"badgeflow batch\" tests=\"\(results.count)\" failures=\"\(c.fail)\" errors=\"\(c.error)\" skipped=\"\(c.new)\">\n"
        for r in results {
            let slash = r.file.lastIndex(of: "/")
            let folder = slash.map { String(r.file[..<$0]) } ?? "."
            let name = slash.map { String(r.file[r.file.index(after: $0)...]) } ?? r.file
            out += "    <testcase classname=\"\(Self.xml(folder))\" name=\"\(Self.xml(name))\" file=\"\(Self.xml(r.file))\""
            switch r.status {
            case .pass, .updated:
                out += "/>\n"
            case .new:
                out += ">\n      <skipped message=\"no expectation: \(Self.xml(r.expectedFile))\"/>\n    </testcase>\n"
            case .fail:
                out += ">\n      <failure message=\"output differs from \(Self.xml(r.expectedFile)) at line \(r.line)\" type=\"mismatch\">"
                out += Self.xml(plain.diff(r)) + "</failure>\n    </testcase>\n"
            case .error:
                out += ">\n      <error message=\"\(Self.xml(r.message))\" type=\"error\"/>\n    </testcase>\n"
            }
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }
}
