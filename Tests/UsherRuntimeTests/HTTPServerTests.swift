import Foundation
import Testing
import UsherRuntime
import UsherStore
import UsherTestSupport

/// The HTTP server's limits and its late answers, against real sockets (a system test: real
/// connections, real timers).
@Suite("HTTP server", .serialized)
struct HTTPServerTests {
    /// Log lines, kept.
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    }

    func server(_ limits: HTTPServer.Limits = .init(), lines: Lines = Lines(),
                _ handle: @escaping @Sendable (HTTPServer.Request, HTTPServer.Responder) -> Void = { _, r in r.respond(.init(body: "ok\n")) })
        throws -> HTTPServer {
        try HTTPServer(address: "127.0.0.1:0", limits: limits, log: Logger(format: .json, sink: { lines.add($0) }), respond: handle)
    }

    @Test func aPostedBodyIsHandedOnAndAnsweredLaterFromAnotherThread() throws {
        let s = try server { request, responder in
            let echo = "\(request.method) \(request.path) \(request.header("X-Test") ?? "-") \(String(decoding: request.body, as: UTF8.self))"
            DispatchQueue.global().async { responder.respond(.init(status: 202, body: echo)) }
        }
        defer { s.close() }
        for i in 0..<20 {
            let r = try #require(try RawConnection.request(s.address, "POST", "/v1/x%20y", headers: ["X-Test": "\(i)"],
                                                           body: Array("body \(i)".utf8)))
            #expect(r.status == 202)
            #expect(r.body == "POST /v1/x y \(i) body \(i)")
        }
    }

    @Test func aBodyOverTheLimitGets413NamingTheBodyWhetherDeclaredOrNot() throws {
        let handled = Locked(0)
        let s = try server(.init(maxBodyBytes: 100)) { _, r in handled.withLock { $0 += 1 }; r.respond(.init(body: "ok")) }
        defer { s.close() }
        // Declared: refused before the body is sent.
        let declared = try #require(try RawConnection.request(s.address, "POST", "/", body: [UInt8](repeating: 65, count: 101)))
        #expect(declared.status == 413)
        #expect(declared.headers["content-type"] == "application/json")
        #expect(declared.body.contains("\"error\":\"too-large\",\"field\":\"body\""), Comment(rawValue: declared.body))
        // Chunked: counted as it arrives.
        let c = try RawConnection(to: s.address)
        let chunk = String(repeating: "a", count: 80)
        try c.send("POST / HTTP/1.1\r\nHost: t\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n50\r\n\(chunk)\r\n50\r\n\(chunk)\r\n0\r\n\r\n")
        let chunked = try #require(c.readToEnd().flatMap { String(decoding: $0, as: UTF8.self) })
        #expect(chunked.hasPrefix("HTTP/1.1 413"), Comment(rawValue: chunked))
        #expect(handled.withLock { $0 } == 0)
        // At the limit: handed on.
        #expect(try RawConnection.request(s.address, "POST", "/", body: [UInt8](repeating: 65, count: 100))?.status == 200)
    }

    @Test func oneAddressGetsNoMoreThanItsShareAndOthersAreStillAnswered() throws {
        let lines = Lines()
        let s = try server(.init(connectionsPerAddress: 4), lines: lines)
        defer { s.close() }
        let held = try (0..<10).map { _ in try RawConnection(to: s.address, from: "127.0.0.3") }
        // The first four are kept; the server closes the other six as they arrive.
        for c in held[4...] { #expect(c.closedByPeer(within: .seconds(30))) }
        for c in held[..<4] { #expect(!c.closedByPeer(within: .milliseconds(50))) }
        #expect(s.openConnections == 4)
        for _ in 0..<5 {
            #expect(try RawConnection.request(s.address, "GET", "/healthz", from: "127.0.0.4")?.status == 200)
        }
        // libmicrohttpd's message is in the log as JSON, once for the six refusals.
        let refusals = lines.all.filter { $0.contains("\"event\":\"http-server\"") }
        #expect(refusals.count == 1, Comment(rawValue: lines.all.joined()))
        for line in lines.all {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] as? String == "warn", Comment(rawValue: line))
        }
    }

    @Test func pastTheConnectionLimitANewClientWaitsForAFreeConnection() throws {
        let s = try server(.init(connections: 5, connectionsPerAddress: 100))
        defer { s.close() }
        var held = try (0..<5).map { _ in try RawConnection(to: s.address) }
        try waitUntil("five connections open") { s.openConnections == 5 }
        let sixth = try RawConnection(to: s.address)
        try sixth.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(s.openConnections == 5)
        held.removeFirst().close()
        let answer = try #require(sixth.readToEnd().flatMap { String(decoding: $0, as: UTF8.self) })
        #expect(answer.hasPrefix("HTTP/1.1 200"), Comment(rawValue: answer))
    }

    @Test func aClientTricklingItsRequestIsClosedButAHandlerTakingLongIsNot() throws {
        let release = DispatchSemaphore(value: 0)
        let s = try server(.init(idleTimeout: .seconds(30), exchangeTimeout: .seconds(1))) { request, responder in
            guard request.path == "/slow" else { return responder.respond(.init(body: "ok\n")) }
            DispatchQueue.global().async { release.wait(); responder.respond(.init(body: "late\n")) }
        }
        defer { s.close() }
        let slow = try RawConnection(to: s.address)
        try slow.send("GET /slow HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let trickler = try RawConnection(to: s.address)
        let started = ContinuousClock.now
        var closed = false
        // One byte every 100 ms never lets the idle timeout fire; the exchange limit closes it.
        for byte in Array("GET /healthz HTTP/1.1\r\nHost: trickle\r\n".utf8).cycled(400) {
            if (try? trickler.send([byte])) == nil || trickler.closedByPeer(within: .milliseconds(100)) { closed = true; break }
        }
        #expect(closed)
        #expect(ContinuousClock.now - started >= .seconds(1))
        // The slow handler's connection was waiting on Usher, not on its client: still open.
        release.signal()
        let late = try #require(slow.readToEnd().flatMap { String(decoding: $0, as: UTF8.self) })
        #expect(late.hasSuffix("late\n"), Comment(rawValue: late))
    }

    @Test func anIdleConnectionIsClosed() throws {
        let s = try server(.init(idleTimeout: .seconds(1)))
        defer { s.close() }
        let idle = try RawConnection(to: s.address)
        #expect(idle.closedByPeer(within: .seconds(30)))
    }

    @Test func closingAnswersTheRequestsStillWaitingWith503() throws {
        let handed = Locked(0)
        let s = try server { _, _ in handed.withLock { $0 += 1 } }   // never answers
        let waiting = try (0..<3).map { _ in try RawConnection(to: s.address) }
        for c in waiting { try c.send("POST /v1/messages HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}") }
        try waitUntil("three requests handed on") { handed.withLock { $0 } == 3 }
        // Suspended connections must all be resumed before libmicrohttpd stops, or it aborts.
        s.close()
        for c in waiting {
            let text = c.readToEnd().map { String(decoding: $0, as: UTF8.self) } ?? ""
            #expect(text.hasPrefix("HTTP/1.1 503"), Comment(rawValue: text))
        }
    }

    @Test func getOnlyServersRefuseOtherMethods() throws {
        let s = try HTTPServer(address: "127.0.0.1:0", log: Logger(sink: { _ in })) { path in .init(body: path) }
        defer { s.close() }
        #expect(try RawConnection.request(s.address, "GET", "/healthz")?.body == "/healthz")
        let post = try #require(try RawConnection.request(s.address, "POST", "/healthz", body: [1]))
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
    }
}

extension Array {
    /// The elements repeated until there are `count`.
    func cycled(_ count: Int) -> [Element] { (0..<count).map { self[$0 % self.count] } }
}

/// Waits for `condition` on this thread (synchronous tests).
func waitUntil(_ what: String, timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
               _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return }
        Thread.sleep(forTimeInterval: 0.02)
    }
    if try condition() { return }
    Issue.record("timed out after \(timeout) waiting for: \(what)", sourceLocation: sourceLocation)
}
