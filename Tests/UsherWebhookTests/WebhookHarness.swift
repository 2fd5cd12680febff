import Foundation
import Testing
import UsherHTTP
import UsherHTTPTestServer
import UsherJSON
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherTestSupport
import UsherWebhook

let secret = Array("test-secret".utf8)
let signer = WebhookSigner(secret: secret)

/// The backend's side of a webhook test: a receiver of Usher's calls on loopback, which records
/// what it takes (and can refuse or fail calls), and a client posting messages, signed.
final class Backend: @unchecked Sendable {
    // @unchecked: `state` is behind its lock; the rest is set in init.
    struct Call: Sendable {
        var key: String
        var json: [String: String]
        var signed: Bool
        /// The body as sent.
        var body: String
    }

    struct State {
        var calls: [Call] = []
        /// Answer the next calls with these statuses (then 200).
        var script: [Int] = []
        /// Answer every call with this status while set (a receiver that is down).
        var down: Int?
        var received = 0
    }

    let receiver: LoopbackHTTPServer
    let client = HTTPClient(connections: 4, timeout: .seconds(30))
    private let state = Locked(State())

    init() throws {
        let state = state
        receiver = try LoopbackHTTPServer { request in
            let status: Int = state.withLock { s in
                s.received += 1
                if let down = s.down { return down }
                return s.script.isEmpty ? 200 : s.script.removeFirst()
            }
            if (200..<300).contains(status) {
                let headers = Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
                let signed = (try? signer.check(body: request.body, headers: headers, now: Date())) != nil
                let json = Backend.flat(request.body)
                state.withLock { $0.calls.append(Call(key: request.header("Idempotency-Key") ?? "", json: json, signed: signed,
                                                       body: String(decoding: request.body, as: UTF8.self))) }
            }
            return .json(#"{"ok":true}"#, status: status)
        }
    }

    var callbackURL: String { receiver.baseURL + "/usher/actions" }
    var calls: [Call] { state.withLock { $0.calls } }
    var received: Int { state.withLock { $0.received } }
    func fail(next statuses: [Int]) { state.withLock { $0.script = statuses } }
    func down(_ status: Int?) { state.withLock { $0.down = status } }

    func close() {
        client.close()
        receiver.close()
    }

    /// A JSON object's string, number and boolean members, as text.
    static func flat(_ body: [UInt8]) -> [String: String] {
        guard let value = try? body.withUnsafeBufferPointer({ b throws(JSONError) in try JSONReader.parse(b) }),
              case let .object(members) = value.kind else { return [:] }
        var out: [String: String] = [:]
        for (k, v) in members {
            switch v.kind {
            case let .string(s): out[k] = s
            case let .number(n): out[k] = n
            case let .bool(b): out[k] = String(b)
            default: break
            }
        }
        return out
    }

    /// POSTs `body` to the webhook at `address`; its status and body.
    func post(_ address: String, _ body: String, path: String = "/v1/messages", signedBy: WebhookSigner? = signer,
              at time: Date = Date(), contentType: String = "application/json") async throws -> (status: Int, body: String) {
        var headers: [(name: String, value: String)] = [("Content-Type", contentType)]
        if let signedBy { headers += signedBy.headers(body: Array(body.utf8), at: time) }
        let r = try await client.send(HTTPRequest(method: "POST", url: "http://\(address)\(path)", headers: headers, body: Array(body.utf8)))
        return (r.status, String(decoding: r.body, as: UTF8.self))
    }

    /// GETs `path`, signed for `signedPath` (a test of a signature used for another read), else for it.
    func get(_ address: String, _ path: String, signedBy: WebhookSigner? = signer, signedPath: String? = nil) async throws
        -> (status: Int, body: String) {
        let headers = signedBy?.headers(method: "GET", path: signedPath ?? path, body: [], at: Date()) ?? []
        let r = try await client.send(HTTPRequest(url: "http://\(address)\(path)", headers: headers))
        return (r.status, String(decoding: r.body, as: UTF8.self))
    }
}

/// A webhook store on a fresh state file, listening on a free loopback port, calling `backend`.
func webhookStore(_ backend: Backend, path: String? = nil, attempts: Int = 12, backoff: Duration = .milliseconds(200),
                  limits: HTTPServer.Limits = .init()) async throws -> WebhookStore {
    var options = WebhookStore.Options(callbackURL: backend.callbackURL, listen: "127.0.0.1:0")
    options.deliveryAttempts = attempts
    options.firstBackoff = .milliseconds(20)
    options.longestBackoff = backoff
    options.limits = limits
    let file = path ?? FileManager.default.temporaryDirectory.appendingPathComponent("usher-webhook-\(UUID().uuidString).db").path
    return try await WebhookStore(database: try await SQLiteStore(path: file), door: MessagesAPI(signer: signer), options: options)
}

/// Runs `body` with a worker on `store` (served by it), then stops the worker and closes the store.
func withWebhookWorker(_ store: WebhookStore, bot path: String, _ body: (Worker) async throws -> Void) async throws {
    var options = Worker.Options()
    options.idleWait = .milliseconds(20)
    let worker = Worker(store: store, bots: [try BotRuntime(path: path)], workerID: "w1", options: options, log: Logger(minimum: .error))
    store.serve(worker)
    let task = Task { try await worker.run() }
    do {
        try await body(worker)
    } catch {
        worker.requestStop()
        _ = try? await task.value
        try? await store.close()
        throw error
    }
    worker.requestStop()
    try await task.value
    try await store.close()
}

/// One message of the transcript line format, as JSON.
func line(_ conversation: String, _ id: String, _ text: String, from: String = "customer", at: String = "2026-11-30T02:00:00Z",
          name: String? = nil) -> String {
    var w = JSONWriter()
    w.byte(UInt8(ascii: "{"))
    w.key("conversation", first: true); w.string(conversation)
    w.key("id"); w.string(id)
    w.key("from"); w.string(from)
    w.key("text"); w.string(text)
    w.key("at"); w.string(at)
    if let name { w.key("sender_name"); w.string(name) }
    w.byte(UInt8(ascii: "}"))
    return String(decoding: w.bytes, as: UTF8.self)
}
