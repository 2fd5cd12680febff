#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A TCP connection to an HTTP server, written byte by byte as a test wants: held open without a
/// request, trickled, or from a chosen loopback address (127.0.0.2, …: the kernel routes all of
/// 127/8 to the machine itself), so that a server's per-address limits can be tried from one
/// process. Test support only.
public final class RawConnection: @unchecked Sendable {
    // @unchecked: `fd` is closed once, by `close()` or deinit; the rest is the kernel's.
    public private(set) var fd: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ what: String) { description = "\(what) (errno \(errno): \(String(cString: strerror(errno))))" }
    }

    /// Connects to `address` (`127.0.0.1:PORT`) from `source` (an IPv4 address of this machine).
    public init(to address: String, from source: String = "127.0.0.1") throws {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else { throw Failure("bad address \(address)") }
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr(String(parts[0]))
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        guard bound == 0 else { let e = Failure("bind \(source)"); Glibc.close(fd); throw e }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } }
        guard connected == 0 else { let e = Failure("connect \(address)"); Glibc.close(fd); throw e }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Writes all of `bytes`.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 { if errno == EINTR { continue }; throw Failure("send") }
            offset += n
        }
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Whether the server closed the connection within `timeout`: the end of the stream (or a
    /// reset) arrives. What arrives before it is read and dropped.
    public func closedByPeer(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            switch next(before: deadline) {
            case .bytes: continue
            case .end: return true
            case .timeout: return false
            }
        }
    }

    /// Everything the server sends until it closes the connection, or nil when it has not closed
    /// it within `timeout`.
    public func readToEnd(timeout: Duration = .seconds(30)) -> [UInt8]? {
        let deadline = ContinuousClock.now + timeout
        var out: [UInt8] = []
        while true {
            switch next(before: deadline) {
            case let .bytes(chunk): out += chunk
            case .end: return out
            case .timeout: return nil
            }
        }
    }

    private enum Read { case bytes([UInt8]), end, timeout }

    /// What arrives next: bytes, the end of the stream (or a reset), or nothing by `deadline`.
    private func next(before deadline: ContinuousClock.Instant) -> Read {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            // Past the deadline, one look without waiting (`within: .zero`).
            let left = max(.zero, deadline - ContinuousClock.now)
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            let ready = poll(&p, 1, Int32(clamping: ms))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return .timeout }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return n > 0 ? .bytes(Array(buffer[..<n])) : .end
        }
    }

    /// A response read whole (the request asked for `Connection: close`).
    public struct Response: Sendable, CustomStringConvertible {
        public var status: Int
        /// By lowercased name.
        public var headers: [String: String]
        public var body: String
        public var description: String { "\(status) \(body)" }
    }

    /// Sends one request with `Connection: close` and reads the response; nil when none came
    /// within `timeout`.
    public func exchange(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [],
                         timeout: Duration = .seconds(30)) throws -> Response? {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        try send(Array((head + "\r\n").utf8) + body)
        guard let raw = readToEnd(timeout: timeout) else { return nil }
        return Self.parse(raw)
    }

    /// One request on a new connection from `source`: see `exchange`.
    public static func request(_ address: String, _ method: String, _ path: String, headers: [String: String] = [:],
                               body: [UInt8] = [], from source: String = "127.0.0.1",
                               timeout: Duration = .seconds(30)) throws -> Response? {
        let c = try RawConnection(to: address, from: source)
        defer { c.close() }
        return try c.exchange(method, path, headers: headers, body: body, timeout: timeout)
    }

    static func parse(_ raw: [UInt8]) -> Response? {
        let text = String(decoding: raw, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let first = lines.first, first.hasPrefix("HTTP/1."), first.count >= 12,
              let status = Int(first.dropFirst(9).prefix(3)) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: String(text[split.upperBound...]))
    }

    /// Raises this process's soft open-file limit to at least `files` (children started later
    /// inherit it); false when the hard limit is lower.
    public static func raiseOpenFileLimit(to files: Int) -> Bool {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return false }
        if limit.rlim_cur >= rlim_t(files) { return true }
        guard limit.rlim_max >= rlim_t(files) else { return false }
        limit.rlim_cur = rlim_t(files)
        return setrlimit(resource, &limit) == 0
    }
}
