/// Reads NDJSON lines from a file descriptor in large chunks, without copying lines.
///
/// Lines end at `\n`; a trailing `\r` is dropped, and so is a UTF-8 byte-order mark at the
/// start of the input. A last line without a newline still counts. A line longer than
/// `maxLineBytes` is never held whole: it is skipped to its end and reported as overlong,
/// so memory stays bounded whatever the input. An input that starts with the magic bytes of
/// gzip, zstd, bzip2 or xz is refused before its first line (`CompressedInput`).
///
/// The reader is the input's pointer boundary: it owns one raw buffer, reads into it with
/// read(2), and hands out each line as a borrowed slice of it (``Line/text(_:)``), valid
/// only while the callback runs; nothing downstream keeps such a pointer.
public final class LineReader {
    /// One line, or the length of a line that was too long to keep.
    public enum Line {
        /// A line's bytes without its newline (and without a trailing `\r`), valid only
        /// until the callback returns.
        case text(UnsafeRawBufferPointer)
        /// A line longer than ``LineReader/maxLineBytes``, skipped; the value is its length in bytes.
        case overlong(Int)

        /// An empty line (no bytes): what a line skipped in place of its text counts as.
        public static var empty: Line { .text(UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    /// The longest line kept, in bytes.
    public let maxLineBytes: Int
    /// The first bytes (at most 32, without a leading byte-order mark) of the last overlong
    /// line, set before `forEachLine` hands out its `.overlong`: enough to read the `N<TAB>`
    /// prefix of a numbered line (`LineNumber`) that is not kept.
    public private(set) var overlongHead: [UInt8] = []
    /// A descriptor that ends the wait for input when it becomes readable (-1: none), as a
    /// signal's `EINTR` ends a blocked `read`: ``forEachLine(_:idle:_:)`` then returns. The CLI
    /// gives the read end of the pipe its signal handler writes to (`SignalWake`), so a
    /// signal that lands just before the reader waits is not lost. Used only when `idle` is
    /// given (a live stream); without it the reader reads, and a signal ends a blocked read
    /// with `EINTR` alone.
    public var wakeFD: Int32 = -1
    /// Sees every byte read, in order (nil: none): a state's record of stdin
    /// (``StreamedInputDigest``). ``restart(fd:)`` leaves it; the caller sets it per input.
    package var digest: StreamedInputDigest?
    private var fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var first = true
    /// The start of the input was checked for a compression format's magic bytes.
    private var checkedStart = false

    /// Creates a reader of `fd` (not closed by the reader).
    ///
    /// - Parameters:
    ///   - fd: an open file descriptor to read from.
    ///   - maxLineBytes: the longest line kept; longer ones come as ``Line/overlong(_:)``.
    ///   - chunkBytes: how much one `read(2)` asks for.
    public init(fd: Int32, maxLineBytes: Int = 1 << 20, chunkBytes: Int = 1 << 18) {
        self.fd = fd
        self.maxLineBytes = maxLineBytes
        buffer = .allocate(byteCount: max(chunkBytes, 4096) + maxLineBytes + 1, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Reads `fd` from now on, as a new reader would (a byte-order mark is dropped again),
    /// keeping this reader's buffer: reading many small files costs no buffer each.
    public func restart(fd: Int32) {
        self.fd = fd
        start = 0
        end = 0
        first = true
        checkedStart = false
    }

    /// Calls `body` for each line until the input ends or `body` returns false.
    ///
    /// With `idle`, whenever no more input is ready (a pipe or terminal that stays open),
    /// `idle` is called before the reader waits: the moment to write the results held back.
    /// It returns how many milliseconds to wait for input before it is called again (a
    /// timer while idle), or a negative number to wait without a limit. A regular file is
    /// always ready, so `idle` is not called for it.
    ///
    /// - Parameters:
    ///   - name: the input's name, for errors.
    ///   - idle: called when a read would block; returns the next wait in ms (< 0: no limit).
    ///   - body: called with each line in order; return false to stop reading.
    /// - Throws: `FileIO.Failure` when reading fails.
    public func forEachLine(
        _ name: String = "<stdin>", idle: (() -> Int32)? = nil, _ body: (Line) -> Bool
    ) throws(FileIO.Failure) {
        var skipping = 0  // > 0 while discarding an overlong line: bytes seen so far
        while true {
            // Hand out every complete line in the buffer.
            while start < end {
                let base = buffer.baseAddress.unsafelyUnwrapped
                guard let nl = System.memchr(base + start, 0x0A, end - start) else { break }
                let lineEnd = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(nl))
                if skipping > 0 {
                    let total = skipping + (lineEnd - start)
                    skipping = 0
                    start = lineEnd + 1
                    if !body(.overlong(total)) { return }
                    continue
                }
                let ok = emit(from: start, to: lineEnd, body)
                start = lineEnd + 1
                if !ok { return }
            }
            // Keep the partial line, or drop it while skipping an overlong one.
            if skipping > 0 {
                skipping += end - start
                start = 0; end = 0
            } else if end - start > maxLineBytes {
                keepHead(from: start, to: end)
                skipping = end - start
                start = 0; end = 0
            } else if start > 0 {
                let base = buffer.baseAddress.unsafelyUnwrapped
                System.memmove(base, base + start, end - start)
                end -= start
                start = 0
            }
            if let idle, !waitUntilReady(idle) { return }
            let n = System.read(fd, buffer.baseAddress.unsafelyUnwrapped + end, buffer.count - 1 - end)
            if n < 0 {
                if System.interrupted { return }  // a signal: let the caller decide
                throw FileIO.Failure(path: name, message: "cannot read: \(System.errorMessage)")
            }
            if n == 0 {
                if skipping > 0 { _ = body(.overlong(skipping)); return }
                if end > start { _ = emit(from: start, to: end, body) }
                start = 0; end = 0
                return
            }
            digest?.add(UnsafeRawBufferPointer(start: buffer.baseAddress.unsafelyUnwrapped + end, count: n))
            end += n
            if !checkedStart {
                // A pipe's first bytes (a file's are checked before it is read): a gzip,
                // zstd, bzip2 or xz stream would give an error line for every line of it.
                checkedStart = true
                let head = UnsafeRawBufferPointer(start: buffer.baseAddress, count: min(end, 6))
                if let format = CompressedInput.format(ofPrefix: head) {
                    start = 0; end = 0
                    throw FileIO.Failure(path: name, message: CompressedInput.reason(format))
                }
            }
        }
    }

    /// Calls `idle` while no input is ready, waiting as long as it says in between; false
    /// when a signal interrupted the wait (as a read returns on `EINTR`) or ``wakeFD`` became
    /// readable. True only once input is ready (or at its end, or an error the read reports),
    /// so the read that follows never blocks: a signal caught between this wait and that read
    /// would otherwise leave the reader blocked until the next line.
    private func waitUntilReady(_ idle: () -> Int32) -> Bool {
        var timeout: Int32 = 0
        while true {
            switch SignalWake.wait(for: fd, wake: wakeFD, timeout: timeout) {
            case .ready: return true
            case .woken, .interrupted: return false
            case .timedOut:
                // Nothing ready at the first look, or after the wait `idle` asked for; a
                // negative answer waits for input (or the wake) without a limit.
                timeout = idle()
            }
        }
    }

    private func keepHead(from: Int, to: Int) {
        var lo = from
        let base = UnsafeRawPointer(buffer.baseAddress.unsafelyUnwrapped)
        if first {
            first = false
            if to - lo >= 3, base.load(fromByteOffset: lo, as: UInt8.self) == 0xEF,
                base.load(fromByteOffset: lo + 1, as: UInt8.self) == 0xBB,
                base.load(fromByteOffset: lo + 2, as: UInt8.self) == 0xBF
            {
                lo += 3
            }
        }
        overlongHead = Array(UnsafeRawBufferPointer(start: base + lo, count: min(32, to - lo)))
    }

    private func emit(from: Int, to: Int, _ body: (Line) -> Bool) -> Bool {
        // A long line may arrive whole inside one chunk; the limit is the same.
        if to - from > maxLineBytes {
            keepHead(from: from, to: to)
            return body(.overlong(to - from))
        }
        var lo = from, hi = to
        let base = UnsafeRawPointer(buffer.baseAddress.unsafelyUnwrapped)
        if first {
            first = false
            if hi - lo >= 3, base.load(fromByteOffset: lo, as: UInt8.self) == 0xEF,
                base.load(fromByteOffset: lo + 1, as: UInt8.self) == 0xBB,
                base.load(fromByteOffset: lo + 2, as: UInt8.self) == 0xBF
            {
                lo += 3
            }
        }
        if hi > lo, base.load(fromByteOffset: hi - 1, as: UInt8.self) == 0x0D { hi -= 1 }
        return body(.text(UnsafeRawBufferPointer(start: base + lo, count: hi - lo)))
    }
}
