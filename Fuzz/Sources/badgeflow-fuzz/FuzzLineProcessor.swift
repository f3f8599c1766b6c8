// libFuzzer entry point: the whole line processor (parse + validate + route + tree update +
// result line) on arbitrary bytes, with the filter's one-answer-per-line contract checked,
// and the same lines answered alike by expanded and compact accounts.
import BadgeFlow

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineProcessor(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    var session = FilterSession(rules: .builtIn)
    var nonBlank = 0
    for line in input.split(separator: 0x0A, omittingEmptySubsequences: false) {
        let bytes = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: line))
        if bytes.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) { nonBlank += 1 }
        session.feed(bytes)
    }
    let answers = session.output.bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    // One result line per non-blank input line, whatever the input holds.
    if answers != nonBlank { fatalError("\(nonBlank) non-blank lines got \(answers) answers") }
    // Every tree stays consistent: the root's count is the sum of what the snapshot shows.
    for (_, account) in session.stream.accounts {
        let shown = account.tree.snapshot()
        if account.tree.total < 0 || (account.tree.total > 0 && shown.first?.count != account.tree.total) {
            fatalError("tree total \(account.tree.total) disagrees with its snapshot")
        }
    }
    // Accounts held compactly answer as expanded ones: the same input again, on the stream
    // as it is and on a copy with every account compacted, gives the same bytes.
    var compacted = session
    compacted.stream.compact(keeping: 0)
    _ = session.takeOutput()
    _ = compacted.takeOutput()
    for line in input.split(separator: 0x0A, omittingEmptySubsequences: false) {
        let bytes = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: line))
        session.feed(bytes)
        compacted.feed(bytes)
    }
    if session.output.bytes != compacted.output.bytes { fatalError("compact accounts answered differently") }
    return 0
}

// SwiftPM links an executable's entry point as `<module>_main`; hand control to libFuzzer's
// driver from there (libFuzzer's own `main` is bypassed by that renaming).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

@_cdecl("badgeflow_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzLineProcessor(data, size) }
}
