import Foundation
import Synchronization
import Testing
import UsherHTTP
import UsherHTTPTestServer
import UsherTestSupport

/// What the echo server answers: the method, target and `X-Test` header it got, its body back,
/// the status the path asks for (`/status/404`), and a header twice.
private func echo(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response {
    let path = request.target.prefix { $0 != "?" }
    let status = path.hasPrefix("/status/") ? Int(path.dropFirst(8)) ?? 500 : 200
    return LoopbackHTTPServer.Response(
        status: status,
        headers: [("X-Method", request.method), ("X-Target", request.target),
                  ("X-Test", request.header("X-Test") ?? "-"),
                  ("X-Content-Type", request.header("Content-Type") ?? "-"),
                  ("X-Expect", request.header("Expect") ?? "-"),
                  ("X-Twice", "first"), ("x-twice", "second")],
        body: request.body)
}

@Suite struct HTTPClientTests {
    @Test func statusHeadersAndBodyBothWays() async throws {
        let server = try LoopbackHTTPServer(handler: echo)
        defer { server.close() }
        let client = HTTPClient()
        defer { client.close() }
        // Large enough that libcurl would otherwise ask for 100 Continue first.
        let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let response = try await client.send(HTTPRequest(
            method: "POST", url: server.baseURL + "/status/201?a=1&b=2",
            headers: [("X-Test", "hello there"), ("Content-Type", "application/octet-stream")], body: body))
        #expect(response.status == 201)
        #expect(response.body == body)
        #expect(response.header("x-method") == "POST")
        #expect(response.header("X-TARGET") == "/status/201?a=1&b=2")
        #expect(response.header("X-Test") == "hello there")
        #expect(response.header("X-Content-Type") == "application/octet-stream")
        #expect(response.header("X-Expect") == "-")
        #expect(response.header("X-Twice") == "first")
        #expect(response.headers.filter { $0.name.lowercased() == "x-twice" }.map(\.value) == ["first", "second"])
        #expect(response.header("Content-Length") == "200000")
        #expect(response.header("Absent") == nil)
    }

    @Test(arguments: [("GET", ""), ("DELETE", ""), ("DELETE", "{\"x\":1}"), ("PATCH", "{\"fields\":{}}"),
                      ("PUT", "a=b"), ("POST", ""), ("GET", "odd but allowed")])
    func methods(method: String, body: String) async throws {
        let server = try LoopbackHTTPServer(handler: echo)
        defer { server.close() }
        let client = HTTPClient()
        defer { client.close() }
        // Two requests on one handle: nothing of the first (a method, a body) may carry over.
        for request in [HTTPRequest(method: "POST", url: server.baseURL + "/first", body: Array("first".utf8)),
                        HTTPRequest(method: method, url: server.baseURL + "/x", body: Array(body.utf8))] {
            let response = try await client.send(request)
            #expect(response.status == 200)
            #expect(response.header("X-Method") == request.method)
            #expect(response.body == request.body)
        }
    }

    @Test func headersChangeBetweenRequests() async throws {
        let server = try LoopbackHTTPServer(handler: echo)
        defer { server.close() }
        let client = HTTPClient(connections: 1)
        defer { client.close() }
        for value in ["one", "one", "two", "", "three"] {
            let headers: [(name: String, value: String)] = value.isEmpty ? [] : [("X-Test", value)]
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/", headers: headers))
            #expect(response.header("X-Test") == (value.isEmpty ? "-" : value))
        }
    }

    @Test func anyStatusIsAResponse() async throws {
        let server = try LoopbackHTTPServer(handler: echo)
        defer { server.close() }
        let client = HTTPClient()
        defer { client.close() }
        for status in [204, 304, 400, 401, 404, 409, 500, 503] {
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/status/\(status)"))
            #expect(response.status == status)
        }
        let head = try await client.send(HTTPRequest(method: "HEAD", url: server.baseURL + "/status/200"))
        #expect(head.status == 200 && head.body.isEmpty && head.header("X-Method") == "HEAD")
    }

    /// One TCP connection for many requests: the server counts what it accepts.
    @Test func reusesOneConnection() async throws {
        let server = try LoopbackHTTPServer(handler: echo)
        defer { server.close() }
        let client = HTTPClient(connections: 4)
        defer { client.close() }
        let json = Array(("{\"text\":\"" + String(repeating: "x", count: 1000) + "\"}").utf8)
        for i in 0..<50 {
            let response = try await client.send(HTTPRequest(
                method: i % 2 == 0 ? "POST" : "GET", url: server.baseURL + "/n/\(i)",
                headers: [("Content-Type", "application/json")], body: i % 2 == 0 ? json : []))
            #expect(response.status == 200)
        }
        #expect(server.acceptedConnections == 1)
    }

    @Test func refusedConnectionCannotConnect() async throws {
        // A socket bound but not listening: connecting to its port is refused, and no other
        // server can take the port meanwhile.
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, length) == 0 && getsockname(s, $0, &length) == 0 }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let client = HTTPClient()
        defer { client.close() }
        let error = await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: "http://user:pw@127.0.0.1:\(port)/path?token=secret"))
        }
        #expect(error?.kind == .cannotConnect)
        let message = error?.message ?? ""
        #expect(message.contains("127.0.0.1:\(port)"))
        #expect(!message.contains("secret") && !message.contains("pw") && !message.contains("/path"), "\(message)")
    }

    @Test func malformedURLFails() async throws {
        let client = HTTPClient()
        defer { client.close() }
        let error = await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: "ftp2://x:99999/"))
        }
        #expect(error?.kind == .failed)
    }

    /// `connections` requests at once and no more: the server holds each request until as many
    /// as the client may send are open, and counts the most it saw.
    @Test func runsConnectionsRequestsAtOnce() async throws {
        let limit = 4
        final class Seen: Sendable { let counts = Mutex((now: 0, most: 0, arrived: 0, gaveUp: false)) }
        let seen = Seen()
        let server = try LoopbackHTTPServer { request in
            // Requests come in waves of `limit`: each is held until its wave is complete, so a
            // wave is open at once. A client running fewer never completes one: the first
            // request to wait 5 s gives up for all.
            let wave = seen.counts.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
                $0.arrived += 1
                return ($0.arrived - 1) / limit
            }
            defer { seen.counts.withLock { $0.now -= 1 } }
            let deadline = Date().addingTimeInterval(5)
            while seen.counts.withLock({ $0.arrived < (wave + 1) * limit && !$0.gaveUp }) {
                if Date() > deadline { seen.counts.withLock { $0.gaveUp = true } }
                usleep(500)
            }
            return echo(request)
        }
        defer { server.close() }
        let client = HTTPClient(connections: limit)
        defer { client.close() }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<(limit * 3) {
                group.addTask { try await client.send(HTTPRequest(url: server.baseURL + "/c/\(i)")).status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: limit * 3))
        #expect(seen.counts.withLock { $0.most } == limit)
        #expect(!seen.counts.withLock { $0.gaveUp })
        #expect(server.acceptedConnections == limit)
    }

    @Test func closedClientFails() async throws {
        let server = try LoopbackHTTPServer(handler: echo)
        defer { server.close() }
        let client = HTTPClient()
        #expect(try await client.send(HTTPRequest(url: server.baseURL + "/")).status == 200)
        client.close()
        client.close()
        let error = await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/"))
        }
        #expect(error?.kind == .failed)
        #expect(error?.message.contains("closed") == true)
    }
}
