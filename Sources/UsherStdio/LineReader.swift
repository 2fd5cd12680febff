import Foundation

/// Reads a file handle line by line without blocking the cooperative thread pool: each read
/// runs on the reader's own serial queue and is bridged with a continuation.
final class LineReader: @unchecked Sendable {
    // @unchecked: `buffer`, `start` and `eof` are only touched by `next()`, which callers await
    // one at a time (StdioIntake reads sequentially); the handle is read only on `queue`.
    private let handle: FileHandle
    private let queue = DispatchQueue(label: "usher-stdio-reader")
    private var buffer: [UInt8] = []
    private var start = 0
    private var eof = false
    /// Longer lines are skipped (reported by the caller), never kept in memory whole.
    let maxLineBytes: Int

    init(_ handle: FileHandle, maxLineBytes: Int) {
        self.handle = handle
        self.maxLineBytes = maxLineBytes
    }

    enum Line {
        case line(ArraySlice<UInt8>)
        /// A line over `maxLineBytes`, skipped to its end.
        case tooLong
    }

    /// The next line (without its `\n` or `\r\n`), or nil at the end of input.
    func next() async throws -> Line? {
        var skipping = false
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                var end = nl
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                let line = buffer[start..<end]
                start = nl + 1
                if skipping { return .tooLong }
                return .line(line)
            }
            if buffer.count - start > maxLineBytes {
                skipping = true
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            if eof {
                if start < buffer.count {
                    let line = buffer[start...]
                    start = buffer.count
                    return skipping ? .tooLong : .line(line)
                }
                return skipping ? .tooLong : nil
            }
            if start > 0 && start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 1 << 20 {
                buffer.removeFirst(start)
                start = 0
            }
            let fd = handle.fileDescriptor
            let chunk: Data = try await withCheckedThrowingContinuation { c in
                queue.async { c.resume(with: Result { try Self.read(fd, upTo: 1 << 16) }) }
            }
            if chunk.isEmpty { eof = true } else { buffer.append(contentsOf: chunk) }
        }
    }

    /// One `read(2)`: what is there now (waiting until something is), empty at the end.
    /// `FileHandle.read(upToCount:)` waits on a pipe until it has `count` bytes or the pipe
    /// ends, which held a live backend's lines back until 64 KiB had come or it closed.
    static func read(_ fd: Int32, upTo count: Int) throws -> Data {
        var data = Data(count: count)
        while true {
            let n = data.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, count) }
            if n >= 0 {
                data.count = n
                return data
            }
            if errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }
}
