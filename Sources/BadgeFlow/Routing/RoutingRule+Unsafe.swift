// RoutingRule's borrowed and raw memory: a matcher's string literal in bytes it allocates and
// frees, and the matchers read without retaining them (Unmanaged) when routing. Relies on
// `matchers` keeping every matcher alive as long as the rule, so the unretained references in
// `borrowedMatchers` never outlive their objects.

extension RoutingRule {
    /// One test of a rule on the value at one pointer.
    ///
    /// A class, read through `Unmanaged` when routing: a struct read from an array is copied,
    /// which retains and releases the literal its test holds (twice a line, typically).
    ///
    /// Unchecked Sendable: a string literal's bytes (``fast``) are written in `init` and only
    /// read after it; `deinit` frees them.
    final class Matcher: @unchecked Sendable {
        /// Index of the pointer in the rule set's pointer table.
        let slot: Int
        let test: Test
        /// The test in a form read without retaining anything: a string literal's bytes are
        /// owned by the matcher (immutable, freed with it).
        let fast: FastTest
        private let literalBytes: UnsafeMutableRawBufferPointer?

        init(slot: Int, test: Test) {
            self.slot = slot
            self.test = test
            switch test {
            case .exists(let want):
                literalBytes = nil
                fast = .exists(want)
            case .equals(.int(let n)):
                literalBytes = nil
                fast = .int(n)
            case .equals(.string(let s)):
                let utf8 = Array(s.utf8)
                let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(utf8.count, 1), alignment: 1)
                bytes.copyBytes(from: utf8)
                literalBytes = bytes
                fast = .string(UnsafeRawBufferPointer(rebasing: bytes[0..<utf8.count]))
            default:
                literalBytes = nil
                fast = .general
            }
        }

        deinit { literalBytes?.deallocate() }
    }

    /// The common tests, with nothing to retain when read; `general` reads ``Matcher/test``.
    enum FastTest {
        case exists(Bool)
        case string(UnsafeRawBufferPointer)
        case int(Int64)
        case general
    }

    /// A matcher referenced without ownership: ``matchers`` keeps it alive.
    typealias BorrowedMatcher = Unmanaged<Matcher>

    /// `matchers` as unretained references, for ``matches(_:)``.
    static func borrowed(_ matchers: [Matcher]) -> [BorrowedMatcher] { matchers.map(Unmanaged.passUnretained) }

    /// Whether every matcher holds for `payload`.
    func matches(_ payload: Selected) -> Bool {
        // Each matcher borrowed, never retained: its test is read in place.
        borrowedMatchers.withUnsafeBufferPointer { matchers in
            for i in matchers.indices where !matchers[i]._withUnsafeGuaranteedRef({ Self.holds($0, payload) }) {
                return false
            }
            return true
        }
    }
}
