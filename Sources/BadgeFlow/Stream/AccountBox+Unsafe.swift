// Accounts reached through the address of their box: AccountBox owns one account in memory
// it allocates and frees, and ChangedAccount and AccountTable's slots read it in place
// (unsafeAddress) rather than through a coroutine. Relies on the box outliving every such
// read (the reader holds the box), and on an account being changed in place only in a box
// nothing else holds (the slot copies it into a new box first otherwise).

import BadgeTree

/// An account in memory, held by reference so that a commit can take it without copying
/// it, and changed in place only while nothing else holds it (copy on write, as Swift's
/// arrays do): ``AccountTable/Slot/account`` copies the account into a new box before
/// changing one that a commit under way still holds.
///
/// Copying an account retains each of its parts (a dozen references, some, like the rules'
/// display table, shared by every account and so contended between threads); on the fleet
/// bench copying the changed accounts for each checkpoint, and releasing the copies on the
/// commit's thread, took about a tenth of the run's CPU. Taking a box is one retain.
///
/// Unchecked Sendable: after a box is handed to a commit, its account is only read; the
/// stream writes in place only to a box that no commit under way was given
/// (``AccountTable/Slot/boxInCommit``, cleared when the commit has ended, after the wait for
/// it) and that nothing else holds (`isKnownUniquelyReferenced`).
package final class AccountBox: @unchecked Sendable {
    /// Where the account is: memory of the box's own, so that readers reach it through an
    /// address (``value``), never through a `_read` coroutine: yielding a class's stored
    /// property from one, a debug build let the caller read the account from the
    /// coroutine's frame after the frame was freed (valgrind, `make leaks`).
    package let address: UnsafeMutablePointer<Account>

    /// The account.
    package var value: Account {
        unsafeAddress { UnsafePointer(address) }
        unsafeMutableAddress { address }
    }

    /// A box holding `value`.
    package init(_ value: consuming Account) {
        address = .allocate(capacity: 1)
        address.initialize(to: value)
    }

    deinit {
        address.deinitialize(count: 1)
        address.deallocate()
    }
}

extension ChangedAccount {
    /// The account as it was when taken (borrowed from ``box``, not copied).
    package var account: Account {
        unsafeAddress { UnsafePointer(box.address) }
    }
}

extension AccountTable.Slot {
    /// The account, read in place; changing it first copies it into a box of the slot's
    /// own when a commit under way holds the box, or anything else does.
    var account: Account {
        unsafeAddress { UnsafePointer(box.address) }
        _modify {
            if boxInCommit || !isKnownUniquelyReferenced(&box) {
                box = AccountBox(box.value)
                boxInCommit = false
            }
            yield &box.address.pointee
        }
    }
}
