// Console's writes from raw memory: write(2) of a byte buffer, repeated until all of it is
// written. Relies on the buffer staying valid for the call (a borrowed array or string).

import BadgeFlow

extension Console {
    /// Writes all of `bytes` to `fd`; returns false on a write error (e.g. a closed pipe).
    @discardableResult
    static func write(_ bytes: [UInt8], to fd: Int32 = 1) -> Bool {
        bytes.withUnsafeBytes { write($0, to: fd) }
    }

    /// Writes the first `n` bytes of `bytes` to `fd`; returns false on a write error.
    static func write(_ bytes: [UInt8], prefix n: Int, to fd: Int32) -> Bool {
        bytes.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[0..<n]), to: fd) }
    }

    /// Writes the UTF-8 of `text` to `fd` (made contiguous in place when it is not);
    /// returns false on a write error.
    static func write(utf8 text: inout String, to fd: Int32) -> Bool {
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
    }

    /// Writes all of `buf` to `fd`; returns false on a write error (e.g. a closed pipe).
    @discardableResult
    static func write(_ buf: UnsafeRawBufferPointer, to fd: Int32 = 1) -> Bool {
        var done = 0
        while done < buf.count {
            guard let base = buf.baseAddress else { return true }
            let n = retryingOnEINTR { System.write(fd, base + done, buf.count - done) }
            if n < 0 { return false }
            done += n
        }
        return true
    }
}
