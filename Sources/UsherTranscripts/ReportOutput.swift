import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a report goes: a file descriptor written in 64 KiB chunks, or memory (for tests and
/// for callers that want a `String`). Write errors do not throw at every call: the first one is
/// kept in `failure` and later writes are dropped; check it after `flush()`.
public final class ReportOutput {
    private var buffer: [UInt8] = []
    private let fd: Int32?
    private let ownsFD: Bool
    private let chunk = 1 << 16
    /// The first write error, if any.
    public private(set) var failure: String?
    /// Bytes written so far (including those still buffered).
    public private(set) var count = 0

    /// Writes to an open descriptor (standard output is 1); it stays open.
    public init(fd: Int32) {
        self.fd = fd
        ownsFD = false
        buffer.reserveCapacity(chunk * 2)
    }

    /// Keeps everything in memory: read it with `text`.
    public init() {
        fd = nil
        ownsFD = false
    }

    /// Creates or truncates the file at `path`.
    public init(path: String) throws(ReportOutputError) {
        let d = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard d >= 0 else { throw ReportOutputError(message: "cannot write \(path): \(String(cString: strerror(errno)))") }
        fd = d
        ownsFD = true
        buffer.reserveCapacity(chunk * 2)
    }

    private init(temporaryFD: Int32) {
        fd = temporaryFD
        ownsFD = true
        buffer.reserveCapacity(chunk * 2)
    }

    /// An unnamed temporary file (removed when closed): to hold part of a report that must
    /// come after something not known yet.
    public static func temporary() throws(ReportOutputError) -> ReportOutput {
        let dir = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((dir.hasSuffix("/") ? dir : dir + "/").appending("usher-report-XXXXXX").utf8CString)
        let d = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard d >= 0 else { throw ReportOutputError(message: "cannot create a temporary file: \(String(cString: strerror(errno)))") }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return ReportOutput(temporaryFD: d)
    }

    deinit {
        flush()
        if ownsFD, let fd { close(fd) }
    }

    /// Everything written, for an in-memory output.
    public var text: String { String(decoding: buffer, as: UTF8.self) }

    @inline(__always)
    public func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        count += s.utf8.count
        if buffer.count >= chunk { drain() }
    }

    /// Writes bytes as they are.
    public func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        count += bytes.count
        if buffer.count >= chunk { drain() }
    }

    /// Writes `s` as a JSON string literal, quotes included.
    public func writeJSONString(_ s: String) {
        var b = ReportBytes(capacity: s.utf8.count + 2)
        b.json(s)
        write(b.bytes)
    }

    /// Writes `s` on one line: each run of white space and control characters becomes one
    /// space (none at the ends), and text longer than `maxScalars` Unicode scalars is cut and
    /// ends in "…".
    public func writeFlattened(_ s: String, maxScalars: Int) {
        var b = ReportBytes(capacity: min(s.utf8.count, maxScalars * 4) + 3)
        b.flattened(s, maxScalars: maxScalars)
        write(b.bytes)
    }

    /// Writes `s` escaped for HTML text and attribute values (`& < > " '`).
    public func writeHTML(_ s: String) {
        var b = ReportBytes(capacity: s.utf8.count + 16)
        b.html(s)
        write(b.bytes)
    }

    /// Writes what a writer collected, and empties it.
    func write(_ b: inout ReportBytes) {
        write(b.bytes)
        b.removeAll()
    }

    /// Appends everything written to `other`, a `temporary()` output (which is then empty).
    public func append(contentsOf other: ReportOutput) {
        if other.fd == nil {
            write(other.buffer)
            other.buffer.removeAll()
            return
        }
        other.flush()
        guard let src = other.fd, lseek(src, 0, SEEK_SET) == 0 else {
            failure = failure ?? "cannot read back a temporary file"
            return
        }
        drain()
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: chunk * 4, alignment: 16)
        defer { scratch.deallocate() }
        while true {
            let n = systemRead(src, scratch, chunk * 4)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            buffer.append(contentsOf: UnsafeRawBufferPointer(start: scratch, count: n))
            count += n
            drain()
        }
    }

    /// Writes out what is buffered.
    public func flush() { drain() }

    private func drain() {
        guard let fd, !buffer.isEmpty else { return }
        if failure != nil { buffer.removeAll(keepingCapacity: true); return }
        buffer.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = systemWrite(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                done += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// An output file that cannot be created.
public struct ReportOutputError: Error, Sendable {
    /// Which file, and why.
    public var message: String
}
