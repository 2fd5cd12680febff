import Foundation
internal import CMicroHTTPD
import UsherJSON
import UsherStore
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on libmicrohttpd's own thread: the worker's `/metrics`, `/healthz` and
/// `/readyz`, and the webhook's front door.
///
/// The thread waits on epoll (poll off Linux), never `select()`, which fails for every client
/// once a descriptor reaches 1,024. What a client can hold is bounded (`Limits`): connections
/// in all and per IP address, an idle timeout, and a time limit on each exchange that closes a
/// client trickling its request (or reading its response) a byte at a time. libmicrohttpd's own
/// messages go to the log as `http-server` events, each text at most once a minute.
///
/// A handler may answer at once or later, from any thread (`Responder`): meanwhile the
/// connection is suspended, and neither holds libmicrohttpd's thread nor counts against the
/// exchange's time.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon` is written in init and close() only; libmicrohttpd calls back on its
    // thread with `Core`, whose mutable state is behind its lock.

    /// What a client may hold.
    public struct Limits: Sendable {
        /// Connections open at once; more wait in the kernel's listen queue until one closes.
        /// The process's open-file limit is raised to fit them where it can be (up to the hard
        /// limit); where it cannot, this is lowered to what fits, and the log says so.
        public var connections: Int
        /// Connections open at once from one IP address; more are closed as they arrive, so one
        /// client cannot take every connection.
        public var connectionsPerAddress: Int
        /// A connection on which nothing is sent or received for this long is closed (whole
        /// seconds, at least one).
        public var idleTimeout: Duration
        /// Each exchange — a request arriving whole and its response leaving — must be done within
        /// this long of the connection's opening or of its previous response; otherwise the
        /// connection is closed. The time a handler takes to answer does not count.
        public var exchangeTimeout: Duration
        /// Longer request bodies get 413 (a `Content-Length` over it at once, before any is read).
        public var maxBodyBytes: Int

        public init(connections: Int = 2_048, connectionsPerAddress: Int = 256, idleTimeout: Duration = .seconds(10),
                    exchangeTimeout: Duration = .seconds(30), maxBodyBytes: Int = 1 << 20) {
            self.connections = connections
            self.connectionsPerAddress = connectionsPerAddress
            self.idleTimeout = idleTimeout
            self.exchangeTimeout = exchangeTimeout
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// A request, read whole.
    public struct Request: Sendable {
        public var method: String
        /// The path, percent-decoded, without the query.
        public var path: String
        /// By lowercased name; a header sent several times has its values joined with ", ".
        public var headers: [String: String]
        public var body: [UInt8]

        public init(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = []) {
            self.method = method
            self.path = path
            self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, b in "\(a), \(b)" })
            self.body = body
        }

        /// A header's value (the name in any case).
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// What a request gets: status, content type, body, other headers.
    public struct Response: Sendable, Equatable {
        public var status: Int
        public var contentType: String
        public var body: String
        public var headers: [String: String]
        public init(status: Int = 200, contentType: String = "text/plain; charset=utf-8", body: String, headers: [String: String] = [:]) {
            self.status = status
            self.contentType = contentType
            self.body = body
            self.headers = headers
        }

        /// A JSON error: `{"error":CODE,"message":…,"field":…}` (`field` names what in the request
        /// is wrong, when one thing is).
        public static func error(_ status: Int, _ code: String, _ message: String, field: String? = nil) -> Response {
            var w = JSONWriter(capacity: 64 + message.utf8.count)
            w.byte(UInt8(ascii: "{"))
            w.key("error", first: true); w.string(code)
            if let field { w.key("field"); w.string(field) }
            w.key("message"); w.string(message)
            w.byte(UInt8(ascii: "}"))
            w.byte(0x0A)
            return Response(status: status, contentType: "application/json", body: String(decoding: w.bytes, as: UTF8.self))
        }
    }

    /// Answers one request: the first `respond` counts, later ones are ignored. Any thread.
    public final class Responder: Sendable {
        private let core: Core
        private let exchange: Exchange
        fileprivate init(_ core: Core, _ exchange: Exchange) {
            self.core = core
            self.exchange = exchange
        }

        public func respond(_ response: Response) { core.respond(exchange, response) }
    }

    private var daemon: OpaquePointer?
    private let core: Core
    private let reaper: any DispatchSourceTimer
    private let reaperQueue = DispatchQueue(label: "usher.http.reaper")
    /// The address it listens on, `HOST:PORT`.
    public let address: String
    /// The limits in force (`connections` lowered to fit the open-file limit, where it had to be).
    public let limits: Limits

    /// Listens on `address` (`127.0.0.1:9464`; port 0 picks a free one) and hands every request
    /// to `handle` on the server's thread, which answers through the `Responder` — at once, or
    /// later from any thread. libmicrohttpd's messages and the connections closed for their time
    /// go to `log`.
    public convenience init(address: String, limits: Limits = Limits(), log: Logger = Logger(),
                            respond handle: @escaping @Sendable (Request, Responder) -> Void) throws(RuntimeError) {
        try self.init(address: address, limits: limits, report: { log.log($0, $1, pairs: $2) }, respond: handle)
    }

    /// As `init(address:limits:log:respond:)`, with the server's log events (level, event,
    /// fields) handed to `report` rather than to a `Logger`.
    public init(address: String, limits: Limits = Limits(), report: @escaping @Sendable (Logger.Level, String, [(String, String)]) -> Void,
                respond handle: @escaping @Sendable (Request, Responder) -> Void) throws(RuntimeError) {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]) else {
            throw RuntimeError("bad-address", "'\(address)' is not HOST:PORT, like 127.0.0.1:9464")
        }
        let host = parts[0].isEmpty ? "0.0.0.0" : (parts[0] == "localhost" ? "127.0.0.1" : String(parts[0]))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else {
            throw RuntimeError("bad-address", "'\(host)' is not an IPv4 address")
        }
        var limits = limits
        let fitted = Self.fitOpenFiles(limits.connections)
        if fitted < limits.connections {
            report(.warning, "http-connection-limit", [("address", address), ("wanted", "\(limits.connections)"), ("limit", "\(fitted)"),
                                                       ("note", "the open-file limit (ulimit -n) leaves room for no more; raise it to allow more")])
            limits.connections = fitted
        }
        self.limits = limits
        let core = Core(limits: limits, report: report, handle: handle)
        self.core = core
        let context = Unmanaged.passRetained(core)
        let idle = UInt32(max(1, (limits.idleTimeout + .milliseconds(999)).components.seconds))
        let started = withUnsafePointer(to: &addr) {
            usher_mhd_start($0, access, context.toOpaque(), logger, notifyConnection, notifyCompleted,
                            UInt32(clamping: limits.connections), UInt32(clamping: limits.connectionsPerAddress), idle)
        }
        guard let started else {
            context.release()
            throw RuntimeError("listen-failed", "cannot listen on \(address) (in use, or not permitted)")
        }
        daemon = started
        let bound = port == 0 ? usher_mhd_bound_port(started) : port
        self.address = "\(host):\(bound)"
        // The exchange limit is kept by looking every quarter of it (at most a second apart).
        let tick = min(limits.exchangeTimeout / 4, .seconds(1))
        reaper = DispatchSource.makeTimerSource(queue: reaperQueue)
        reaper.schedule(deadline: .now() + tick.seconds, repeating: tick.seconds)
        reaper.setEventHandler { core.closeLateExchanges() }
        reaper.resume()
    }

    /// Listens on `address` and answers GET and HEAD requests with `handle(path)` (other
    /// methods: 405).
    public convenience init(address: String, limits: Limits = Limits(), log: Logger = Logger(),
                            handle: @escaping @Sendable (String) -> Response) throws(RuntimeError) {
        try self.init(address: address, limits: limits, log: log) { request, responder in
            responder.respond(request.method == "GET" || request.method == "HEAD" ? handle(request.path)
                              : Response(status: 405, body: "only GET is supported\n", headers: ["Allow": "GET, HEAD"]))
        }
    }

    /// Stops listening: requests still waiting for their handler get 503 (up to a second is
    /// given to send them), open connections are closed, and the daemon's thread is waited for.
    public func close() {
        guard let d = daemon else { return }
        daemon = nil
        reaper.cancel()
        reaperQueue.sync {}
        let listener = MHD_quiesce_daemon(d)
        core.answerSuspended(within: .seconds(1))
        MHD_stop_daemon(d)
        if listener >= 0 { _ = Glibc.close(listener) }
        Unmanaged.passUnretained(core).release()
    }

    deinit { assert(daemon == nil, "HTTPServer.close() was not called") }

    /// Connections open now (for tests and logs).
    public var openConnections: Int { core.openConnections }

    // MARK: - The open-file limit

    /// Descriptors kept for everything else the process opens (the store, files, outbound HTTP).
    static let reservedFiles = 128

    /// How many connections fit under the open-file limit, after raising its soft value toward
    /// `connections` plus the reserve (never above the hard limit, never lowering it).
    static func fitOpenFiles(_ connections: Int) -> Int {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return connections }
        let needed = rlim_t(connections + reservedFiles)
        // RLIM_INFINITY (which does not import) is the type's largest value: `min` keeps it right.
        if limit.rlim_cur < needed {
            var raised = limit
            raised.rlim_cur = min(needed, limit.rlim_max)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return min(connections, max(16, Int(clamping: limit.rlim_cur) - reservedFiles))
    }
}

// MARK: - libmicrohttpd's callbacks (on its thread)

// File-level rather than static members: the compiler crashes loading a member whose type has a
// `va_list` (the logger's) in a module that does not import CMicroHTTPD itself.

private let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, data, size, state in
    guard let cls, let connection, let size, let state else { return .NO }
    let core = Unmanaged<Core>.fromOpaque(cls).takeUnretainedValue()
    return core.access(connection, url: url, method: method, data: data, size: size, state: state) ? .YES : .NO
}

private let logger: MHD_LogCallback = { cls, format, arguments in
    guard let cls, let format else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    guard let arguments else { return }
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    Unmanaged<Core>.fromOpaque(cls).takeUnretainedValue().report("http-server", text)
}

private let notifyConnection: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    guard let cls, let connection else { return }
    let core = Unmanaged<Core>.fromOpaque(cls).takeUnretainedValue()
    if usher_mhd_is_start(code) != 0 {
        core.opened(connection, fd: usher_mhd_connection_fd(connection))
    } else {
        core.closed(connection)
    }
}

private let notifyCompleted: MHD_RequestCompletedCallback = { cls, connection, state, _ in
    guard let cls, let connection else { return }
    let core = Unmanaged<Core>.fromOpaque(cls).takeUnretainedValue()
    core.completed(connection)
    if let state, let exchange = state.pointee {
        Unmanaged<Exchange>.fromOpaque(exchange).release()
        state.pointee = nil
    }
}

// MARK: - The server's state

/// One request: read on libmicrohttpd's thread; `phase` under the core's lock, since a
/// `Responder` may answer from any thread.
private final class Exchange: @unchecked Sendable {
    // @unchecked: `method`, `path`, `headers`, `body`, `tooLarge` are touched only on
    // libmicrohttpd's thread (the access callback); `phase` only under `Core.state`'s lock.
    enum Phase {
        /// Its body is arriving.
        case receiving
        /// Given to the handler, not answered yet.
        case handling
        /// Suspended, waiting for the handler's answer.
        case suspended
        /// Answered, not queued yet.
        case answered(HTTPServer.Response)
        /// Queued to be sent.
        case sent
    }

    let connection: OpaquePointer
    let method: String
    let path: String
    let headers: [String: String]
    var body: [UInt8] = []
    var tooLarge = false
    var phase = Phase.receiving

    init(connection: OpaquePointer, method: String, path: String, headers: [String: String]) {
        self.connection = connection
        self.method = method
        self.path = path
        self.headers = headers
    }
}

private final class Core: @unchecked Sendable {
    // @unchecked: the mutable state is in `state`, behind its lock; libmicrohttpd
    // calls back on one thread.
    struct Connection {
        var fd: Int32
        /// When the current exchange started: the connection's opening, its previous response,
        /// or the handler's answer.
        var since: ContinuousClock.Instant
        /// Waiting for a handler: not timed.
        var suspended = false
        /// Shut down for its time already.
        var shut = false
    }

    struct State {
        var connections: [OpaquePointer: Connection] = [:]
        var suspended: [ObjectIdentifier: Exchange] = [:]
        var closing = false
        /// Requests answered at close whose answers are not sent yet.
        var draining = 0
    }

    let limits: HTTPServer.Limits
    let log: @Sendable (Logger.Level, String, [(String, String)]) -> Void
    let handle: @Sendable (HTTPServer.Request, HTTPServer.Responder) -> Void
    private let state = Locked(State())

    init(limits: HTTPServer.Limits, report: @escaping @Sendable (Logger.Level, String, [(String, String)]) -> Void,
         handle: @escaping @Sendable (HTTPServer.Request, HTTPServer.Responder) -> Void) {
        self.limits = limits
        self.log = report
        self.handle = handle
    }

    var openConnections: Int { state.withLock { $0.connections.count } }

    /// The access callback: true to go on with the connection, false to close it.
    func access(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                data: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>, state slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Bool {
        guard let opaque = slot.pointee else {
            // First call: the headers are in.
            let method = method.map { String(cString: $0) } ?? "GET"
            let exchange = Exchange(connection: connection, method: method, path: url.map { String(cString: $0) } ?? "/",
                                    headers: Self.headers(connection))
            slot.pointee = Unmanaged.passRetained(exchange).toOpaque()
            if let length = exchange.headers["content-length"].flatMap(Int.init), length > limits.maxBodyBytes {
                return queue(connection, tooLarge(length))
            }
            // No body to wait for: answer now rather than at a second call.
            if method == "GET" || method == "HEAD" { return dispatch(exchange) }
            return true
        }
        let exchange = Unmanaged<Exchange>.fromOpaque(opaque).takeUnretainedValue()
        if size.pointee > 0 {
            if !exchange.tooLarge, let data {
                if exchange.body.count + size.pointee > limits.maxBodyBytes {
                    exchange.tooLarge = true
                    exchange.body = []
                } else {
                    data.withMemoryRebound(to: UInt8.self, capacity: size.pointee) {
                        exchange.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size.pointee))
                    }
                }
            }
            size.pointee = 0
            return true
        }
        let ready: HTTPServer.Response? = state.withLock { _ in
            if case let .answered(response) = exchange.phase {
                exchange.phase = .sent
                return response
            }
            return nil
        }
        if let ready { return queue(connection, ready) }
        guard case .receiving = state.withLock({ _ in exchange.phase }) else { return false }
        if exchange.tooLarge { return queue(connection, tooLarge(nil)) }
        return dispatch(exchange)
    }

    private func tooLarge(_ length: Int?) -> HTTPServer.Response {
        .error(413, "too-large", "the body is \(length.map { "\($0) bytes" } ?? "longer than that"); at most \(limits.maxBodyBytes) bytes "
               + "are taken in one request: send fewer messages per request", field: "body")
    }

    /// Hands the request to the handler; queues its answer when it came at once, otherwise
    /// suspends the connection until it comes.
    private func dispatch(_ exchange: Exchange) -> Bool {
        state.withLock { _ in exchange.phase = .handling }
        handle(HTTPServer.Request(method: exchange.method, path: exchange.path, headers: exchange.headers, body: exchange.body),
               HTTPServer.Responder(self, exchange))
        let now: HTTPServer.Response? = state.withLock { s in
            switch exchange.phase {
            case let .answered(response):
                exchange.phase = .sent
                return response
            case .handling where s.closing:
                exchange.phase = .sent
                return .error(503, "stopping", "the server is stopping; send again shortly")
            case .handling:
                // Under the lock, so that an answer from another thread finds it suspended, and
                // resumes it; libmicrohttpd calls back without its own lock held.
                MHD_suspend_connection(exchange.connection)
                exchange.phase = .suspended
                s.suspended[ObjectIdentifier(exchange)] = exchange
                s.connections[exchange.connection]?.suspended = true
                return nil
            case .receiving, .suspended, .sent:
                return nil
            }
        }
        return now.map { queue(exchange.connection, $0) } ?? true
    }

    func respond(_ exchange: Exchange, _ response: HTTPServer.Response) {
        state.withLock { s in
            switch exchange.phase {
            case .handling:
                exchange.phase = .answered(response)
            case .suspended:
                exchange.phase = .answered(response)
                s.suspended[ObjectIdentifier(exchange)] = nil
                if var c = s.connections[exchange.connection] {
                    c.suspended = false
                    c.since = .now
                    s.connections[exchange.connection] = c
                }
                MHD_resume_connection(exchange.connection)
            case .receiving, .answered, .sent:
                break
            }
        }
    }

    /// At close: the requests still waiting for their handler get 503 (libmicrohttpd must not be
    /// stopped with a connection suspended), and none is suspended from now on. Returns once
    /// those answers are sent, or `limit` has passed.
    func answerSuspended(within limit: Duration) {
        let waiting = state.withLock { s in
            s.closing = true
            s.draining = s.suspended.count
            return Array(s.suspended.values)
        }
        var stopping = HTTPServer.Response.error(503, "stopping", "the server is stopping; send again shortly")
        stopping.headers["Connection"] = "close"
        for exchange in waiting { respond(exchange, stopping) }
        let deadline = ContinuousClock.now + limit
        while state.withLock({ $0.draining > 0 }) && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
    }

    private func queue(_ connection: OpaquePointer, _ response: HTTPServer.Response) -> Bool {
        let bytes = Array(response.body.utf8)
        guard let r = bytes.withUnsafeBytes({ usher_mhd_copy_response($0.baseAddress, $0.count) }) else { return false }
        defer { MHD_destroy_response(r) }
        _ = MHD_add_response_header(r, "Content-Type", response.contentType)
        for (name, value) in response.headers { _ = MHD_add_response_header(r, name, value) }
        return MHD_queue_response(connection, UInt32(response.status), r) == .YES
    }

    private static func headers(_ connection: OpaquePointer) -> [String: String] {
        final class Collected { var headers: [String: String] = [:] }
        let collected = Collected()
        withExtendedLifetime(collected) {
            _ = usher_mhd_headers(connection, { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let into = Unmanaged<Collected>.fromOpaque(cls).takeUnretainedValue()
                let name = String(cString: key).lowercased()
                let text = value.map { String(cString: $0) } ?? ""
                into.headers[name] = into.headers[name].map { "\($0), \(text)" } ?? text
                return .YES
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.headers
    }

    // MARK: connections and their time

    func opened(_ connection: OpaquePointer, fd: Int32) {
        state.withLock { $0.connections[connection] = Connection(fd: fd, since: .now) }
    }

    /// Called before libmicrohttpd closes the socket: while the entry is here (and the lock held)
    /// its descriptor is this connection's.
    func closed(_ connection: OpaquePointer) {
        state.withLock { _ = $0.connections.removeValue(forKey: connection) }
    }

    /// A request finished (answered, or its connection closed): the next exchange starts now.
    func completed(_ connection: OpaquePointer) {
        state.withLock { s in
            s.connections[connection]?.since = .now
            if s.closing, s.draining > 0 { s.draining -= 1 }
        }
    }

    /// Shuts down every connection whose exchange has taken longer than the limit: libmicrohttpd
    /// sees the end of the stream and closes it on its thread.
    func closeLateExchanges() {
        let now = ContinuousClock.now
        let limit = limits.exchangeTimeout
        let shut = state.withLock { s -> Int in
            var shut = 0
            for (key, c) in s.connections where !c.suspended && !c.shut && now - c.since > limit && c.fd >= 0 {
                shutdown(c.fd, Int32(SHUT_RDWR))
                s.connections[key]?.shut = true
                shut += 1
            }
            return shut
        }
        if shut > 0 { report("http-exchange-timeout", "closed \(shut) connection(s) whose request or response took longer than \(limit)") }
    }

    // MARK: the log

    /// Logs `text` as `event`, a warning; the logger writes each at most once a minute
    /// (`Logger.Throttle.standard`).
    func report(_ event: String, _ text: String) {
        log(.warning, event, [("message", text)])
    }
}
