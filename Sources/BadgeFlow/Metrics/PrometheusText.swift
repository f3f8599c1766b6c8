/// Prometheus's text exposition format (version 0.0.4), written into a byte buffer.
///
/// Each metric family is written as a group: an optional `# HELP` line, its `# TYPE` line,
/// then its samples, `name{label="value",…} value`, one a line. Every line ends with a line
/// feed, the last one too. Help text escapes backslash and line feed (`\\`, `\n`); label
/// values escape backslash, double quote and line feed (`\\`, `\"`, `\n`). Families come
/// out in the order they are added, so two writes of the same values are byte-identical.
///
/// ```swift
/// var text = PrometheusText()
/// text.family("jobs_done_total", help: "Jobs done.", type: .counter,
///             samples: [.init(labels: [("queue", "a")], value: 3)])
/// print(text.string)
/// // # HELP jobs_done_total Jobs done.
/// // # TYPE jobs_done_total counter
/// // jobs_done_total{queue="a"} 3
/// ```
public struct PrometheusText: Sendable {
    /// A metric family's type, as `# TYPE` names it.
    public enum MetricType: String, Sendable {
        /// Only goes up (restarting from 0 with the process); its name ends in `_total`.
        case counter
        /// Goes up and down: a value as it stands now.
        case gauge
    }

    /// One sample of a family: its labels (in the order given) and its value.
    public struct Sample: Sendable {
        /// Label names and values; names must match `[a-zA-Z_][a-zA-Z0-9_]*`.
        public var labels: [(String, String)]
        /// The value.
        public var value: Value

        /// A sample with `labels` (none by default) and an integer value.
        public init(labels: [(String, String)] = [], value: Int) {
            self.labels = labels
            self.value = .integer(value)
        }

        /// A sample with `labels` (none by default) and a floating-point value.
        public init(labels: [(String, String)] = [], value: Double) {
            self.labels = labels
            self.value = .real(value)
        }
    }

    /// A sample's value: an integer is written as its decimal digits, a `Double` as Swift
    /// prints it (`0.25`, `1e-05`), infinities as `+Inf` and `-Inf`, NaN as `NaN`.
    public enum Value: Sendable, Equatable {
        /// An integer value.
        case integer(Int)
        /// A floating-point value.
        case real(Double)
    }

    /// The text so far, UTF-8.
    public private(set) var bytes: [UInt8] = []

    /// An empty exposition.
    public init() {}

    /// The text so far.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends a family: `# HELP` (when `help` is not empty), `# TYPE`, then each sample.
    ///
    /// A family without samples still gets its `# HELP` and `# TYPE` lines, so a scraper
    /// learns its name and type before it first has a value.
    ///
    /// - Precondition: `name` and every label name are valid Prometheus names.
    public mutating func family(_ name: String, help: String, type: MetricType, samples: [Sample]) {
        precondition(Self.isValidName(name, colons: true), "PrometheusText: invalid metric name \(name)")
        if !help.isEmpty {
            append("# HELP ")
            append(name)
            bytes.append(UInt8(ascii: " "))
            Self.escape(help, quotes: false, into: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        append("# TYPE ")
        append(name)
        bytes.append(UInt8(ascii: " "))
        append(type.rawValue)
        bytes.append(UInt8(ascii: "\n"))
        for sample in samples {
            append(name)
            if !sample.labels.isEmpty {
                bytes.append(UInt8(ascii: "{"))
                for (i, (label, value)) in sample.labels.enumerated() {
                    precondition(Self.isValidName(label, colons: false), "PrometheusText: invalid label name \(label)")
                    if i > 0 { bytes.append(UInt8(ascii: ",")) }
                    append(label)
                    append("=\"")
                    Self.escape(value, quotes: true, into: &bytes)
                    bytes.append(UInt8(ascii: "\""))
                }
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: " "))
            append(Self.text(of: sample.value))
            bytes.append(UInt8(ascii: "\n"))
        }
    }

    private mutating func append(_ s: String) { bytes.append(contentsOf: s.utf8) }

    /// A value as the format writes it.
    static func text(of value: Value) -> String {
        switch value {
        case .integer(let n): return String(n)
        case .real(let x):
            if x.isNaN { return "NaN" }
            if x.isInfinite { return x > 0 ? "+Inf" : "-Inf" }
            return x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
        }
    }

    /// `text` with backslash and line feed escaped, and with `quotes` the double quote too.
    static func escape(_ text: String, quotes: Bool, into out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\"") where quotes: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            default: out.append(byte)
            }
        }
    }

    /// Whether `name` matches `[a-zA-Z_:][a-zA-Z0-9_:]*` (metric names; without `colons`,
    /// label names: `[a-zA-Z_][a-zA-Z0-9_]*`).
    static func isValidName(_ name: String, colons: Bool) -> Bool {
        guard !name.isEmpty else { return false }
        for (i, byte) in name.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): continue
            case UInt8(ascii: ":") where colons: continue
            case UInt8(ascii: "0")...UInt8(ascii: "9") where i > 0: continue
            default: return false
            }
        }
        return true
    }
}
