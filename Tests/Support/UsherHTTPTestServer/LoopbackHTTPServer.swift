#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An HTTP/1.1 server on 127.0.0.1 for tests of HTTP clients: a port of its own, a thread per
/// connection, keep-alive, bodies by `Content-Length`, and a count of the TCP connections it
/// accepted (how a test sees whether a client reuses its connections). Each request is answered
/// by the test's handler, on the connection's thread: a handler may block to hold a request
/// open. Test support only — the product has no hand-written HTTP.
public final class LoopbackHTTPServer: @unchecked Sendable {
    // @unchecked: `state` is touched only under `lock`; `listener` and `port` are set in init.

    /// A request as received.
    public struct Request: Sendable {
        public var method: String
        /// The request target: path and query, as sent.
        public var target: String
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        /// The first header named `name`, without regard to ASCII case.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// What the handler answers. `Content-Length` is added.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// A JSON answer.
        public static func json(_ text: String, status: Int = 200) -> Response {
            Response(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
        }
    }

    private struct State {
        var accepted = 0
        var open: Set<Int32> = []
        var closed = false
    }

    private let lock = NSLock()
    private var state = State()
    private let threads = DispatchGroup()
    private let listener: Int32
    private let handler: @Sendable (Request) -> Response
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// TCP connections accepted so far.
    public var acceptedConnections: Int { lock.withLock { state.accepted } }

    /// Listens on a free port of 127.0.0.1 and answers every request with `handler`.
    public init(handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw ServerError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, length) == 0 && getsockname(s, $0, &length) == 0
            }
        }
        guard bound, listen(s, 128) == 0 else {
            Glibc.close(s)
            throw ServerError("cannot listen on 127.0.0.1 (errno \(errno))")
        }
        listener = s
        port = Int(UInt16(bigEndian: address.sin_port))
        threads.enter()
        Thread { [self] in acceptLoop() }.start()
    }

    /// Stops accepting, ends every connection and waits for the threads (handlers must have
    /// returned: a test releases what it holds first). Idempotent.
    public func close() {
        let open: Set<Int32>? = lock.withLock {
            if state.closed { return nil }
            state.closed = true
            return state.open
        }
        guard let open else { return }
        // shutdown, not close: it wakes a thread blocked in accept or read on the socket, and the
        // number cannot be reused by another socket before that thread has let go of it.
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        threads.wait()
        Glibc.close(listener)
    }

    deinit { close() }

    private func acceptLoop() {
        defer { threads.leave() }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let accepted = lock.withLock { () -> Bool in
                if state.closed { return false }
                state.accepted += 1
                state.open.insert(fd)
                return true
            }
            guard accepted else {
                Glibc.close(fd)
                return
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            threads.enter()
            Thread { [self] in
                serve(fd)
                lock.withLock { _ = state.open.remove(fd) }
                Glibc.close(fd)
                threads.leave()
            }.start()
        }
    }

    /// Answers requests on `fd` until the client closes it or asks to.
    private func serve(_ fd: Int32) {
        var input: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return false }
            input.append(contentsOf: chunk[0..<n])
            return true
        }
        while true {
            var headEnd: Int?
            while true {
                headEnd = Self.find([0x0D, 0x0A, 0x0D, 0x0A], in: input)
                if headEnd != nil { break }
                if !fill() { return }
            }
            guard let headEnd, var request = Self.parseHead(Array(input[..<headEnd])) else { return }
            input.removeFirst(headEnd + 4)
            let length = request.header("Content-Length").flatMap { Int($0) } ?? 0
            while input.count < length { if !fill() { return } }
            request.body = Array(input[..<length])
            input.removeFirst(length)

            let response = handler(request)
            var text = "HTTP/1.1 \(response.status) \(response.status < 400 ? "OK" : "Error")\r\n"
            for field in response.headers { text += "\(field.name): \(field.value)\r\n" }
            text += "Content-Length: \(response.body.count)\r\n\r\n"
            var out = Array(text.utf8)
            if request.method != "HEAD" { out += response.body }
            if !writeAll(fd, out) { return }
            if request.header("Connection")?.lowercased() == "close" { return }
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i
        }
        return nil
    }

    private static func parseHead(_ head: [UInt8]) -> Request? {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let start = lines[0].split(separator: " ")
        guard start.count == 3 else { return nil }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return Request(method: String(start[0]), target: String(start[1]), headers: headers, body: [])
    }
}

/// The server could not start.
public struct ServerError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
