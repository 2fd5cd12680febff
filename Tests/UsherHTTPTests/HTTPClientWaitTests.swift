import Foundation
import Synchronization
import Testing
import UsherHTTP
import UsherHTTPTestServer
import UsherTestSupport

/// A server whose handler holds each request until the test lets go (`release`), and says how
/// many it holds.
private final class HeldServer: Sendable {
    private final class Hold: Sendable {
        let state = Mutex((held: 0, released: false))
    }

    let server: LoopbackHTTPServer
    private let hold = Hold()

    init() throws {
        let hold = hold
        server = try LoopbackHTTPServer { _ in
            hold.state.withLock { $0.held += 1 }
            // Bounded, so that a failing test still ends.
            let deadline = Date().addingTimeInterval(20)
            while !hold.state.withLock({ $0.released }), Date() < deadline { usleep(2000) }
            return .json("{\"late\":true}")
        }
    }

    var held: Int { hold.state.withLock { $0.held } }
    func release() { hold.state.withLock { $0.released = true } }
    func close() { release(); server.close() }
}

/// Requests that wait on a real timer or a held request: run with the system tests.
@Suite struct HTTPClientWaitTests {
    @Test func requestTimesOut() async throws {
        let held = try HeldServer()
        defer { held.close() }
        let client = HTTPClient(timeout: .seconds(60))
        defer { client.close() }
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: held.server.baseURL + "/slow?key=secret", timeout: .milliseconds(300)))
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.message.contains("127.0.0.1:\(held.server.port)") == true)
        #expect(error?.message.contains("secret") == false)
        // The request's own timeout, not the client's minute.
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func closingFailsTransfersUnderWay() async throws {
        let held = try HeldServer()
        defer { held.close() }
        let client = HTTPClient(connections: 1)
        let first = Task { try await client.send(HTTPRequest(url: held.server.baseURL + "/a")) }
        // Queued behind the first: the client has one connection.
        let second = Task { try await client.send(HTTPRequest(url: held.server.baseURL + "/b")) }
        try await eventually("the server holds the first request") { held.held == 1 }
        client.close()
        for task in [first, second] {
            let result = await task.result
            #expect(throws: HTTPError.self) { try result.get() }
            if case let .failure(error as HTTPError) = result { #expect(error.kind == .failed) }
        }
    }

    /// Cancelling the caller neither aborts the transfer nor leaks its continuation: the call
    /// returns the answer once it comes.
    @Test func cancelledCallerGetsItsAnswer() async throws {
        let held = try HeldServer()
        defer { held.close() }
        let client = HTTPClient()
        defer { client.close() }
        let task = Task { try await client.send(HTTPRequest(url: held.server.baseURL + "/c")) }
        try await eventually("the server holds the request") { held.held == 1 }
        task.cancel()
        held.release()
        let response = try await task.value
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"late\":true}")
    }
}
