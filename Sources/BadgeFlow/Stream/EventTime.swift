/// Parses event times: RFC 3339 text or UNIX seconds (the `at` field of an event line).
enum EventTime {
    /// Seconds since the UNIX epoch for `2026-11-22T10:00:00Z`-style text, or nil.
    ///
    /// Accepts `T` or a space between date and time, fractional seconds, and `Z` or a
    /// `±HH:MM` offset.
    static func parseRFC3339(_ text: String) -> Double? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard b.count >= 20, let year = digits(0, 4), b[4] == 0x2D, let month = digits(5, 2), b[7] == 0x2D,
            let day = digits(8, 2), b[10] == 0x54 || b[10] == 0x74 || b[10] == 0x20,
            let hour = digits(11, 2), b[13] == 0x3A, let minute = digits(14, 2), b[16] == 0x3A,
            let second = digits(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A, let om = digits(i + 4, 2),
                oh < 24, om < 60
            else { return nil }
            offset = (oh * 3600 + om * 60) * (b[i] == 0x2D ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }
}
