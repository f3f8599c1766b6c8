/// The search index of every account, and the groups of accounts support asks about.
extension ReplayReport {
    /// Why an account is shown in detail.
    public enum Reason: String, Sendable, CaseIterable {
        /// Named with `--account`.
        case named
        /// Among the ``ReplayReport/shownByTime`` whose icon stayed above zero the longest.
        case longest
        /// A device ended with a number other than the account's total.
        case mismatch
        /// A device left (logout, unregister) while showing a number.
        case left
        /// Some of its events were duplicates of an earlier `id`.
        case duplicates
        /// Some lines naming it were rejected.
        case errors

        /// The flag letter in the page's index (`m`, `l`, `d`, `e`); nil for the others.
        public var flag: Character? {
            switch self {
            case .mismatch: "m"
            case .left: "l"
            case .duplicates: "d"
            case .errors: "e"
            case .named, .longest: nil
            }
        }

        /// What the group means, for the page and the text.
        public var title: String {
            switch self {
            case .named: "Named with --account"
            case .longest: "Icon above zero the longest"
            case .mismatch: "A device ends with a number other than the account's total"
            case .left: "A device left (logout, unregister) while showing a number"
            case .duplicates: "Events that were duplicates of an earlier id"
            case .errors: "Rejected lines (errors)"
            }
        }
    }

    /// One group of accounts support asks about: how many the input has, and those shown.
    public struct Group: Sendable, Equatable {
        /// The group.
        public var reason: Reason
        /// Accounts in it, over the whole input.
        public var count: Int
        /// The accounts shown in detail (at most ``ReplayReport/groupCap``), most striking first.
        public var shown: [String]
    }

    /// One account of the input, as the page's index holds it.
    public struct IndexEntry: Sendable, Equatable {
        /// The account id.
        public var id: String
        /// Its icon at the end (the tree's total under icon policy `tree`).
        public var icon: Int
        /// Each device at the end with its number, in byte order of device id.
        public var devices: [BadgeUpdate]
        /// Devices that left while showing a number, with that number (in the order they left).
        public var left: [Departure]
        /// Its results (applied lines).
        public var results: Int
        /// Its duplicates.
        public var duplicates: Int
        /// Error lines naming it.
        public var errors: Int

        /// The devices whose number is not the account's total.
        public var mismatched: [BadgeUpdate] { devices.filter { $0.badge != icon } }

        /// Its flags: the groups it belongs to.
        public var flags: [Reason] {
            var f: [Reason] = []
            if devices.contains(where: { $0.badge != icon }) { f.append(.mismatch) }
            if !left.isEmpty { f.append(.left) }
            if duplicates > 0 { f.append(.duplicates) }
            if errors > 0 { f.append(.errors) }
            return f
        }
    }

    /// Account `id` as the stream holds it at the end of pass 1.
    func endEntry(_ id: String, _ account: Account) -> IndexEntry {
        let devices = account.devices.map {
            BadgeUpdate(device: $0.key, badge: rules.icon == .tree ? $0.value.delivered : $0.value.payloadIcon)
        }.sorted { $0.device.utf8.lexicographicallyPrecedes($1.device.utf8) }
        return IndexEntry(id: id, icon: account.tree.total, devices: devices, left: [], results: 0, duplicates: 0, errors: 0)
    }

    /// Makes ``index`` from the accounts' ends and pass 1's summaries.
    mutating func buildIndex(_ ends: [String: IndexEntry]) {
        var entries: [IndexEntry] = []
        entries.reserveCapacity(summaries.count)
        for (id, s) in summaries {
            var e = ends[id] ?? IndexEntry(id: id, icon: 0, devices: [], left: [], results: 0, duplicates: 0, errors: 0)
            if rules.icon != .tree { e.icon = s.icon }
            e.results = s.results + s.errors
            e.duplicates = s.duplicates
            e.errors = s.errors
            e.left = s.left ?? []
            entries.append(e)
        }
        entries.sort { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        index = entries
    }

    /// Each group's count and the accounts shown for it, most striking first (the largest
    /// difference, number or count; ties in byte order of id).
    func selectGroups() -> [Group] {
        var groups: [Group] = []
        for reason in [Reason.mismatch, .left, .duplicates, .errors] {
            var members: [(id: String, weight: Int)] = []
            for e in index {
                let weight: Int
                switch reason {
                case .mismatch: weight = e.devices.map { abs($0.badge - e.icon) }.max() ?? 0
                case .left: weight = e.left.map(\.badge).max() ?? 0
                case .duplicates: weight = e.duplicates
                case .errors: weight = e.errors
                case .named, .longest: weight = 0
                }
                if weight > 0 { members.append((e.id, weight)) }
            }
            members.sort { $0.weight != $1.weight ? $0.weight > $1.weight : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            groups.append(Group(reason: reason, count: members.count, shown: members.prefix(groupCap).map(\.id)))
        }
        return groups
    }

    /// The index entry of account `id` (binary search; nil when the input has none).
    public func entry(_ id: String) -> IndexEntry? {
        var lo = 0
        var hi = index.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if index[mid].id.utf8.lexicographicallyPrecedes(id.utf8) { lo = mid + 1 } else { hi = mid }
        }
        return lo < index.count && index[lo].id == id ? index[lo] : nil
    }
}
