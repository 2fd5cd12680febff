import Foundation
import Testing
import UsherHTTP
import UsherHTTPTestServer
import UsherSQLite
import UsherStore
import UsherTestSupport
import UsherWebhook

/// `usher run --store webhook:…` as a real process, killed with SIGKILL at random points while a
/// backend posts messages and its receiver is down for stretches. Counted afterwards, at the
/// receiver, by `Idempotency-Key`.
@Suite("Webhook crash safety", .serialized)
struct WebhookCrashTests {
    static let secret = "crash-secret"
    static let conversations = 200, perConversation = 10, posters = 8

    /// What the receiver took: every call, in arrival order, and whether it is down.
    final class Receiver: @unchecked Sendable {
        // @unchecked: `state` is behind its lock.
        struct Call { var key: String; var conversation: String; var type: String; var text: String }
        private let state = Locked((calls: [Call](), down: false, refused: 0))
        private(set) var server: LoopbackHTTPServer!

        init() throws {
            let state = state
            let signer = WebhookSigner(secret: Array(WebhookCrashTests.secret.utf8))
            server = try LoopbackHTTPServer { request in
                if state.withLock({ s in if s.down { s.refused += 1 }; return s.down }) { return .json(#"{"down":true}"#, status: 503) }
                let headers = Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
                guard (try? signer.check(body: request.body, headers: headers, now: Date())) != nil else {
                    return .json(#"{"error":"bad signature"}"#, status: 401)
                }
                let json = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] ?? [:]
                let call = Call(key: request.header("Idempotency-Key") ?? "", conversation: json["conversation"] as? String ?? "",
                                type: json["type"] as? String ?? "", text: json["text"] as? String ?? "")
                state.withLock { $0.calls.append(call) }
                return .json(#"{"ok":true}"#)
            }
        }

        var calls: [Call] { state.withLock { $0.calls } }
        var refused: Int { state.withLock { $0.refused } }
        func setDown(_ down: Bool) { state.withLock { $0.down = down } }
    }

    @Test func killNineWhileMessagesFlowAndTheReceiverIsDownForStretches() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let receiver = try Receiver()
        defer { receiver.server.close() }
        let state = scratch.dir.appendingPathComponent("state.db").path
        let address = "127.0.0.1:\(try Loopback.freePort())"
        func start() throws -> WorkerProcess {
            try WorkerProcess(bot: scratch.bot, store: "webhook:\(receiver.server.baseURL)/actions",
                              extra: ["--listen", address, "--state", state, "--attempts", "100000", "--max-backoff", "1s"],
                              environment: [WebhookStore.secretVariable: Self.secret])
        }

        let loop = try await KillLoop.run(start: start, setDown: receiver.setDown, refused: { receiver.refused }) {
            try await Self.post(to: address)
        }
        let (kills, stretches, worker) = (loop.kills, loop.stretches, loop.worker)

        // Every conversation's six calls: three replies, the handoff's notice, the handoff, the
        // agents' notification.
        let expected = Self.conversations * 6
        try await eventually("every call delivered", timeout: .seconds(180), detail: worker.log) {
            Set(receiver.calls.map(\.key)).count >= expected
        }
        let (status, _) = worker.terminate()
        #expect(status == 0, "SIGTERM: clean exit\n\(worker.log.suffix(2000))")
        #expect(kills >= 30)
        #expect(stretches > 0 && receiver.refused > 0, "the receiver was down for stretches")

        let calls = receiver.calls
        var firsts: [String: [Receiver.Call]] = [:]
        var seen = Set<String>()
        for call in calls where seen.insert(call.key).inserted { firsts[call.conversation, default: []].append(call) }
        #expect(seen.count == expected, "distinct calls: \(seen.count), expected \(expected)")
        var problems: [String] = []
        for c in 0..<Self.conversations {
            let got = firsts["c\(c)"] ?? []
            if got.map(\.type) != ["reply", "reply", "reply", "system", "handoff", "notification"] {
                problems.append("c\(c): \(got.map(\.type))")
            } else if got.prefix(3).map(\.text) != ["one", "two", "three"] {
                problems.append("c\(c): replies \(got.prefix(3).map(\.text))")
            }
        }
        #expect(problems.isEmpty, "\(problems.count) conversations wrong, first: \(problems.prefix(5))")
        print("webhook crash test: \(kills) kills, \(stretches) stretches down, \(calls.count) calls received for \(seen.count) keys "
              + "(\(calls.count - seen.count) repeated after a kill, deduplicated by Idempotency-Key)")

        // Nothing lost at the intake, nothing left behind.
        let store = try await SQLiteStore(path: state)
        for c in 0..<Self.conversations {
            let t = try await store.transcript(conversation: "c\(c)")
            #expect(t.filter { $0.from == .customer }.map(\.id) == (0..<Self.perConversation).map { "c\(c)-m\($0)" })
        }
        #expect(try await store.deadLetters(channel: WebhookStore.channel).isEmpty)
        #expect(try await store.outboxCount(channel: WebhookStore.channel) == 0)
        try await store.close()
    }

    /// Posts every conversation's messages in order — a message only once the one before it was
    /// acknowledged (202, or 200 when a retry finds it taken) — from several posters at once, each
    /// retrying what got no acknowledgement (a dead worker, a 503), as a backend would.
    static func post(to address: String) async throws {
        let client = HTTPClient(connections: posters, connectTimeout: .seconds(1), timeout: .seconds(5))
        defer { client.close() }
        let signer = WebhookSigner(secret: Array(secret.utf8))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for p in 0..<posters {
                group.addTask {
                    for k in 0..<perConversation {
                        for c in stride(from: p, to: conversations, by: posters) {
                            let body = Array(#"{"conversation":"c\#(c)","id":"c\#(c)-m\#(k)","text":"message \#(k)"}"#.utf8)
                            while true {
                                var request = HTTPRequest(method: "POST", url: "http://\(address)/v1/messages",
                                                          headers: [("Content-Type", "application/json")], body: body)
                                request.headers += signer.headers(body: body, at: Date())
                                if let r = try? await client.send(request), r.status == 200 || r.status == 202 { break }
                                try await Task.sleep(for: .milliseconds(20))
                            }
                        }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
