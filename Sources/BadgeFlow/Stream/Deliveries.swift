/// The numbers a fleet-wide `reconcile` delivered to the devices of accounts it read only
/// from the state's store (``AccountSource``): for each account its id, and each device
/// with its new delivered number. Kept as these few bytes, not as accounts (a million
/// accounts owed an update held as accounts took 2.2 GB), until a checkpoint writes them
/// into the stored rows in the transaction that records the line's `seq`.
///
/// Accounts are appended in byte order of id (the order the store walks them in), so an id
/// is found by a binary search.
package struct Deliveries: Sendable {
    /// The accounts, in byte order of id.
    package private(set) var ids: [String] = []
    /// Where each account's devices begin in ``devices`` and ``numbers``; one more entry
    /// than ``ids`` (the end).
    private var starts: [Int] = [0]
    /// The devices owed a number, account after account.
    private var devices: [String] = []
    /// The number each device of ``devices`` was sent.
    private var numbers: [Int] = []

    /// None.
    package init() {}

    /// The number of accounts.
    package var count: Int { ids.count }

    /// Whether no account is owed anything.
    package var isEmpty: Bool { ids.isEmpty }

    /// Adds account `id` (after every id added so far in byte order) with the numbers
    /// `updates` sent to its devices.
    package mutating func append(_ id: String, _ updates: [BadgeUpdate]) {
        ids.append(id)
        for u in updates {
            devices.append(u.device)
            numbers.append(u.badge)
        }
        starts.append(devices.count)
    }

    /// The position of account `id`, if it is owed something.
    package func index(of id: String) -> Int? {
        var low = 0, high = ids.count
        while low < high {
            let mid = (low + high) / 2
            if ids[mid].utf8.lexicographicallyPrecedes(id.utf8) {
                low = mid + 1
            } else {
                high = mid
            }
        }
        return low < ids.count && ids[low] == id ? low : nil
    }

    /// The numbers sent to the devices of the account at position `i`, as its result lists
    /// them (the devices in byte order).
    package func updates(_ i: Int) -> [BadgeUpdate] {
        (starts[i]..<starts[i + 1]).map { BadgeUpdate(device: devices[$0], badge: numbers[$0]) }
    }

    /// An upper bound of the bytes the accounts take in a `reconcile` result line (ids and
    /// devices without escapes; a line that needs more grows its buffer).
    package var lineBytes: Int {
        var n = 0
        for id in ids { n += id.utf8.count + 64 }
        for d in devices { n += d.utf8.count + 48 }
        return n
    }

    /// Gives the devices of `account` (the account at position `i`) the numbers they were
    /// sent; a device it no longer has is passed over.
    package func apply(_ i: Int, to account: inout Account) {
        for k in starts[i]..<starts[i + 1] {
            account.devices[devices[k]]?.delivered = numbers[k]
        }
    }

    /// The numbers owed, a commit's share: the accounts to write, and for each whether it is
    /// left out (it came into memory first, and its whole row is committed instead).
    package struct Owed: Sendable {
        /// The accounts and their numbers.
        package let deliveries: Deliveries
        /// Per account of ``deliveries``: left out of the commit.
        package let skipped: [Bool]
    }
}
