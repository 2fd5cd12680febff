import Foundation
import Testing
import UsherEngine
import UsherHTTP
import UsherJSON
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherWebhook

/// Chatwoot's webhook bodies, as its `webhook_data` writes them (app/models/message.rb,
/// app/presenters/conversations/event_data_presenter.rb), with what a test changes.
enum ChatwootPayload {
    static let contact = #"{"account":{"id":1,"name":"Acme"},"additional_attributes":{},"avatar":"","custom_attributes":{},"email":null,"id":5,"identifier":null,"name":"Pooja","phone_number":null,"thumbnail":"","blocked":false,"type":"contact"}"#
    static let user = #"{"id":2,"name":"Sam","email":"sam@example.com","type":"user"}"#
    static let bot = #"{"id":7,"name":"Usher","type":"agent_bot"}"#

    static func conversation(status: String = "pending", updatedAt: String = "1733480000.5") -> String {
        #"{"additional_attributes":{},"can_reply":true,"channel":"Channel::WebWidget","contact_inbox":{"contact_id":5,"inbox_id":3,"source_id":"abc","hmac_verified":false},"id":42,"inbox_id":3,"messages":[{"id":120,"content":"hi","account_id":1,"inbox_id":3,"conversation_id":42,"message_type":0,"created_at":1733479990,"private":false,"status":"sent","content_type":"text","content_attributes":{}}],"labels":[],"meta":{"sender":{"id":5,"name":"Pooja","type":"contact"},"assignee":null,"team":null,"hmac_verified":false},"status":"\#(status)","custom_attributes":{},"snoozed_until":null,"unread_count":1,"first_reply_created_at":null,"priority":null,"waiting_since":0,"agent_last_seen_at":0,"contact_last_seen_at":0,"last_activity_at":1733480000,"timestamp":1733480000,"created_at":1733479000,"updated_at":\#(updatedAt),"account":{"id":1,"name":"Acme"}}"#
    }

    static func message(id: Int = 123, type: String = "incoming", content: String = "\"I need a refund\"", sender: String = contact,
                        isPrivate: Bool = false, attributes: String = "{}") -> String {
        #"{"account":{"id":1,"name":"Acme"},"additional_attributes":{},"content_attributes":\#(attributes),"content_type":"text","content":\#(content),"conversation":\#(conversation()),"created_at":"2026-12-06T10:00:00.250Z","id":\#(id),"inbox":{"id":3,"name":"Website"},"message_type":"\#(type)","private":\#(isPrivate),"sender":\#(sender),"source_id":null,"event":"message_created"}"#
    }

    /// `message_updated` of the bot's `input_select` message 130, as the widget's press leaves it.
    static func select(submitted: String? = #"[{"title":"Track my order","value":"Track my order"}]"#) -> String {
        let attributes = #"{"usher_key":"support:120:0","items":[{"title":"Track my order","value":"Track my order"}]"#
            + (submitted.map { #","submitted_values":"# + $0 } ?? "") + "}"
        return message(id: 130, type: "outgoing", content: "\"How can we help?\"", sender: bot, attributes: attributes)
            .replacingOccurrences(of: #""content_type":"text""#, with: #""content_type":"input_select""#)
            .replacingOccurrences(of: "message_created", with: "message_updated")
    }

    static func event(_ name: String, status: String = "resolved", updatedAt: String = "1733480000.5") -> String {
        var c = conversation(status: status, updatedAt: updatedAt)
        c.removeLast()
        return c + #","event":"\#(name)"}"#
    }
}

@Suite("Chatwoot agent bot: events, calls, checks")
struct ChatwootAgentBotTests {
    let now = Date(timeIntervalSince1970: 1_765_000_000)

    func event(_ text: String) throws -> ChatwootAgentBot.Event {
        let bytes = Array(text.utf8)
        let value = try bytes.withUnsafeBufferPointer { b throws(JSONError) in try JSONReader.parse(b) }
        return try ChatwootAgentBot.event(value, now: now)
    }

    // MARK: Events in

    @Test func aContactsMessageIsTheCustomers() throws {
        guard case let .message(m) = try event(ChatwootPayload.message()) else { Issue.record("not a message"); return }
        #expect(m.id == "123")
        #expect(m.conversationID == "1/42")
        #expect(m.from == .customer)
        #expect(m.text == "I need a refund")
        #expect(m.senderID == "contact:5")
        #expect(m.senderName == "Pooja")
        #expect(m.channel == "webwidget")
        #expect(m.kind == .message)
        #expect(abs(m.at.timeIntervalSince1970 - 1_796_551_200.25) < 0.001, "created_at read with its milliseconds")
    }

    @Test func anAgentsMessageTakesTheConversationOver() throws {
        guard case let .message(m) = try event(ChatwootPayload.message(type: "outgoing", sender: ChatwootPayload.user)) else {
            Issue.record("not a message"); return
        }
        #expect(m.from == .agent)
        #expect(m.senderID == "user:2")
        #expect(m.senderName == "Sam")
    }

    @Test func aMessageWithoutTextIsStillTheCustomers() throws {
        guard case let .message(m) = try event(ChatwootPayload.message(content: "null")) else { Issue.record("not a message"); return }
        #expect(m.text == "")
    }

    /// What the bot does not act on: its own messages, other bots', notes, activity, templates,
    /// and events other than messages and resolutions.
    /// Usher's own message shown back, whoever Chatwoot says sent it, a note too: its key is an
    /// echo — the call that made it is made.
    @Test func ushersMarkerIsAnEcho() throws {
        for payload in [ChatwootPayload.message(type: "outgoing", sender: ChatwootPayload.user, attributes: #"{"usher_key":"support:9:0"}"#),
                        ChatwootPayload.message(type: "outgoing", sender: ChatwootPayload.bot, attributes: #"{"usher_key":"support:9:0"}"#),
                        ChatwootPayload.message(type: "outgoing", sender: ChatwootPayload.bot, isPrivate: true,
                                                attributes: #"{"usher_key":"support:9:0"}"#)] {
            #expect(try event(payload) == .echo("support:9:0"))
        }
    }

    @Test(arguments: [
        ("the bot's own message", ChatwootPayload.message(type: "outgoing", sender: ChatwootPayload.bot), "a bot's message"),
        ("an outgoing message with no sender (an automation)", ChatwootPayload.message(type: "outgoing", sender: "null"),
         "not from an agent"),
        ("an agent's private note", ChatwootPayload.message(type: "outgoing", sender: ChatwootPayload.user, isPrivate: true), "a private note"),
        ("an activity message", ChatwootPayload.message(type: "activity", sender: "null"), "of type activity"),
        ("a template message", ChatwootPayload.message(type: "template", sender: "null"), "of type template"),
        ("conversation_opened", ChatwootPayload.event("conversation_opened", status: "open"), "conversation_opened"),
        ("a status change to open", ChatwootPayload.event("conversation_status_changed", status: "open"), "now open"),
        ("message_updated", ChatwootPayload.message().replacingOccurrences(of: "message_created", with: "message_updated"), "message_updated"),
        ("a select of the bot's updated without a submission", ChatwootPayload.select(submitted: nil), "nothing submitted"),
        ("webwidget_triggered", #"{"event":"webwidget_triggered","id":1}"#, "webwidget_triggered"),
    ])
    func skipped(_ what: String, _ payload: String, _ reason: String) throws {
        guard case let .skipped(why) = try event(payload) else { Issue.record("\(what): not skipped"); return }
        #expect(why.contains(reason), "\(what): \(why)")
    }

    /// A button pressed in Chatwoot's web widget: the bot's select updated with
    /// `submitted_values`, which is the customer's message — its value, else its title.
    @Test func aPressInTheWidgetIsTheCustomersMessage() throws {
        guard case let .message(m) = try event(ChatwootPayload.select()) else { Issue.record("not a message"); return }
        #expect(m.id == "130@submitted" && m.conversationID == "1/42")
        #expect(m.from == .customer && m.text == "Track my order")
        #expect(m.senderID == "contact:5" && m.senderName == "Pooja", "the conversation's contact, not the bot")
        #expect(m.at == now)
        guard case let .message(t) = try event(ChatwootPayload.select(submitted: #"[{"title":"Returns"}]"#)) else {
            Issue.record("not a message"); return
        }
        #expect(t.text == "Returns" && t.id == "130@submitted")
        let error = #expect(throws: IntakeError.self) { try event(ChatwootPayload.select(submitted: #"[{"name":"x"}]"#)) }
        #expect(error?.status == 400 && error?.field == "content_attributes.submitted_values[0].value")
    }

    /// A resolution that names no account anywhere cannot be placed: taken (Chatwoot would not
    /// send it again) and logged, not refused.
    @Test func aResolutionWithoutAnAccountIsUnplacedNotRefused() throws {
        let bare = #"{"event":"conversation_resolved","id":4,"inbox_id":3,"messages":[],"updated_at":1733480000}"#
        guard case let .unplaced(why) = try event(bare) else { Issue.record("not unplaced"); return }
        #expect(why.contains("conversation 4") && why.contains("no account"), "\(why)")
        let door = ChatwootAgentBot(signer: nil, token: "t")
        let request = HTTPServer.Request(method: "POST", path: "/chatwoot/webhook", headers: ["Content-Type": "application/json"],
                                         body: Array(bare.utf8))
        let intake = try door.intake(request, now: now)
        #expect(intake.messages.isEmpty && intake.warning == why)
        // The account of the last message, as Chatwoot's event_data_presenter.rb writes it, places it.
        let withMessage = bare.replacingOccurrences(of: #""messages":[]"#, with: #""messages":[{"id":9,"account_id":2}]"#)
        guard case let .close(c) = try event(withMessage) else { Issue.record("not a close"); return }
        #expect(c.conversationID == "2/4")
    }

    @Test func aResolutionClosesOnceForBothOfItsEvents() throws {
        guard case let .close(a) = try event(ChatwootPayload.event("conversation_resolved")),
              case let .close(b) = try event(ChatwootPayload.event("conversation_status_changed")) else {
            Issue.record("not closes"); return
        }
        #expect(a.kind == .close && a.conversationID == "1/42")
        #expect(a.id == "1/42@resolved:1733480000.5")
        #expect(a.id == b.id, "the same id: the second is a duplicate")
        guard case let .close(later) = try event(ChatwootPayload.event("conversation_resolved", updatedAt: "1733490000.1")) else { return }
        #expect(later.id != a.id, "another resolution is another close")
    }

    @Test(arguments: [
        (#"{"id":1}"#, "event"),
        (#"[1,2]"#, "body"),
        (#"{"event":"message_created","id":"12","message_type":"incoming"}"#, "id"),
        (#"{"event":"message_created","id":12}"#, "message_type"),
        (#"{"event":"message_created","id":12,"message_type":"incoming","conversation":{"id":4}}"#, "account.id"),
        (#"{"event":"message_created","id":12,"message_type":"incoming","account":{"id":1}}"#, "conversation"),
        (#"{"event":"message_created","id":12,"message_type":"incoming","account":{"id":1},"conversation":{"id":4},"content":5}"#, "content"),
        (#"{"event":"message_created","id":12,"message_type":"incoming","account":{"id":1},"conversation":{"id":4},"created_at":"yesterday"}"#, "created_at"),
        (#"{"event":"conversation_resolved","id":4,"account":{"id":1}}"#, "updated_at"),
    ])
    func aWrongEventIsRefusedNamingTheField(_ payload: String, _ field: String) throws {
        let error = #expect(throws: IntakeError.self) { try event(payload) }
        #expect(error?.status == 400)
        #expect(error?.field == field, "\(error?.message ?? "")")
    }

    @Test func aBodyThatIsNotJSONIsRefusedWithItsPlace() throws {
        let door = ChatwootAgentBot(signer: nil, token: "t")
        let request = HTTPServer.Request(method: "POST", path: "/chatwoot/webhook", headers: ["Content-Type": "application/json"],
                                         body: Array("{\"event\":\n  x}".utf8))
        let error = #expect(throws: IntakeError.self) { try door.messages(in: request, now: now) }
        #expect(error?.status == 400 && error?.field == "body")
        #expect(error?.message.contains("line 2, column 3") == true, "\(error?.message ?? "")")
    }

    // MARK: Signatures

    /// Chatwoot's scheme (lib/webhooks/trigger.rb): `sha256=` and the hex HMAC-SHA256 of
    /// `TIMESTAMP.BODY` with the bot's secret — here a digest computed apart from Usher.
    @Test func chatwootsSignatureIsChecked() throws {
        let body = Array(#"{"event":"message_created"}"#.utf8)
        let door = ChatwootAgentBot(signer: .chatwoot(secret: Array("bot-secret".utf8)), token: "t")
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        func request(_ signature: String, stamp: String = "1700000000") -> HTTPServer.Request {
            HTTPServer.Request(method: "POST", path: "/chatwoot/webhook",
                               headers: ["X-Chatwoot-Timestamp": stamp, "X-Chatwoot-Signature": signature], body: body)
        }
        let good = "sha256=fced0b8611eadbedb8013aa824c4388b45e5fcc068a4279a9bd832626f962b41"
        #expect(door.authenticate(request(good), now: at.addingTimeInterval(10)) == nil)
        #expect(door.authenticate(request(good), now: at.addingTimeInterval(301))?.field == "X-Chatwoot-Timestamp", "too old")
        let wrong = door.authenticate(request("sha256=" + String(repeating: "0", count: 64)), now: at)
        #expect(wrong?.status == 401 && wrong?.field == "X-Chatwoot-Signature")
        #expect(wrong?.message.contains("CHATWOOT_WEBHOOK_SECRET") == true)
        #expect(door.authenticate(HTTPServer.Request(method: "POST", path: "/", body: body), now: at)?.field == "X-Chatwoot-Timestamp")
        #expect(WebhookSigner.chatwoot(secret: Array("bot-secret".utf8)).headers(body: body, at: at).map(\.value) == ["1700000000", good])
    }

    // MARK: Calls out

    let door = ChatwootAgentBot(signer: nil, token: "bot-token", teams: try! .init(parsing: "general=5, 2/general=9"))

    func reply(_ key: String, _ text: String, conversation: String = "1/42", from: SenderRole = .bot) -> StoreAction {
        .message(StoredMessage(seq: 1, id: key, conversationID: conversation, from: from, text: text, at: now, ruleID: "opening"))
    }

    func handoff(conversation: String = "1/42", queue: String? = "general") -> StoreAction {
        .handoff(HandoffRecord(id: 1, bot: "support", conversationID: conversation, idempotencyKey: "support:123:handoff", messageID: "123",
                               queue: queue, reason: "threshold", customerName: "Pooja", ruleID: "threshold", waitingSince: now))
    }

    func notification(handoff: Bool) -> StoreAction {
        .notification(StoredNotification(seq: 1, bot: "support", notification: AgentNotification(
            idempotencyKey: "support:123:2", conversationID: "1/42", queue: "sales", reason: "vip", text: "A VIP writes",
            customerName: "Pooja", lastMessage: "hi", isHandoff: handoff, at: now)))
    }

    @Test func aReplyAndANoticeAreOutgoingMessagesMarkedWithTheirKeys() {
        let calls = door.calls(for: [reply("support:123:0", "Hi \"there\""), reply("support:123:1", "Connecting you", from: .system)])
        #expect(calls.map(\.method) == ["POST", "POST"])
        #expect(calls.map(\.path) == Array(repeating: "/api/v1/accounts/1/conversations/42/messages", count: 2))
        #expect(calls.map(\.key) == ["support:123:0", "support:123:1"])
        #expect(calls.allSatisfy { $0.conversation == "1/42" })
        #expect(calls[0].body == #"{"content":"Hi \"there\"","message_type":"outgoing","private":false,"content_attributes":{"usher_key":"support:123:0"}}"#)
        #expect(calls[1].body.contains(#""content":"Connecting you","message_type":"outgoing","private":false"#))
    }

    @Test func buttonsMakeAnInputSelectAndLinksAreMarkdownUnderTheText() {
        var m = StoredMessage(seq: 1, id: "support:123:0", conversationID: "1/42", from: .bot, text: "Anything else?", at: now, ruleID: "help")
        m.quickReplies = [QuickReply(title: "Track my order"), QuickReply(title: "Returns [EU]", url: "https://shop.example/returns (eu)"),
                          QuickReply(title: "Talk to a human")]
        let calls = door.calls(for: [.message(m)])
        #expect(calls.map(\.path) == ["/api/v1/accounts/1/conversations/42/messages"])
        #expect(calls[0].body == #"{"content":"Anything else?\n[Returns \\[EU\\]](https://shop.example/returns%20%28eu%29)","#
                + #""message_type":"outgoing","private":false,"content_type":"input_select","content_attributes":{"usher_key":"support:123:0","#
                + #""items":[{"title":"Track my order","value":"Track my order"},{"title":"Talk to a human","value":"Talk to a human"}]}}"#)
        // Links alone: a plain message, the links under the text.
        m.quickReplies = [QuickReply(title: "Returns", url: "https://shop.example/returns")]
        #expect(door.calls(for: [.message(m)])[0].body == #"{"content":"Anything else?\n[Returns](https://shop.example/returns)","#
                + #""message_type":"outgoing","private":false,"content_attributes":{"usher_key":"support:123:0"}}"#)
    }

    @Test func aHandoffIsANoteTheTeamAndTheConversationOpened() {
        let calls = door.calls(for: [handoff()])
        #expect(calls.map(\.path) == ["/api/v1/accounts/1/conversations/42/messages", "/api/v1/accounts/1/conversations/42/assignments",
                                      "/api/v1/accounts/1/conversations/42/toggle_status"])
        #expect(calls.map(\.key) == ["support:123:handoff:note", "support:123:handoff:team", "support:123:handoff"])
        #expect(calls[0].body == #"{"content":"Usher (support) handed this conversation to agents: threshold (queue general, rule threshold, customer Pooja).","message_type":"outgoing","private":true,"content_attributes":{"usher_key":"support:123:handoff:note"}}"#)
        #expect(calls[1].body == #"{"team_id":5}"#)
        #expect(calls[2].body == #"{"status":"open"}"#)
        #expect(door.calls(for: [handoff(conversation: "2/7")])[1].body == #"{"team_id":9}"#, "account 2's own team")
        #expect(door.calls(for: [handoff(queue: "billing")]).map(\.key) == ["support:123:handoff:note", "support:123:handoff"],
                "a queue without a team: no assignment")
    }

    @Test func aHandoffsNotificationNeedsNoCallAndANotifyIsANote() {
        #expect(door.calls(for: [notification(handoff: true)]).isEmpty)
        let notes = door.calls(for: [notification(handoff: false)])
        #expect(notes.map(\.key) == ["support:123:2"])
        #expect(notes.first?.body == #"{"content":"Usher (support) for the sales agents: A VIP writes","message_type":"outgoing","private":true,"content_attributes":{"usher_key":"support:123:2"}}"#)
    }

    @Test func aMessagesCallsComeInTheOrderTheyWereDecided() {
        // As `deliverActions` hands them: replies and notices by seq, then handoffs, then
        // notifications — a handoff goes right after its own notice, before later answers.
        let handoff124 = StoreAction.handoff(HandoffRecord(id: 1, bot: "support", conversationID: "1/42", idempotencyKey: "support:124:handoff",
                                                           messageID: "124", queue: nil, reason: "threshold", customerName: nil,
                                                           ruleID: nil, waitingSince: now))
        let calls = door.calls(for: [reply("support:123:0", "one"), reply("support:124:0", "Connecting you", from: .system),
                                     reply("support:125:0", "two"), handoff124])
        #expect(calls.map(\.key) == ["support:123:0", "support:124:0", "support:124:handoff:note", "support:124:handoff", "support:125:0"])
    }

    @Test func tagsBecomeALabelsChangeInLowerCase() {
        let calls = door.calls(for: [.tags(TagChangeRecord(seq: 1, bot: "support", conversationID: "1/42", idempotencyKey: "support:123:tags",
                                                           messageID: "123", added: ["VIP", "has-order"], removed: ["new"], at: now))])
        #expect(calls.map(\.path) == ["/api/v1/accounts/1/conversations/42/labels"])
        #expect(calls.map(\.key) == ["support:123:tags"])
        #expect(calls.first?.body == #"{"add":["vip","has-order"],"remove":["new"]}"#)
    }

    @Test func callsCarryTheBotsToken() {
        var request = HTTPRequest(url: "http://chatwoot/api")
        door.authorize(&request, now: now)
        #expect(request.headers.contains { $0.name == "api_access_token" && $0.value == "bot-token" })
    }

    @Test func teamsAreQueueEqualsTeamID() throws {
        let teams = try ChatwootAgentBot.Teams(parsing: "general=3,1/billing=4, billing=6")
        #expect(teams.team(queue: "general", account: 1) == 3)
        #expect(teams.team(queue: "billing", account: 1) == 4)
        #expect(teams.team(queue: "billing", account: 2) == 6)
        #expect(teams.team(queue: "sales", account: 1) == nil)
        for wrong in ["general", "general=x", "=3", "general=0"] {
            #expect(throws: StoreError.self, "\(wrong)") { try ChatwootAgentBot.Teams(parsing: wrong) }
        }
    }

    // MARK: Before a call

    /// A backend of canned answers to the reads, counting them.
    final class Reads: @unchecked Sendable {
        // @unchecked: `paths` is behind its lock.
        private let state = Locked([String]())
        let answer: @Sendable (String) -> Result<HTTPResponse, HTTPError>
        init(_ answer: @escaping @Sendable (String) -> Result<HTTPResponse, HTTPError>) { self.answer = answer }
        var paths: [String] { state.withLock { $0 } }
        var read: BackendRead {
            { path in
                self.state.withLock { $0.append(path) }
                return self.answer(path)
            }
        }
        static func json(_ text: String, status: Int = 200) -> Reads { Reads { _ in .success(HTTPResponse(status: status, body: Array(text.utf8))) } }
    }

    @Test func aFirstAttemptIsSentWithoutAsking() async {
        let call = door.calls(for: [reply("support:123:0", "hi")])[0]
        let reads = Reads.json("{}")
        guard case let .send(sent) = await door.prepare(call, repeated: false, read: reads.read) else { Issue.record("not sent"); return }
        #expect(sent == call)
        #expect(reads.paths.isEmpty)
    }

    @Test func aRepeatIsSettledWhenChatwootHasItsMarker() async {
        let call = door.calls(for: [reply("support:123:0", "hi")])[0]
        let has = Reads.json(#"{"id":42,"messages":[{"id":7,"content_attributes":{}},{"id":8,"content_attributes":{"usher_key":"support:123:0"}}],"status":"pending"}"#)
        guard case let .settled(why) = await door.prepare(call, repeated: true, read: has.read) else { Issue.record("not settled"); return }
        #expect(why.contains("message 8"))
        #expect(has.paths == ["/api/v1/accounts/1/conversations/42"])

        // Current Chatwoot lists only the last message; an activity message written after the
        // bot's leaves it as `last_non_activity_message`.
        let behindActivity = Reads.json(#"{"id":42,"messages":[{"id":9,"message_type":2,"content_attributes":{}}],"last_non_activity_message":{"id":8,"content_attributes":{"usher_key":"support:123:0"}}}"#)
        guard case let .settled(under) = await door.prepare(call, repeated: true, read: behindActivity.read) else {
            Issue.record("not settled from last_non_activity_message"); return
        }
        #expect(under.contains("message 8"))

        let hasNot = Reads.json(#"{"id":42,"messages":[{"id":7,"content_attributes":{"usher_key":"support:122:0"}}],"last_non_activity_message":null}"#)
        guard case .send = await door.prepare(call, repeated: true, read: hasNot.read) else { Issue.record("not sent"); return }

        let refused = Reads.json(#"{"error":"Access to this endpoint is not authorized for bots"}"#, status: 401)
        guard case let .failed(.success(r)) = await door.prepare(call, repeated: true, read: refused.read), r.status == 401 else {
            Issue.record("not failed with the read's answer"); return
        }
        guard case .failed(.failure) = await door.prepare(call, repeated: true, read: Reads.json(#"{"payload":[]}"#).read) else {
            Issue.record("an answer without messages is a failed read"); return
        }
    }

    @Test func aRepeatedToggleNeedsNoCheck() async {
        let toggle = door.calls(for: [handoff()]).last!
        let reads = Reads.json("{}")
        guard case .send = await door.prepare(toggle, repeated: true, read: reads.read) else { Issue.record("not sent"); return }
        #expect(reads.paths.isEmpty)
    }

    @Test func labelsAreMergedIntoWhatChatwootHas() async {
        let call = door.calls(for: [.tags(TagChangeRecord(seq: 1, bot: "support", conversationID: "1/42", idempotencyKey: "support:123:tags",
                                                          messageID: "123", added: ["has-order", "vip"], removed: ["new"], at: now))])[0]
        let current = Reads.json(#"{"payload":["VIP","new","billing"]}"#)
        guard case let .send(merged) = await door.prepare(call, repeated: false, read: current.read) else { Issue.record("not sent"); return }
        #expect(merged.body == #"{"labels":["vip","billing","has-order"]}"#, "the agents' billing kept")
        #expect(merged.path == call.path && merged.key == call.key)
        #expect(current.paths == ["/api/v1/accounts/1/conversations/42/labels"])
        guard case .settled = await door.prepare(call, repeated: false, read: Reads.json(#"{"payload":["has-order","vip"]}"#).read) else {
            Issue.record("labels already so: nothing to send"); return
        }
    }

    @Test func aConversationThatIsNotChatwootsIsRefused() async {
        let call = door.calls(for: [reply("support:1:0", "hi", conversation: "c1")])[0]
        #expect(call.path.isEmpty)
        guard case let .failed(.success(r)) = await door.prepare(call, repeated: false, read: Reads.json("{}").read) else {
            Issue.record("not refused"); return
        }
        #expect(r.status == 400)
        #expect(String(decoding: r.body, as: UTF8.self).contains("'c1' is not a Chatwoot conversation"))
    }
}
