#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `read(2)`, named so that types with a `read` method can call it.
func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// `write(2)`, named so that types with a `write` method can call it.
func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

/// The lines of one transcript file, read in chunks: plain text or gzip (recognised by its
/// magic bytes `1f 8b`, whatever the file is called), never the whole file at once. Memory is
/// one buffer that grows only to hold the longest line (at most `maxLineBytes`).
///
/// Owns the file descriptor (closed in `deinit`; standard input is left open).
final class TranscriptLineReader {
    /// The file as the user named it (`-` is standard input).
    let path: String
    /// Whether the file is gzip-compressed.
    private(set) var isGzip = false
    /// Size of the file on disk, when it is a regular file (for progress).
    private(set) var fileSize: Int?
    /// 1-based number of the line last returned.
    private(set) var lineNumber = 0
    /// The longest line accepted: longer ones are an error, not an allocation without end.
    let maxLineBytes: Int

    private let fd: Int32
    private var gzip: GzipReader?
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var start = 0
    private var end = 0
    /// Where to continue looking for a newline in `[start, end)`.
    private var scanned = 0
    private var eof = false
    private var plainBytesRead = 0

    init(path: String, bufferSize: Int = 1 << 18, maxLineBytes: Int = 64 << 20) throws(TranscriptError) {
        self.path = path
        self.maxLineBytes = maxLineBytes
        if path == "-" {
            fd = 0
        } else {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw TranscriptError("unreadable", "cannot open: \(String(cString: strerror(errno)))", file: path, isLineError: false)
            }
        }
        capacity = max(bufferSize, 16)
        buffer = .allocate(capacity: capacity)
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { fileSize = Int(st.st_size) }
        if fileSize == nil, (st.st_mode & S_IFMT) == S_IFDIR {
            throw TranscriptError("unreadable", "is a folder, not a transcript file", file: path, isLineError: false)
        }
        try sniff()
    }

    deinit {
        buffer.deallocate()
        if fd > 0 { close(fd) }
    }

    /// Compressed (or plain) bytes consumed so far, comparable with `fileSize`.
    var bytesRead: Int { gzip?.compressedBytesRead ?? plainBytesRead }

    /// Reads the first bytes and decides between plain text and gzip.
    private func sniff() throws(TranscriptError) {
        while end < 2 {
            let n = try readPlain(into: buffer + end, capacity: capacity - end)
            if n == 0 { eof = true; break }
            end += n
        }
        if end >= 2, buffer[0] == 0x1F, buffer[1] == 0x8B {
            isGzip = true
            do {
                gzip = try GzipReader(fd: fd, initial: UnsafeRawBufferPointer(start: buffer, count: end))
            } catch {
                throw TranscriptError("corrupt-gzip", error.message, file: path, isLineError: false)
            }
            end = 0
            eof = false
        } else if end >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
            start = 3   // a UTF-8 byte order mark
            scanned = 3
        }
    }

    private func readPlain(into p: UnsafeMutablePointer<UInt8>, capacity: Int) throws(TranscriptError) -> Int {
        while true {
            let n = systemRead(fd, p, capacity)
            if n >= 0 { plainBytesRead += n; return n }
            if errno != EINTR {
                throw TranscriptError("unreadable", "read error: \(String(cString: strerror(errno)))", file: path, isLineError: false)
            }
        }
    }

    /// The next line without its line break (and without a trailing `\r`), or `nil` at the end
    /// of the file. The bytes stay valid until the next call.
    func nextLine() throws(TranscriptError) -> UnsafeBufferPointer<UInt8>? {
        while true {
            if scanned < end, let nl = memchr(buffer + scanned, 0x0A, end - scanned) {
                let k = buffer.distance(to: nl.assumingMemoryBound(to: UInt8.self))
                let line = lineBytes(start, k)
                start = k + 1
                scanned = start
                lineNumber += 1
                return line
            }
            scanned = end
            if eof {
                guard start < end else { return nil }
                let line = lineBytes(start, end)
                start = end
                lineNumber += 1
                return line
            }
            try fill()
        }
    }

    private func lineBytes(_ from: Int, _ to: Int) -> UnsafeBufferPointer<UInt8> {
        var to = to
        if to > from, buffer[to - 1] == 0x0D { to -= 1 }
        return UnsafeBufferPointer(start: buffer + from, count: to - from)
    }

    /// Makes room and reads more bytes after `end`.
    private func fill() throws(TranscriptError) {
        if start > 0 {
            let pending = end - start
            if pending > 0 { (buffer).update(from: buffer + start, count: pending) }
            end = pending
            scanned -= start
            start = 0
        }
        if end == capacity {
            guard capacity < maxLineBytes else {
                throw TranscriptError("line-too-long", "line \(lineNumber + 1) is longer than \(maxLineBytes >> 20) MiB", file: path,
                                      line: lineNumber + 1, isLineError: false)
            }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: min(capacity * 2, maxLineBytes))
            bigger.update(from: buffer, count: end)
            buffer.deallocate()
            buffer = bigger
            capacity = min(capacity * 2, maxLineBytes)
        }
        let n: Int
        if let gzip {
            do {
                n = try gzip.read(into: buffer + end, capacity: capacity - end)
            } catch {
                throw TranscriptError("corrupt-gzip", error.message + (lineNumber > 0 ? " (after line \(lineNumber))" : " (before the first line)"),
                                      file: path, isLineError: false)
            }
        } else {
            n = try readPlain(into: buffer + end, capacity: capacity - end)
        }
        if n == 0 { eof = true }
        end += n
    }
}
