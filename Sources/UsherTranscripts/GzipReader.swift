internal import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streaming gzip decompression of a file descriptor with zlib: a fixed input buffer and
/// whatever output buffer the caller passes, so memory does not grow with the file.
/// Concatenated gzip members (`cat a.gz b.gz`) are read as one stream, as gzip(1) does.
///
/// Owns the `z_stream` and the input buffer (freed in `deinit`), not the descriptor.
final class GzipReader {
    /// Why decompression stopped.
    struct Failure: Error {
        var message: String
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutablePointer<UInt8>
    private let inputCapacity: Int
    private let fd: Int32
    private var finished = false
    /// Whether `inflateInit2` succeeded, so `deinit` must call `inflateEnd`.
    private var started = false
    /// Whether the current member produced `Z_STREAM_END` and nothing of a next one was read.
    private var betweenMembers = false
    /// Compressed bytes taken from the descriptor so far (for progress).
    private(set) var compressedBytesRead = 0

    /// Starts inflating `fd`; `initial` holds bytes already read from it (the magic number).
    init(fd: Int32, initial: UnsafeRawBufferPointer, inputCapacity: Int = 1 << 16) throws(Failure) {
        self.fd = fd
        self.inputCapacity = max(inputCapacity, initial.count)
        input = .allocate(capacity: self.inputCapacity)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        if let base = initial.baseAddress, initial.count > 0 {
            input.update(from: base.assumingMemoryBound(to: UInt8.self), count: initial.count)
        }
        stream.pointee.next_in = input
        stream.pointee.avail_in = UInt32(initial.count)
        compressedBytesRead = initial.count
        // 15 + 16: a 32 KiB window, gzip header and trailer (not raw deflate, not zlib).
        let status = usher_inflate_init2(stream, 15 + 16)
        guard status == Z_OK else {
            // deinit frees the buffers: every stored property is set by now.
            throw Failure(message: "zlib could not start (inflateInit2 returned \(status))")
        }
        started = true
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    /// Fills `buffer` with up to `capacity` inflated bytes; returns how many, 0 at the end.
    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws(Failure) -> Int {
        guard !finished, capacity > 0 else { return 0 }
        stream.pointee.next_out = buffer
        stream.pointee.avail_out = UInt32(min(capacity, Int(UInt32.max)))
        let wanted = Int(stream.pointee.avail_out)
        while stream.pointee.avail_out > 0 {
            if stream.pointee.avail_in == 0 {
                let n = try refill()
                if n == 0 {
                    if betweenMembers { finished = true; break }
                    throw Failure(message: "the gzip data ends early (truncated file?)")
                }
            }
            if betweenMembers {
                // More bytes after a complete member: another member follows.
                guard inflateReset(stream) == Z_OK else { throw Failure(message: "zlib could not reset") }
                betweenMembers = false
            }
            let status = inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_OK:
                continue
            case Z_STREAM_END:
                betweenMembers = true
            case Z_BUF_ERROR:
                // No progress possible with what is buffered: loop reads more input.
                if stream.pointee.avail_in != 0 { throw Failure(message: "corrupt gzip data (no progress)") }
            case Z_NEED_DICT:
                throw Failure(message: "corrupt gzip data (asks for a preset dictionary)")
            case Z_MEM_ERROR:
                throw Failure(message: "out of memory while decompressing")
            default:
                let detail = stream.pointee.msg.map { String(cString: $0) } ?? "error \(status)"
                throw Failure(message: "corrupt gzip data: \(detail)")
            }
        }
        return wanted - Int(stream.pointee.avail_out)
    }

    /// Reads the next compressed chunk into the input buffer.
    private func refill() throws(Failure) -> Int {
        while true {
            let n = systemRead(fd, input, inputCapacity)
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(message: "read error: \(String(cString: strerror(errno)))")
            }
            stream.pointee.next_in = input
            stream.pointee.avail_in = UInt32(n)
            compressedBytesRead += n
            return n
        }
    }
}
