import BadgeFlow

/// Formats batch results as text, JSON or JUnit XML.
struct BatchReport {
    let results: [BatchRunner.Result]
    let colored: Bool
    var strict = false

    struct Counts {
        var pass = 0, fail = 0, new = 0, updated = 0, error = 0, orphan = 0
    }

    var counts: Counts {
        var c = Counts()
        for r in results {
            switch r.status {
            case .pass: c.pass += 1
            case .fail: c.fail += 1
            case .new: c.new += 1
            case .updated: c.updated += 1
            case .error: c.error += 1
            case .orphan: c.orphan += 1
            }
        }
        return c
    }

    /// Whether the run fails: a failure or error, and with `--strict` a new file, a leftover
    /// expectation.
    var failed: Bool {
        let c = counts
        return c.fail > 0 || c.error > 0 || (strict && (c.new > 0 || c.orphan > 0))
    }

    private func paint(_ s: String, _ code: String) -> String { colored ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    /// The number of input files (leftover expectations are not inputs).
    var inputs: Int { results.count - counts.orphan }

    var summary: String {
        let c = counts
        var parts = ["\(c.pass) passed", "\(c.fail) failed"]
        if c.new > 0 { parts.append("\(c.new) new") }
        if c.updated > 0 {
            let created = results.filter { $0.status == .updated && $0.created }.count
            parts.append("\(c.updated) updated (\(created) created, \(c.updated - created) changed)")
        }
        if c.error > 0 { parts.append("\(c.error) error\(c.error == 1 ? "" : "s")") }
        if c.orphan > 0 { parts.append("\(c.orphan) expectation\(c.orphan == 1 ? "" : "s") without input") }
        return "\(inputs) file\(inputs == 1 ? "" : "s"): " + parts.joined(separator: ", ")
    }

    /// One line per file, the differing lines under each failure and update, and a summary
    /// line.
    func text() -> String {
        var out = ""
        func indented(_ block: String) -> String {
            block.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { "      " + $0 + "\n" }.joined()
        }
        for r in results {
            switch r.status {
            case .pass: out += paint("PASS", "32") + "  \(r.file)" + (r.note.isEmpty ? "" : "  (\(r.note))") + "\n"
            case .new:
                let why = strict ? "--strict needs one" : "--update writes it"
                out += paint("NEW", strict ? "31;1" : "33") + "   \(r.file)  (no \(r.expectedFile); \(why))\n"
            case .updated:
                if r.created && BatchRunner.producesNothing(r.output) {
                    // Only without --strict (which fails it and writes nothing).
                    out +=
                        paint("UPDATED", "33")
                        + " \(r.file)  → \(r.expectedFile) (created, 0 lines: the output is empty, so it tests nothing; --strict fails it)\n"
                } else if r.created {
                    out +=
                        paint("UPDATED", "36")
                        + " \(r.file)  → \(r.expectedFile) (created, \(r.output.split(separator: 0x0A).count) lines)\n"
                } else {
                    out +=
                        paint("UPDATED", "36")
                        + " \(r.file)  → \(r.expectedFile) (\(r.differing) line\(r.differing == 1 ? "" : "s") changed)\n"
                    out += indented(diff(r))
                }
            case .error:
                out += paint("ERROR", "31;1") + " \(r.file): \(r.message)\n"
                if !r.rulesName.isEmpty { out += "      rules: \(r.rulesName)\n" }
            case .orphan:
                out += paint("ORPHAN", strict ? "31;1" : "33") + " \(r.file): \(r.message)\n"
            case .fail:
                out += paint("FAIL", "31;1") + "  \(r.file)\n"
                out += "      rules: \(r.rulesName)\n"
                if !r.note.isEmpty { out += "      \(r.note)\n" }
                out += indented(diff(r))
            }
        }
        out += summary + "\n"
        return out
    }

    /// Every differing line (up to the limit, with the count), the fields that differ in
    /// JSON lines, and any undeclared error lines.
    func diff(_ r: BatchRunner.Result) -> String {
        var d = ""
        // A failure's message: the output is empty (`--strict`).
        if r.status == .fail && !r.message.isEmpty { d += r.message + "\n" }
        for u in r.undeclared {
            d += "result line \(u.line): error \"\(u.code)\" not declared (add it to \"expected-errors\" in a batch.json sidecar)\n"
        }
        guard !r.diffs.isEmpty else { return d }
        d += "--- \(r.expectedFile)\n+++ \(r.file) (actual output)\n"
        for l in r.diffs {
            d += "@@ -\(l.line) +\(l.line) @@\n"
            if let e = l.expected { d += paint("-" + e, "31") + "\n" }
            if let a = l.actual { d += paint("+" + a, "32") + "\n" }
            if let e = l.expected, let a = l.actual {
                for f in Self.fieldDiffs(e, a) { d += "  " + paint(f, "33") + "\n" }
            }
        }
        if r.differing > r.diffs.count {
            d +=
                "… \(r.differing - r.diffs.count) more differing line\(r.differing - r.diffs.count == 1 ? "" : "s") (\(r.differing) in all)\n"
        } else if r.differing > 1 {
            d += "\(r.differing) differing lines\n"
        }
        return d
    }

    /// Field-level differences of two JSON lines: `/changes/0/display: "99+" → "50+"` (empty
    /// when either is not JSON; at most 12).
    static func fieldDiffs(_ expected: String, _ actual: String) -> [String] {
        guard let e = try? JSONValue.parse(expected), let a = try? JSONValue.parse(actual) else { return [] }
        var out: [String] = []
        compare(e, a, at: "", into: &out)
        if out.count > 12 { out = Array(out.prefix(12)) + ["… \(out.count - 12) more fields differ"] }
        return out
    }

    private static func show(_ v: JSONValue?) -> String {
        guard let v else { return "(absent)" }
        let s = v.serialized()
        return s.count > 80 ? String(s.prefix(77)) + "…" : s
    }

    private static func compare(_ e: JSONValue?, _ a: JSONValue?, at: String, into out: inout [String]) {
        switch (e, a) {
        case (.object(let em)?, .object(let am)?):
            var keys: [String] = []
            for (k, _) in em + am where !keys.contains(k) { keys.append(k) }
            for k in keys {
                compare(e?[k], a?[k], at: at + "/" + JSONPointer.escape(k), into: &out)
            }
        case (.array(let ea)?, .array(let aa)?):
            for i in 0..<max(ea.count, aa.count) {
                compare(i < ea.count ? ea[i] : nil, i < aa.count ? aa[i] : nil, at: at + "/\(i)", into: &out)
            }
        default:
            if e != a { out.append("\(at.isEmpty ? "/" : at): \(show(e)) → \(show(a))") }
        }
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
            if !r.rulesName.isEmpty { w.key("rules"); w.string(r.rulesName) }
            if !r.note.isEmpty { w.key("note"); w.string(r.note) }
            if let first = r.diffs.first, r.status == .fail || r.status == .updated {
                w.key("line"); w.int(first.line)
                w.key("expectedLine"); if let e = first.expected { w.string(e) } else { w.null() }
                w.key("actualLine"); if let a = first.actual { w.string(a) } else { w.null() }
                w.key("differingLines"); w.int(r.differing)
            }
            if !r.undeclared.isEmpty {
                w.key("undeclaredErrors")
                w.beginArray()
                for u in r.undeclared {
                    w.beginObject()
                    w.key("line"); w.int(u.line)
                    w.key("code"); w.string(u.code)
                    w.endObject()
                }
                w.endArray()
            }
            if !r.message.isEmpty { w.key("message"); w.string(r.message) }
            w.endObject()
        }
        w.endArray()
        let c = counts
        w.key("summary")
        w.beginObject()
        w.key("files"); w.int(inputs)
        w.key("passed"); w.int(c.pass)
        w.key("failed"); w.int(c.fail)
        w.key("new"); w.int(c.new)
        w.key("updated"); w.int(c.updated)
        w.key("errors"); w.int(c.error)
        w.key("orphans"); w.int(c.orphan)
        w.key("strict"); w.bool(strict)
        w.key("ok"); w.bool(!failed)
        w.endObject()
        w.endObject()
        w.newline()
        return w.bytes
    }

    static func xml(_ s: String) -> String {
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

    static func seconds(_ t: Double) -> String {
        let ms = Int((t * 1000).rounded())
        let frac = String(ms % 1000)
        return "\(ms / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
    }

    /// JUnit XML for a run that stopped before any input ran (a missing path, no inputs under
    /// `--strict`, an undecodable name): one failing testcase named after `name`, so a CI test
    /// view shows the failure instead of nothing.
    static func junitNotRun(_ name: String, _ message: String) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"badgeflow batch\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0.000\">\n"
        out += "  <testsuite name=\"\(xml(name))\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\"0.000\">\n"
        out += "    <testcase classname=\"\(xml(name))\" name=\"\(xml(name))\" time=\"0.000\">\n"
        out += "      <failure message=\"\(xml(message))\" type=\"not-run\">\(xml(name + ": " + message))</failure>\n"
        out += "    </testcase>\n  </testsuite>\n</testsuites>\n"
        return out
    }

    /// JUnit XML: a suite per folder, one testcase per file with its `time`; failures carry
    /// the diff, errors the message; with `--strict` a new file and a leftover expectation
    /// are failures, otherwise a new file is skipped.
    func junit() -> String {
        let plain = BatchReport(results: results, colored: false, strict: strict)
        var folders: [String] = []
        var byFolder: [String: [BatchRunner.Result]] = [:]
        for r in results {
            let folder = BatchOptions.folder(r.file)
            if byFolder[folder] == nil { folders.append(folder) }
            byFolder[folder, default: []].append(r)
        }
        func failing(_ r: BatchRunner.Result) -> Bool {
            r.status == .fail || (strict && (r.status == .new || r.status == .orphan))
        }
        let total = results.reduce(0.0) { $0 + $1.seconds }
        let allFailures = results.filter(failing).count
        let allErrors = results.filter { $0.status == .error }.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out +=
            "<testsuites name=\"badgeflow batch\" tests=\"\(results.count)\" failures=\"\(allFailures)\" errors=\"\(allErrors)\" time=\"\(Self.seconds(total))\">\n"
        for folder in folders {
            let rs = byFolder[folder] ?? []
            let failures = rs.filter(failing).count
            let errors = rs.filter { $0.status == .error }.count
            let skipped = strict ? 0 : rs.filter { $0.status == .new || $0.status == .orphan }.count
            let time = rs.reduce(0.0) { $0 + $1.seconds }
            out +=
                "  <testsuite name=\"\(Self.xml(folder))\" tests=\"\(rs.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(Self.seconds(time))\">\n"
            for r in rs {
                let name = r.file.split(separator: "/").last.map(String.init) ?? r.file
                out +=
                    "    <testcase classname=\"\(Self.xml(folder))\" name=\"\(Self.xml(name))\" file=\"\(Self.xml(r.file))\" time=\"\(Self.seconds(r.seconds))\""
                // Every case names the rules it ran with (and a note such as a CRLF expectation).
                var properties = ""
                if !r.rulesName.isEmpty || !r.note.isEmpty {
                    properties = ">\n      <properties>\n"
                    if !r.rulesName.isEmpty { properties += "        <property name=\"rules\" value=\"\(Self.xml(r.rulesName))\"/>\n" }
                    if !r.note.isEmpty { properties += "        <property name=\"note\" value=\"\(Self.xml(r.note))\"/>\n" }
                    properties += "      </properties>"
                    out += properties
                }
                let rulesLine = r.rulesName.isEmpty ? "" : "rules: \(r.rulesName)\n"
                let open = properties.isEmpty ? ">\n" : "\n"
                switch r.status {
                case .pass, .updated:
                    out += properties.isEmpty ? "/>\n" : "\n    </testcase>\n"
                    continue
                case .new, .orphan:
                    let message = r.status == .new ? "no expectation: \(r.expectedFile)" : r.message
                    if strict {
                        out += open + "      <failure message=\"\(Self.xml(message))\" type=\"\(r.status.rawValue)\"/>\n    </testcase>\n"
                    } else {
                        out += open + "      <skipped message=\"\(Self.xml(message))\"/>\n    </testcase>\n"
                    }
                case .fail:
                    let what =
                        !r.diffs.isEmpty
                        ? "output differs from \(r.expectedFile) at line \(r.line) (\(r.differing) differing)"
                        : r.undeclared.isEmpty && !r.message.isEmpty ? r.message : "undeclared error lines"
                    out += open + "      <failure message=\"\(Self.xml(what))\" type=\"mismatch\">"
                    out += Self.xml(rulesLine + plain.diff(r)) + "</failure>\n    </testcase>\n"
                case .error:
                    out +=
                        open
                        + "      <error message=\"\(Self.xml(r.message))\" type=\"error\">\(Self.xml(rulesLine))</error>\n    </testcase>\n"
                }
            }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }
}
