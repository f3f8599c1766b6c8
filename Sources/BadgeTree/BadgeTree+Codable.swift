// Codable forms of the core values, so an app can keep its badges in a file (an App Group
// container shared with its Notification Service Extension) or send them elsewhere.
// Every form is plain JSON: a mark is `"dot"` or a count, a display mode is `"number"`,
// `"dot"` or `{"custom": NAME}`, as in a rules file. Decoding checks what it reads and throws
// `DecodingError.dataCorrupted` for a value that could not have been written: corrupt data is
// an error, never an empty tree.

extension Mark: Codable {
    /// Decodes `"dot"` or a count from 1 to ``BadgeTree/maxCount``.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) {
            guard n >= 1, n <= BadgeTree.maxCount else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "a count mark is 1 to \(BadgeTree.maxCount), got \(n)")
            }
            self = .count(n)
        } else if let s = try? c.decode(String.self), s == "dot" {
            self = .dot
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "a mark is \"dot\" or a count of 1 or more")
        }
    }

    /// Encodes `"dot"` or the count.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .dot: try c.encode("dot")
        case .count(let n): try c.encode(n)
        }
    }
}

extension DisplayMode: Codable {
    private enum CustomKey: String, CodingKey { case custom }

    /// Decodes `"number"`, `"dot"` or `{"custom": NAME}`.
    public init(from decoder: any Decoder) throws {
        if let c = try? decoder.singleValueContainer(), let s = try? c.decode(String.self) {
            switch s {
            case "number": self = .number
            case "dot": self = .dot
            default:
                throw DecodingError.dataCorruptedError(
                    in: c, debugDescription: "display mode must be \"number\", \"dot\" or {\"custom\": NAME}, got \"\(s)\"")
            }
            return
        }
        let c = try decoder.container(keyedBy: CustomKey.self)
        let name = try c.decode(String.self, forKey: .custom)
        guard !name.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .custom, in: c, debugDescription: "a custom badge needs a non-empty name")
        }
        self = .custom(name)
    }

    /// Encodes `"number"`, `"dot"` or `{"custom": NAME}`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .number:
            var c = encoder.singleValueContainer()
            try c.encode("number")
        case .dot:
            var c = encoder.singleValueContainer()
            try c.encode("dot")
        case .custom(let name):
            var c = encoder.container(keyedBy: CustomKey.self)
            try c.encode(name, forKey: .custom)
        }
    }
}

extension BadgeDisplay: Codable {
    private enum Key: String, CodingKey { case number, max, custom }

    /// Decodes `"dot"`, `"hidden"`, `{"number": n, "max": m}` or `{"custom": NAME}`.
    public init(from decoder: any Decoder) throws {
        if let c = try? decoder.singleValueContainer(), let s = try? c.decode(String.self) {
            switch s {
            case "dot": self = .dot
            case "hidden": self = .hidden
            default: throw DecodingError.dataCorruptedError(in: c, debugDescription: "unknown display \"\(s)\"")
            }
            return
        }
        let c = try decoder.container(keyedBy: Key.self)
        if let name = try c.decodeIfPresent(String.self, forKey: .custom) {
            self = .custom(name)
        } else {
            self = .number(try c.decode(Int.self, forKey: .number), max: try c.decode(Int.self, forKey: .max))
        }
    }

    /// Encodes `"dot"`, `"hidden"`, `{"number": n, "max": m}` or `{"custom": NAME}`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .dot, .hidden:
            var c = encoder.singleValueContainer()
            try c.encode(self == .dot ? "dot" : "hidden")
        case .number(let n, let max):
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(n, forKey: .number)
            try c.encode(max, forKey: .max)
        case .custom(let name):
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(name, forKey: .custom)
        }
    }
}

extension BadgeState: Codable {
    private enum Key: String, CodingKey { case path, count, show, display }

    /// Decodes `{path, count, show, display}`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        self.init(
            path: try c.decode(String.self, forKey: .path), count: try c.decode(Int.self, forKey: .count),
            show: try c.decode(Bool.self, forKey: .show), display: try c.decode(BadgeDisplay.self, forKey: .display))
    }

    /// Encodes `{path, count, show, display}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(path, forKey: .path)
        try c.encode(count, forKey: .count)
        try c.encode(show, forKey: .show)
        try c.encode(display, forKey: .display)
    }
}

extension BadgeTree.Configuration: Codable {
    private enum Key: String, CodingKey { case root, maxDisplay, display, contribute }

    /// Decodes `{root, maxDisplay, display, contribute}`, checked as ``validate()`` checks them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        var configuration = Self()
        configuration.root = try c.decode(String.self, forKey: .root)
        configuration.maxDisplay = try c.decode(Int.self, forKey: .maxDisplay)
        configuration.display = try c.decodeIfPresent([String: DisplayMode].self, forKey: .display) ?? [:]
        configuration.contribute = try c.decodeIfPresent([String: Contribution].self, forKey: .contribute) ?? [:]
        do {
            try configuration.validate()
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: c.codingPath, debugDescription: error.description))
        }
        self = configuration
    }

    /// Encodes `{root, maxDisplay, display, contribute}` (`display` and `contribute` only when not empty).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(root, forKey: .root)
        try c.encode(maxDisplay, forKey: .maxDisplay)
        if !display.isEmpty { try c.encode(display, forKey: .display) }
        if !contribute.isEmpty { try c.encode(contribute, forKey: .contribute) }
    }
}

extension BadgeTree: Codable {
    private enum Key: String, CodingKey { case configuration, marks, dismissed }
    private enum MarkKey: String, CodingKey { case path, mark, seq, rule, at, expires, once }
    private enum DismissedKey: String, CodingKey { case path, tokens }

    /// Decodes a tree from its configuration and marks (each with its optional `seq`, `rule`,
    /// `at`, `expires` and `once`) and the optional `dismissed` once tokens; a path that is not
    /// valid in that configuration is `DecodingError.dataCorrupted`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let configuration = try c.decode(Configuration.self, forKey: .configuration)
        var list = try c.nestedUnkeyedContainer(forKey: .marks)
        var records: [MarkRecord] = []
        while !list.isAtEnd {
            let m = try list.nestedContainer(keyedBy: MarkKey.self)
            var record = MarkRecord(path: try m.decode(String.self, forKey: .path), mark: try m.decode(Mark.self, forKey: .mark))
            if let rule = try m.decodeIfPresent(String.self, forKey: .rule) {
                record.source = MarkSource(
                    seq: try m.decode(Int.self, forKey: .seq), origin: rule,
                    at: try m.decode(Double.self, forKey: .at))
            }
            record.expires = try m.decodeIfPresent(Double.self, forKey: .expires)
            record.once = try m.decodeIfPresent(String.self, forKey: .once)
            records.append(record)
        }
        var dismissed: [(String, [String])] = []
        if c.contains(.dismissed) {
            var d = try c.nestedUnkeyedContainer(forKey: .dismissed)
            while !d.isAtEnd {
                let entry = try d.nestedContainer(keyedBy: DismissedKey.self)
                dismissed.append((try entry.decode(String.self, forKey: .path), try entry.decode([String].self, forKey: .tokens)))
            }
        }
        self.init(configuration: configuration)
        do {
            for r in records { try restore(r) }
            for (path, tokens) in dismissed { try restoreDismissed(path, tokens: tokens) }
        } catch {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [Key.marks],
                    debugDescription: "a mark's path is not valid: \(error.description)"))
        }
    }

    /// Encodes the configuration and every own mark, in byte order of the paths, with what
    /// set it, its expiry and once token when it has them, and `dismissed` once tokens when
    /// there are any.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(configuration, forKey: .configuration)
        var list = c.nestedUnkeyedContainer(forKey: .marks)
        for r in records {
            var m = list.nestedContainer(keyedBy: MarkKey.self)
            try m.encode(r.path, forKey: .path)
            try m.encode(r.mark, forKey: .mark)
            if let s = r.source {
                try m.encode(s.seq, forKey: .seq)
                try m.encode(s.origin, forKey: .rule)
                try m.encode(s.at, forKey: .at)
            }
            try m.encodeIfPresent(r.expires, forKey: .expires)
            try m.encodeIfPresent(r.once, forKey: .once)
        }
        let tokens = dismissedTokens
        if !tokens.isEmpty {
            var d = c.nestedUnkeyedContainer(forKey: .dismissed)
            for (path, list) in tokens {
                var entry = d.nestedContainer(keyedBy: DismissedKey.self)
                try entry.encode(path, forKey: .path)
                try entry.encode(list, forKey: .tokens)
            }
        }
    }
}
