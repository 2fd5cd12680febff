import Foundation
import Testing
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherTestSupport
import UsherWebhook

let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let supportBot = repo.appendingPathComponent("bots/support").path

/// The webhook store with a worker and a backend on loopback: real sockets, a real worker (a
/// system test).
@Suite("Webhook store", .serialized)
struct WebhookStoreTests {
    /// Every inbound message decided, and every call made.
    func settled(_ store: WebhookStore, bot: String = "support") async throws -> Bool {
        let decided = try await store.pending(bot: bot, after: .start, limit: 1).messages.isEmpty
        let waiting = try await store.database.outboxCount(channel: WebhookStore.channel)
        return decided && waiting == 0
    }

    @Test func theSeedConversationThroughTheWebhook() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend)
        let address = try #require(store.listenAddress)
        try await withWebhookWorker(store, bot: supportBot) { _ in
            for (i, text) in ["hello", "are you there", "???", "still nothing"].enumerated() {
                let r = try await backend.post(address, line("c1", "m\(i + 1)", text, name: "Pooja"))
                #expect(r.status == 202, Comment(rawValue: r.body))
                #expect(r.body == #"{"messages":[{"id":"m\#(i + 1)","conversation":"c1","status":"accepted"}]}"# + "\n")
            }
            try await eventually("the handoff's calls") { backend.calls.contains { $0.json["type"] == "notification" } }
            try await eventually("settled") { try await settled(store) }
            let calls = backend.calls
            #expect(calls.map { $0.json["type"] ?? "?" } == ["reply", "reply", "reply", "system", "handoff", "notification"])
            #expect(calls.filter { $0.json["type"] == "reply" }.map { $0.json["text"] ?? "" } == [
                "Hi there! How can we assist you today?", "Thanks for reaching out—we're here to help.",
                "One moment while we review your request..."])
            #expect(calls.first { $0.json["type"] == "handoff" }?.json["reason"] == "threshold")
            #expect(calls.allSatisfy { $0.signed && !$0.key.isEmpty && $0.key == $0.json["key"] })
            #expect(Set(calls.map(\.key)).count == calls.count)

            // An agent writes: the bot says nothing more.
            #expect(try await backend.post(address, line("c1", "a1", "Hi Pooja, Sam here.", from: "agent")).status == 202)
            #expect(try await backend.post(address, line("c1", "m5", "thanks Sam")).status == 202)
            try await eventually("settled") { try await settled(store) }
            #expect(backend.calls.count == calls.count)
            let t = try await store.transcript(conversation: "c1")
            #expect(t.filter { $0.from == .customer }.count == 5)
            #expect(t.filter { $0.from == .bot || $0.from == .system }.count == 4)
            #expect(t.drop { $0.from != .agent }.allSatisfy { $0.from == .agent || $0.from == .customer }, "nothing after the agent")
        }
    }

    /// A decision's tag changes are a `tags` call after its reply, once each.
    @Test func tagChangesAreCalls() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend)
        let address = try #require(store.listenAddress)
        let bot = try temporaryBot("""
            version: 1
            rules:
              - id: order
                when: {keywords: [order]}
                then: [reply: "Noted.", tag: order, untag: new]
              - id: hello
                when: {customer_messages: {at_least: 1}}
                then: [reply: "Hi!", tag: new]
            """)
        defer { try? FileManager.default.removeItem(at: bot) }
        try await withWebhookWorker(store, bot: bot.path) { _ in
            #expect(try await backend.post(address, line("c1", "m1", "hello")).status == 202)
            #expect(try await backend.post(address, line("c1", "m2", "my order")).status == 202)
            try await eventually("the second tags call") { backend.calls.filter { $0.json["type"] == "tags" }.count == 2 }
            try await eventually("settled") { try await settled(store, bot: "temp") }
            let calls = backend.calls
            #expect(calls.map { $0.json["type"] ?? "?" } == ["reply", "tags", "reply", "tags"])
            let tags = calls.filter { $0.json["type"] == "tags" }
            #expect(tags.map(\.key) == ["temp:m1:tags", "temp:m2:tags"])
            #expect(tags[0].body.hasSuffix(#""bot":"temp","message_id":"m1","added":["new"],"removed":[]}"#), Comment(rawValue: tags[0].body))
            #expect(tags[1].body.hasSuffix(#""message_id":"m2","added":["order"],"removed":["new"]}"#), Comment(rawValue: tags[1].body))
            #expect(calls.allSatisfy { $0.signed })
        }
    }

    /// The conversation's language, once a message told it, is in its state on the listener.
    @Test func theConversationShowsItsLanguage() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend)
        let address = try #require(store.listenAddress)
        let bot = try temporaryBot("""
            version: 1
            rules:
              - id: refund
                when: {keywords: [refund, reembolso]}
                then: [reply: {en: "I can help with refunds.", es: "Puedo ayudarle con el reembolso."}]
            """)
        defer { try? FileManager.default.removeItem(at: bot) }
        try "bot: temp\nname: Temp\nrules: [rules.yaml]\nlanguage: [en, es]\n".write(to: bot.appendingPathComponent("bot.yaml"), atomically: true, encoding: .utf8)
        try await withWebhookWorker(store, bot: bot.path) { _ in
            #expect(try await backend.post(address, line("c1", "m1", "quiero un reembolso")).status == 202)
            try await eventually("settled") { try await settled(store, bot: "temp") }
            #expect(backend.calls.map { $0.json["text"] ?? "" } == ["Puedo ayudarle con el reembolso."])
            let c = try await backend.get(address, "/v1/conversations/c1")
            #expect(c.body.contains(#""tags":[],"language":"es","#), Comment(rawValue: c.body))
        }
    }

    @Test func refusedRequestsGetTheirStatusAndNothingIsStored() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend, limits: .init(maxBodyBytes: 1_000))
        let address = try #require(store.listenAddress)
        let good = line("c1", "m1", "hello")
        func expect(_ r: (status: Int, body: String), _ status: Int, _ field: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(r.status == status, Comment(rawValue: r.body), sourceLocation: sourceLocation)
            #expect(r.body.contains("\"field\":\"\(field)\""), Comment(rawValue: r.body), sourceLocation: sourceLocation)
        }
        expect(try await backend.post(address, good, signedBy: WebhookSigner(secret: Array("wrong".utf8))), 401, "X-Usher-Signature")
        expect(try await backend.post(address, good, signedBy: nil), 401, "X-Usher-Timestamp")
        expect(try await backend.post(address, good, at: Date().addingTimeInterval(-301)), 401, "X-Usher-Timestamp")
        expect(try await backend.post(address, line("c1", "m1", String(repeating: "x", count: 2_000))), 413, "body")
        expect(try await backend.post(address, "{\"conversation\":\"c1\",\"id\":\"m1\",\"text\":\"hi\""), 400, "body")
        expect(try await backend.post(address, #"{"conversation":"c1","id":"m1"}"#), 400, "text")
        expect(try await backend.post(address, good, contentType: "text/plain"), 415, "Content-Type")
        #expect(try await backend.post(address, good, path: "/v1/other").status == 404)
        #expect(try await store.latestSeq() == 0)
        #expect(try await store.transcript(conversation: "c1").isEmpty)
        // The same request, right: taken.
        #expect(try await backend.post(address, good).status == 202)
        #expect(try await store.latestSeq() == 1)
        try await store.close()
    }

    @Test func theSameMessageAgainIsTakenOnceAndDecidedOnce() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend)
        let address = try #require(store.listenAddress)
        try await withWebhookWorker(store, bot: supportBot) { _ in
            #expect(try await backend.post(address, line("c1", "m1", "hello")).status == 202)
            let again = try await backend.post(address, line("c1", "m1", "hello"))
            #expect(again.status == 200)
            #expect(again.body.contains("\"status\":\"duplicate\""))
            let both = try await backend.post(address, "[\(line("c1", "m1", "hello")),\(line("c1", "m2", "more")),\(line("c1", "m2", "more"))]")
            #expect(both.status == 202)
            #expect(both.body.contains(#"{"id":"m1","conversation":"c1","status":"duplicate"},{"id":"m2","conversation":"c1","status":"accepted"},{"id":"m2","conversation":"c1","status":"duplicate"}"#),
                    Comment(rawValue: both.body))
            try await eventually("settled") { try await settled(store) }
            #expect(backend.calls.filter { $0.json["type"] == "reply" }.count == 2)
            #expect(try await store.transcript(conversation: "c1").filter { $0.from == .customer }.count == 2)
        }
    }

    @Test func failedCallsAreRetriedInOrderAndRefusedOnesBecomeDeadLetters() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend)
        let address = try #require(store.listenAddress)
        try await withWebhookWorker(store, bot: supportBot) { worker in
            backend.fail(next: [503, 500, 429])
            for (i, text) in ["hello", "are you there", "???"].enumerated() {
                #expect(try await backend.post(address, line("c1", "m\(i + 1)", text)).status == 202)
            }
            try await eventually("three replies") { backend.calls.count == 3 }
            #expect(backend.calls.map { $0.json["text"] ?? "" } == ["Hi there! How can we assist you today?",
                                                                     "Thanks for reaching out—we're here to help.",
                                                                     "One moment while we review your request..."])
            #expect(backend.received == 6)
            #expect(worker.metrics.value("usher_webhook_deliveries_total", ["result": "retried"]) == 3)

            // Refused: a dead letter at once, and the conversation goes on without it.
            backend.fail(next: [422])
            #expect(try await backend.post(address, line("c2", "n1", "hello")).status == 202)
            #expect(try await backend.post(address, line("c2", "n2", "again")).status == 202)
            try await eventually("settled") { try await settled(store) }
            let letters = try await store.deadLetters()
            #expect(letters.map(\.conversation) == ["c2"])
            #expect(letters.first?.status == 422)
            #expect(letters.first?.attempts == 1)
            #expect(backend.calls.last?.json["conversation"] == "c2")
            #expect(worker.metrics.value("usher_webhook_deadletters_total") == 1)

            // Sent again: delivered, and no longer a dead letter.
            let resent = try await store.resend(letters)
            #expect(resent.map(\.delivered) == [true])
            #expect(try await store.deadLetters().isEmpty)
            #expect(backend.calls.last?.key == letters.first?.key)
        }
    }

    @Test func aCallOutOfAttemptsBecomesADeadLetter() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend, attempts: 3)
        let address = try #require(store.listenAddress)
        try await withWebhookWorker(store, bot: supportBot) { _ in
            backend.down(503)
            #expect(try await backend.post(address, line("c1", "m1", "hello")).status == 202)
            try await eventually("a dead letter") { try await !store.deadLetters().isEmpty }
            let letter = try #require(try await store.deadLetters().first)
            #expect(letter.attempts == 3)
            #expect(letter.status == 503)
            #expect(backend.received == 3)
            backend.down(nil)
            #expect(try await store.resend([letter]).map(\.delivered) == [true])
            #expect(backend.calls.map(\.key) == [letter.key])
        }
    }

    @Test func theConversationAndTheHealthOfTheWorkerOnTheListener() async throws {
        let backend = try Backend()
        defer { backend.close() }
        let store = try await webhookStore(backend)
        let address = try #require(store.listenAddress)
        try await withWebhookWorker(store, bot: supportBot) { worker in
            for (i, text) in ["hello", "are you there", "???", "still nothing"].enumerated() {
                #expect(try await backend.post(address, line("c1", "m\(i + 1)", text, name: "Pooja")).status == 202)
            }
            try await eventually("settled") { try await settled(store) }
            let c = try await backend.get(address, "/v1/conversations/c1")
            #expect(c.status == 200)
            let bot = try #require(c.body.range(of: "\"bots\":[{").map { String(c.body[$0.upperBound...]) })
            #expect(bot.hasPrefix(#""bot":"support","owner":"waiting","session":1,"customer_messages":4,"bot_replies":3,"#), Comment(rawValue: c.body))
            #expect(bot.contains(#""waiting_since":""#) && bot.contains(#""queue":"general","reason":"threshold""#), Comment(rawValue: c.body))
            #expect(try await backend.get(address, "/v1/conversations/nobody").status == 404)
            #expect(try await backend.get(address, "/v1/conversations/c1", signedBy: nil).status == 401)
            // A read's signature is for its path: captured, it reads no other conversation.
            let replayed = try await backend.get(address, "/v1/conversations/c2", signedPath: "/v1/conversations/c1")
            #expect(replayed.status == 401 && replayed.body.contains("X-Usher-Signature"), Comment(rawValue: replayed.body))

            try await eventually("ready") { worker.isReady }
            #expect(try await backend.get(address, "/healthz", signedBy: nil) == (200, "ok\n"))
            #expect(try await backend.get(address, "/readyz", signedBy: nil) == (200, "ready\n"))
            let metrics = try await backend.get(address, "/metrics", signedBy: nil).body
            #expect(metrics.contains("usher_webhook_messages_total{result=\"accepted\"} 4"), Comment(rawValue: metrics))
            #expect(metrics.contains("usher_replies_total{bot=\"support\",rule="))
            // Every family on the page is described: a HELP and a TYPE line before its samples.
            let families = Set(metrics.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                return ["_bucket", "_sum", "_count"].first { name.hasSuffix($0) && metrics.contains("# TYPE \(name.dropLast($0.count)) histogram") }
                    .map { String(name.dropLast($0.count)) } ?? name
            })
            for family in families.sorted() {
                #expect(metrics.contains("# HELP \(family) ") && metrics.contains("# TYPE \(family) "), "no HELP/TYPE for \(family)")
            }
        }
    }
}
