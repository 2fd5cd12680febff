import Foundation
internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP server for `/metrics`, `/healthz` and `/readyz`, on libmicrohttpd's own thread.
/// GET only; every other method gets 405.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon` is written in init and close() only; libmicrohttpd calls the handler
    // from its thread with `Box`, whose `handle` is an immutable Sendable closure.

    /// What a request gets: status, content type, body.
    public struct Response: Sendable {
        public var status: Int
        public var contentType: String
        public var body: String
        public init(status: Int = 200, contentType: String = "text/plain; charset=utf-8", body: String) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }
    }

    private final class Box: Sendable {
        let handle: @Sendable (String) -> Response
        init(_ handle: @escaping @Sendable (String) -> Response) { self.handle = handle }
    }

    private var daemon: OpaquePointer?
    private let box: Unmanaged<Box>
    /// The address it listens on, `HOST:PORT`.
    public let address: String

    /// Listens on `address` (`127.0.0.1:9464`; port 0 picks a free one) and answers GET requests
    /// with `handle(path)`.
    public init(address: String, handle: @escaping @Sendable (String) -> Response) throws(RuntimeError) {
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
        let box = Unmanaged.passRetained(Box(handle))
        self.box = box
        let callback: MHD_AccessHandlerCallback = { cls, connection, url, method, _, _, uploadSize, _ in
            guard let cls, let connection else { return .NO }
            let server = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue()
            if let uploadSize, uploadSize.pointee != 0 { uploadSize.pointee = 0; return .YES }
            let isGet = method.map { String(cString: $0) == "GET" || String(cString: $0) == "HEAD" } ?? false
            let path = url.map { String(cString: $0) } ?? "/"
            let response = isGet ? server.handle(path)
                : Response(status: 405, body: "only GET is supported\n")
            let bytes = Array(response.body.utf8)
            let r = bytes.withUnsafeBytes { usher_mhd_copy_response($0.baseAddress, $0.count) }
            guard let r else { return .NO }
            defer { MHD_destroy_response(r) }
            _ = MHD_add_response_header(r, "Content-Type", response.contentType)
            return MHD_queue_response(connection, UInt32(response.status), r)
        }
        let started = withUnsafePointer(to: &addr) { usher_mhd_start($0, callback, box.toOpaque()) }
        guard let started else {
            box.release()
            throw RuntimeError("listen-failed", "cannot listen on \(address) (in use, or not permitted)")
        }
        daemon = started
        let bound = port == 0 ? usher_mhd_bound_port(started) : port
        self.address = "\(host):\(bound)"
    }

    /// Stops listening; waits for the daemon's thread.
    public func close() {
        guard let d = daemon else { return }
        daemon = nil
        MHD_stop_daemon(d)
        box.release()
    }

    deinit { assert(daemon == nil, "HTTPServer.close() was not called") }
}
