import Foundation
import Testing
import UsherChatwootStandIn
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherTestSupport
import UsherWebhook

/// A Chatwoot store (the webhook store with Chatwoot's agent-bot protocol as its front door) on a
/// fresh state file, listening on loopback, with the stand-in for Chatwoot wired to it both ways.
/// `chatwoot` and `path`: another process on the same stand-in and state file.
func chatwootStore(teams: String = "general=5", attempts: Int = 12, callTimeout: Duration = .seconds(5),
                   chatwoot given: ChatwootStandIn? = nil, path: String? = nil, listen: String = "127.0.0.1:0")
    async throws -> (WebhookStore, ChatwootStandIn) {
    let chatwoot = try given ?? ChatwootStandIn()
    var options = WebhookStore.Options(callbackURL: chatwoot.baseURL, listen: listen)
    options.deliveryAttempts = attempts
    options.firstBackoff = .milliseconds(20)
    options.longestBackoff = .milliseconds(200)
    options.callTimeout = callTimeout
    let file = path ?? FileManager.default.temporaryDirectory.appendingPathComponent("usher-chatwoot-\(UUID().uuidString).db").path
    let door = ChatwootAgentBot(signer: .chatwoot(secret: Array(chatwoot.secret.utf8)), token: chatwoot.token,
                                teams: try ChatwootAgentBot.Teams(parsing: teams))
    let store = try await WebhookStore(database: try await SQLiteStore(path: file), door: door, options: options)
    chatwoot.webhookURL = "http://\(try #require(store.listenAddress))/chatwoot/webhook"
    return (store, chatwoot)
}

/// The Chatwoot store with a worker and the stand-in on loopback: real sockets, a real worker (a
/// system test).
@Suite("Chatwoot store", .serialized)
struct ChatwootStoreTests {
    static let opening = ["Hi there! How can we assist you today?", "Thanks for reaching out—we're here to help.",
                          "One moment while we review your request..."]
    static let notice = "Thanks for your question! We're connecting you to a support agent now."

    /// Every inbound message decided, and every call made.
    func settled(_ store: WebhookStore) async throws -> Bool {
        let decided = try await store.pending(bot: "support", after: .start, limit: 1).messages.isEmpty
        let waiting = try await store.database.outboxCount(channel: store.channel)
        return decided && waiting == 0
    }

    /// What the bot wrote in a conversation, in order: text and whether private.
    func written(_ chatwoot: ChatwootStandIn, _ display: Int) -> [(text: String, private: Bool, key: String?)] {
        (chatwoot.conversation(display)?.messages ?? []).filter { $0.sender == .bot }.map { ($0.content ?? "", $0.isPrivate, $0.usherKey) }
    }

    @Test func theSeedConversationThroughChatwoot() async throws {
        let (store, chatwoot) = try await chatwootStore()
        defer { chatwoot.close() }
        try await withWebhookWorker(store, bot: supportBot) { worker in
            let c = chatwoot.startConversation(contact: "Pooja")
            for text in ["hello", "are you there", "???", "still nothing"] { try await chatwoot.customerWrites(c, text) }
            try await eventually("the handoff") { chatwoot.conversation(c)?.status == "open" }
            try await eventually("settled") { try await settled(store) }

            let bot = written(chatwoot, c)
            #expect(bot.map(\.text) == Self.opening + [Self.notice,
                    "Usher (support) handed this conversation to agents: threshold (queue general, rule threshold, customer Pooja)."])
            #expect(bot.map(\.private) == [false, false, false, false, true])
            #expect(Set(bot.compactMap(\.key)).count == 5, "each marked with its own key")
            let conversation = try #require(chatwoot.conversation(c))
            #expect(conversation.handoffs == 1)
            #expect(conversation.teamID == 5, "the queue's team")
            let paths = chatwoot.calls.map { "\($0.method) \($0.path.split(separator: "/").last ?? "")" }
            #expect(paths.filter { $0 != "POST messages" } == ["POST assignments", "POST toggle_status"], "\(paths)")
            #expect(chatwoot.calls.allSatisfy { $0.status == 200 })

            // An agent writes: the bot says nothing more, and Usher's own echoes changed nothing.
            try await chatwoot.agentWrites(c, "Hi Pooja, Sam here.")
            try await chatwoot.customerWrites(c, "thanks Sam")
            try await eventually("settled") { try await settled(store) }
            #expect(written(chatwoot, c).count == 5)
            let t = try await store.transcript(conversation: ChatwootStandIn.usherID(c))
            #expect(t.filter { $0.from == .customer }.map(\.text) == ["hello", "are you there", "???", "still nothing", "thanks Sam"])
            #expect(t.filter { $0.from == .agent }.map(\.text) == ["Hi Pooja, Sam here."])
            #expect(t.filter { $0.from == .bot || $0.from == .system }.count == 4, "the bot's echoes are not taken in again")
            #expect(worker.metrics.value("usher_webhook_messages_total", ["result": "accepted"]) == 6)
        }
    }

    /// Chatwoot made the message but its answer came after the client's timeout: its echo (the
    /// webhook of the bot's own message, with the marker) settles the repeat, with no call.
    @Test func aTimeoutAfterTheMessageWasMadeIsAnsweredOnce() async throws {
        let (store, chatwoot) = try await chatwootStore(callTimeout: .milliseconds(500))
        defer { chatwoot.close() }
        try await withWebhookWorker(store, bot: supportBot) { worker in
            let c = chatwoot.startConversation(contact: "Pooja")
            chatwoot.stallCreating(next: 1, for: .seconds(2))
            try await chatwoot.customerWrites(c, "hello")
            try await eventually("settled") { try await settled(store) }
            #expect(written(chatwoot, c).map(\.text) == [Self.opening[0]])
            #expect(worker.metrics.value("usher_webhook_deliveries_total", ["result": "settled"]) == 1)
            let calls = chatwoot.calls.map { "\($0.method) \($0.path)" }
            #expect(calls == ["POST /api/v1/accounts/1/conversations/\(c)/messages"], "one message made; its echo settles the repeat")

            // A 500 (made or not: not here) is checked too, and the message made then.
            chatwoot.fail(next: 1, status: 500)
            try await chatwoot.customerWrites(c, "are you there")
            try await eventually("settled") { try await settled(store) }
            #expect(written(chatwoot, c).map(\.text) == Array(Self.opening.prefix(2)))
            #expect(chatwoot.calls.dropFirst(1).map { "\($0.method) \($0.status)" } == ["POST 500", "GET 200", "POST 200"])
        }
    }

    /// A call left in the outbox by a process that stopped may have been under way: the next
    /// process checks before it makes it (here it was not made: then it is).
    @Test func aCallLeftInTheOutboxIsCheckedByTheNextProcess() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("usher-chatwoot-\(UUID().uuidString).db").path
        let (first, chatwoot) = try await chatwootStore(path: path)
        defer { chatwoot.close() }
        let address = try #require(first.listenAddress)
        let c = chatwoot.startConversation(contact: "Pooja")
        chatwoot.setDown(true)
        try await withWebhookWorker(first, bot: supportBot) { _ in
            try await chatwoot.customerWrites(c, "hello")
            try await eventually("a call refused") { chatwoot.refusedWhileDown > 0 }
        }
        #expect(written(chatwoot, c).isEmpty)
        chatwoot.setDown(false)
        let before = chatwoot.calls.count
        // On the same address: the delivery lease is this worker's again at once.
        let (second, _) = try await chatwootStore(chatwoot: chatwoot, path: path, listen: address)
        try await withWebhookWorker(second, bot: supportBot) { _ in
            try await eventually("settled") { try await settled(second) }
        }
        #expect(chatwoot.calls.dropFirst(before).map { "\($0.method) \($0.status)" } == ["GET 200", "POST 200"])
        #expect(written(chatwoot, c).map(\.text) == [Self.opening[0]])
    }

    @Test func theSameWebhookTwiceIsDecidedOnce() async throws {
        let (store, chatwoot) = try await chatwootStore()
        defer { chatwoot.close() }
        try await withWebhookWorker(store, bot: supportBot) { _ in
            let c = chatwoot.startConversation(contact: "Pooja")
            let id = try await chatwoot.customerWrites(c, "hello")
            #expect(try await chatwoot.deliverAgain(c, message: id) == 200, "taken already: 200, not 202")
            try await chatwoot.customerWrites(c, "are you there")
            #expect(try await chatwoot.deliverAgain(c, message: id) == 200)
            try await eventually("settled") { try await settled(store) }
            #expect(written(chatwoot, c).map(\.text) == Array(Self.opening.prefix(2)))
            #expect(try await store.transcript(conversation: ChatwootStandIn.usherID(c)).filter { $0.from == .customer }.count == 2)
        }
    }

    /// A reply's buttons reach Chatwoot as an `input_select` message (the stand-in refuses items
    /// with keys Chatwoot's validator refuses), its links as Markdown under the text; a button
    /// pressed in the widget (the select updated, `message_updated`) is the customer's message,
    /// answered once however often the update comes.
    @Test func quickRepliesBecomeAnInputSelect() async throws {
        let (store, chatwoot) = try await chatwootStore()
        defer { chatwoot.close() }
        let bot = try temporaryBot("""
            version: 1
            rules:
              - id: track
                when: {keywords: [track]}
                then: [reply: "Your order ships tomorrow."]
              - id: menu
                when: {customer_messages: {at_least: 1}}
                then:
                  - reply:
                      text: How can we help?
                      quick_replies: [Track my order, {title: Returns, url: "https://shop.example/returns"}]
            """)
        defer { try? FileManager.default.removeItem(at: bot) }
        try await withWebhookWorker(store, bot: bot.path) { _ in
            let c = chatwoot.startConversation(contact: "Pooja")
            try await chatwoot.customerWrites(c, "hello")
            try await eventually("the menu") { (chatwoot.conversation(c)?.messages.filter { $0.sender == .bot }.count ?? 0) == 1 }
            let menu = try #require(chatwoot.conversation(c)?.messages.first { $0.sender == .bot })
            #expect(menu.contentType == "input_select")
            #expect(menu.items == [["title": "Track my order", "value": "Track my order"]])
            #expect(menu.content == "How can we help?\n[Returns](https://shop.example/returns)")
            #expect(chatwoot.calls.allSatisfy { $0.status == 200 }, "\(chatwoot.calls.map(\.body))")

            try await chatwoot.press(c, message: menu.id, item: 0)
            try await eventually("the answer") { (chatwoot.conversation(c)?.messages.filter { $0.sender == .bot }.count ?? 0) == 2 }
            #expect(written(chatwoot, c).map(\.text).last == "Your order ships tomorrow.")
            #expect(chatwoot.conversation(c)?.messages.filter { $0.type == "incoming" }.count == 1, "the press wrote no message")
            let pressed = try await store.transcript(conversation: ChatwootStandIn.usherID(c)).filter { $0.from == .customer }
            #expect(pressed.map(\.text) == ["hello", "Track my order"])
            #expect(pressed.last?.id == "\(menu.id)@submitted" && pressed.last?.senderID == pressed.first?.senderID)

            // The same update again (a retry, a later edit) is taken once: once `press` returns,
            // the bot has answered it, 200 for a message it had.
            try await chatwoot.press(c, message: menu.id, item: 0)
            #expect(try await store.transcript(conversation: ChatwootStandIn.usherID(c)).filter { $0.from == .customer }.count == 2)
            #expect(chatwoot.conversation(c)?.messages.filter { $0.sender == .bot }.count == 2)
        }
    }

    /// Tags become labels, merged into those the agents set; a resolution starts a new session.
    @Test func tagsBecomeLabelsAndAResolutionStartsOver() async throws {
        let (store, chatwoot) = try await chatwootStore()
        defer { chatwoot.close() }
        try await withWebhookWorker(store, bot: supportBot) { _ in
            let c = chatwoot.startConversation(contact: "Pooja")
            chatwoot.setLabels(c, ["billing"])
            try await chatwoot.customerWrites(c, "my order is 502-2345678-9012345")
            try await eventually("settled") { try await settled(store) }
            #expect(chatwoot.conversation(c)?.labels == ["billing", "has-order"])
            #expect(written(chatwoot, c).map(\.text) == ["Thanks, I've noted order 502-2345678-9012345.", Self.opening[0]])

            try await chatwoot.resolve(c)
            try await chatwoot.customerWrites(c, "hello again")
            try await eventually("settled") { try await settled(store) }
            #expect(written(chatwoot, c).last?.text == Self.opening[0], "a new session: the first opening again")
            let closes = try await store.transcript(conversation: ChatwootStandIn.usherID(c)).filter { $0.kind == .close }
            #expect(closes.count == 1, "conversation_status_changed and conversation_resolved: one close")
        }
    }

    /// Refused: a bad signature, and a call Chatwoot refuses (a dead letter, sent again later).
    @Test func aBadSignatureIsRefusedAndARefusedCallIsADeadLetter() async throws {
        let (store, chatwoot) = try await chatwootStore()
        defer { chatwoot.close() }
        try await withWebhookWorker(store, bot: supportBot) { _ in
            let address = try #require(store.listenAddress)
            let backend = try Backend()
            defer { backend.close() }
            let body = ChatwootPayload.message(content: "\"hello\"")
            let wrong = try await backend.post(address, body, path: "/chatwoot/webhook",
                                               signedBy: .chatwoot(secret: Array("not-the-secret".utf8)))
            #expect(wrong.status == 401 && wrong.body.contains("X-Chatwoot-Signature"), Comment(rawValue: wrong.body))
            #expect(try await store.latestSeq() == 0, "nothing taken in")

            // Conversation 42 does not exist at the stand-in: its reply is refused (404).
            let taken = try await backend.post(address, body, path: "/chatwoot/webhook",
                                               signedBy: .chatwoot(secret: Array(chatwoot.secret.utf8)))
            #expect(taken.status == 202, Comment(rawValue: taken.body))
            try await eventually("a dead letter") { try await !store.deadLetters().isEmpty }
            let letters = try await store.deadLetters()
            #expect(letters.map(\.status) == [404])
            #expect(letters.map(\.conversation) == ["1/42"])
            let resent = try await store.resend(letters)
            #expect(resent.map(\.delivered) == [false])
            #expect(try await store.deadLetters().count == 1)
        }
    }
}
