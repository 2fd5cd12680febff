import Foundation
import Testing
import UsherHTTP
import UsherRuntime
import UsherSQLite
import UsherStore
@testable import UsherWebhook

/// How an attempt's outcome is told (`Delivery.Outcome`), and the front door's say before it
/// (`FrontDoor.prepare`), without a network.
@Suite("Webhook delivery: outcomes and preparation")
struct DeliveryTests {
    /// Whether an attempt may have reached the backend decides whether the next one is a repeat.
    @Test(arguments: [
        (Result<HTTPResponse, HTTPError>.failure(HTTPError(kind: .timedOut, message: "timed out")), true),
        (.failure(HTTPError(kind: .failed, message: "connection reset")), true),
        (.failure(HTTPError(kind: .cannotConnect, message: "refused")), false),
        (.success(HTTPResponse(status: 500)), true),
        (.success(HTTPResponse(status: 503)), true),
        (.success(HTTPResponse(status: 429)), false),
        (.success(HTTPResponse(status: 408)), false),
    ])
    func anUnansweredOrFailedAttemptMayHaveReachedTheBackend(_ result: Result<HTTPResponse, HTTPError>, _ reached: Bool) {
        guard case let .failed(_, _, _, r) = Delivery.Outcome(result) else { Issue.record("not a failure"); return }
        #expect(r == reached)
        guard case let .failed(_, error, _, fromRead) = Delivery.Outcome(read: result) else { Issue.record("not a failure"); return }
        #expect(!fromRead, "a failed read sent nothing")
        #expect(error.hasPrefix("before the call: "))
    }

    @Test func aRefusedReadIsARefusal() {
        #expect(Delivery.Outcome(read: .success(HTTPResponse(status: 401, body: Array("no".utf8))))
                == .refused(status: 401, error: "before the call: HTTP 401: no"))
    }

    /// A front door that answers `prepare` as told, and counts it.
    struct Door: FrontDoor {
        let answer: Preparation
        let asked = Locked([Bool]())
        var channel: String { "test" }
        var intakePath: String { "/in" }
        func authenticate(_ request: HTTPServer.Request, now: Date) -> IntakeError? { nil }
        func messages(in request: HTTPServer.Request, now: Date) throws(IntakeError) -> [NewMessage] { [] }
        func calls(for actions: [StoreAction]) -> [OutboundCall] { [] }
        func authorize(_ request: inout HTTPRequest, now: Date) {}
        func prepare(_ call: OutboundCall, repeated: Bool, read: BackendRead) async -> Preparation {
            asked.withLock { $0.append(repeated) }
            return answer
        }
    }

    @Test func whatTheDoorSaysBeforeTheCallIsTheAttemptsOutcome() async {
        // No call is made: the client is never used.
        let client = HTTPClient(connections: 1, connectTimeout: .milliseconds(200), timeout: .seconds(1))
        defer { client.close() }
        let call = OutboundCall(body: "{}", key: "k", conversation: "c")
        func send(_ door: Door, repeated: Bool) async -> Delivery.Outcome {
            await Delivery.send(call, repeated: repeated, to: "http://127.0.0.1:9", through: client, door: door, timeout: .seconds(1),
                                clock: { Date() })
        }
        let settled = Door(answer: .settled("it is there"))
        #expect(await send(settled, repeated: true) == .settled("it is there"))
        #expect(settled.asked.withLock { $0 } == [true])
        let refused = Door(answer: .failed(.success(HTTPResponse(status: 404))))
        #expect(await send(refused, repeated: false) == .refused(status: 404, error: "before the call: HTTP 404"))
    }
}
