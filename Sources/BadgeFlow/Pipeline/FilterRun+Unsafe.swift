// The results' way out: a batch's bytes are lent to `output` straight from the filter's
// buffer (no copy), valid only during the call, and written with write(2).

extension FilterRun {
    /// Writes all the bytes it is lent (valid only during the call); returns 0, or the
    /// `errno` of the failure.
    package typealias Output = (UnsafeRawBufferPointer) -> Int32

    /// Lends `w`'s bytes to `output`; its result.
    static func send(_ w: JSONWriter, to output: Output) -> Int32 {
        w.withUnsafeBytes { output($0) }
    }

    /// An `output` that writes all the bytes to `fd` with write(2), again after `EINTR`.
    package static func write(to fd: Int32) -> (UnsafeRawBufferPointer) -> Int32 {
        { bytes in
            guard var p = bytes.baseAddress else { return 0 }
            var left = bytes.count
            while left > 0 {
                let n = retryingOnEINTR { System.write(fd, p, left) }
                if n < 0 { return System.errorNumber }
                p += n
                left -= n
            }
            return 0
        }
    }
}
