import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file handle line by line without blocking the cooperative thread pool: each read
/// runs on the reader's own serial queue and is bridged with a continuation. Cancelling the
/// task that waits in `next()` ends the wait at once (`CancellationError`), input or not: a
/// stop request must not wait for a backend's next line.
final class LineReader: @unchecked Sendable {
    // @unchecked: `buffer`, `start` and `eof` are only touched by `next()`, which callers await
    // one at a time (StdioIntake reads sequentially); the handle is read only on `queue`; the
    // wake pipe's ends are written once, in init.
    private let handle: FileHandle
    private let queue = DispatchQueue(label: "usher-stdio-reader")
    private var buffer: [UInt8] = []
    private var start = 0
    private var eof = false
    /// A pipe the read waits on beside the input: a byte written to it (`interrupt`) ends the
    /// wait, and every later one.
    private let wake: (read: Int32, write: Int32)
    /// Longer lines are skipped (reported by the caller), never kept in memory whole.
    let maxLineBytes: Int

    init(_ handle: FileHandle, maxLineBytes: Int) {
        self.handle = handle
        self.maxLineBytes = maxLineBytes
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0, "LineReader: no pipe (errno \(errno))")
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }   // not inherited by a child process
        wake = (ends[0], ends[1])
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    /// Ends the wait of `next()` now and of every later call (a cancellation).
    private func interrupt() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    enum Line {
        case line(ArraySlice<UInt8>)
        /// A line over `maxLineBytes`, skipped to its end.
        case tooLong
    }

    /// The next line (without its `\n` or `\r\n`), or nil at the end of input. Throws
    /// `CancellationError` once the task is cancelled, even with lines read ahead.
    func next() async throws -> Line? {
        try Task.checkCancellation()
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
            let fd = handle.fileDescriptor, wake = wake.read
            let chunk: Data = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { c in
                    queue.async { c.resume(with: Result { try Self.read(fd, upTo: 1 << 16, unless: wake) }) }
                }
            } onCancel: {
                interrupt()
            }
            if chunk.isEmpty { eof = true } else { buffer.append(contentsOf: chunk) }
        }
    }

    /// One `read(2)`: what is there now (waiting until something is), empty at the end; throws
    /// `CancellationError` as soon as `wake` is readable instead. `FileHandle.read(upToCount:)`
    /// waits on a pipe until it has `count` bytes or the pipe ends, which held a live
    /// backend's lines back until 64 KiB had come or it closed.
    static func read(_ fd: Int32, upTo count: Int, unless wake: Int32) throws -> Data {
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            if fds[0].revents != 0 { throw CancellationError() }
            if fds[1].revents != 0 { break }
        }
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
