public import Foundation
import UsherHTTP
import UsherRuntime
import UsherWebhook

/// A stand-in for Chatwoot in tests — not Chatwoot: one account's conversations in memory, served
/// on a loopback port through Chatwoot's routes (config/routes.rb) and answered in Chatwoot's
/// shapes, and its agent-bot webhooks sent to the bot's outgoing URL as Chatwoot sends them
/// (app/listeners/agent_bot_listener.rb: a record's `webhook_data` merged with `event`, signed
/// with the bot's secret as lib/webhooks/trigger.rb signs). Test support only.
///
/// What it does of Chatwoot's: the routes an agent bot's token may call
/// (app/controllers/concerns/access_token_auth_helper.rb `BOT_ACCESSIBLE_ENDPOINTS`) — create a
/// message, toggle the status (a bot taking a conversation from `pending` to `open` is its
/// handoff), assign a team, read the conversation, read and replace its labels — and 401 for the
/// messages list, which a bot may not read; every message the bot creates echoed back to it as
/// `message_created` (`webhook_sendable?`: incoming, outgoing and template messages, private
/// notes included, activity messages not); `conversation_opened`, `conversation_status_changed`
/// and `conversation_resolved` on status changes.
///
/// What it adds for tests: every API call recorded; faults on demand (`fail`, `stallCreating`,
/// `setDown`: the API down, webhooks still sent); and webhooks of customers' and agents' messages
/// delivered until the bot takes them
/// (Chatwoot tries an agent-bot webhook three times, on 429 and 500 only, then hands the
/// conversation to its agents; the stand-in keeps trying, so that a test can count what the
/// bot took).
public final class ChatwootStandIn: @unchecked Sendable {
    // @unchecked: `state` is touched only under `lock`; the rest is set in init.

    public static let accountID = 1
    public static let accountName = "Acme"
    public static let inboxID = 3
    public static let botID = 7

    /// One message as the stand-in keeps it.
    public struct Message: Sendable {
        public enum Sender: Sendable, Equatable {
            case contact(id: Int, name: String)
            case user(id: Int, name: String)
            case bot
            case none
        }
        public var id: Int
        public var content: String?
        /// `incoming`, `outgoing`, `activity`, `template`.
        public var type: String
        public var contentType: String
        public var isPrivate: Bool
        /// `content_attributes`, as JSON.
        public var attributes: Data
        public var sender: Sender
        public var createdAt: Date

        /// The marker Usher puts in `content_attributes`.
        public var usherKey: String? {
            ((try? JSONSerialization.jsonObject(with: attributes)) as? [String: Any])?[ChatwootAgentBot.markerKey] as? String
        }
        public var items: [[String: String]] {
            ((try? JSONSerialization.jsonObject(with: attributes)) as? [String: Any])?["items"] as? [[String: String]] ?? []
        }
    }

    /// One conversation.
    public struct Conversation: Sendable {
        public var id: Int
        public var displayID: Int
        public var contact: (id: Int, name: String)
        /// `open`, `resolved`, `pending`, `snoozed`.
        public var status: String
        public var labels: [String]
        public var teamID: Int?
        public var messages: [Message]
        public var createdAt: Date
        public var updatedAt: Date
        /// Times the bot took it from `pending` to `open` (Chatwoot's `bot_handoff!`).
        public var handoffs: Int
    }

    /// One API call as received, with the status it was answered.
    public struct Call: Sendable {
        public var method: String
        public var path: String
        public var body: String
        public var status: Int
    }

    private struct State {
        var conversations: [Int: Conversation] = [:]   // by display id
        var nextConversation = 1
        var nextMessage = 1
        var nextContact = 1
        var calls: [Call] = []
        /// Statuses to answer the next API calls with, doing nothing.
        var failing: [Int] = []
        /// Message creations to answer only after the stall (the message made meanwhile).
        var stalls = 0
        var stall: Duration = .seconds(2)
        var down = false
        var refused = 0
        var webhooks = 0
        var echoes: [Task<Void, Never>] = []
        var webhookURL = ""
    }

    private let lock = NSLock()
    private var state = State()
    private var server: HTTPServer!
    private let client = HTTPClient(connections: 8, connectTimeout: .seconds(1), timeout: .seconds(5))
    /// The agent bot's access token and secret.
    public let token: String
    public let secret: String
    /// The bot's outgoing URL, where webhooks go.
    public var webhookURL: String {
        get { lock.withLock { state.webhookURL } }
        set { lock.withLock { state.webhookURL = newValue } }
    }
    /// The account's teams, by id.
    public let teams: [Int: String]
    /// `http://127.0.0.1:PORT`: Chatwoot's base URL.
    public var baseURL: String { "http://\(server.address)" }

    /// Starts serving on a free loopback port; webhooks go to `webhookURL` (which may be set later).
    public init(webhookURL: String = "", token: String = "bot-token", secret: String = "bot-secret", teams: [Int: String] = [5: "Support"]) throws {
        state.webhookURL = webhookURL
        self.token = token
        self.secret = secret
        self.teams = teams
        server = try HTTPServer(address: "127.0.0.1:0", report: { _, _, _ in }) { [weak self] request, responder in
            guard let self else { return responder.respond(.init(status: 503, body: "closed")) }
            self.handle(request, responder)
        }
    }

    public func close() {
        let echoes = lock.withLock { state.echoes }
        echoes.forEach { $0.cancel() }
        server.close()
        client.close()
    }

    // MARK: - What tests read

    public var calls: [Call] { lock.withLock { state.calls } }
    public func conversation(_ display: Int) -> Conversation? { lock.withLock { state.conversations[display] } }
    public var conversations: [Conversation] { lock.withLock { state.conversations.values.sorted { $0.displayID < $1.displayID } } }
    /// Webhooks the bot acknowledged (2xx).
    public var webhooksTaken: Int { lock.withLock { state.webhooks } }
    /// Usher's conversation id of display id `display`.
    public static func usherID(_ display: Int) -> String { "\(accountID)/\(display)" }

    /// The next `count` API calls are answered `status`, and do nothing.
    public func fail(next count: Int, status: Int = 500) { lock.withLock { state.failing = Array(repeating: status, count: count) } }
    /// The next `count` messages created are made (and echoed) at once, but answered only after
    /// `duration`: past the client's timeout, the client cannot know they were made.
    public func stallCreating(next count: Int, for duration: Duration) {
        lock.withLock {
            state.stalls = count
            state.stall = duration
        }
    }
    /// Down: API calls get 503 and do nothing — Chatwoot's web server down, while its job
    /// workers still send webhooks.
    public func setDown(_ down: Bool) { lock.withLock { state.down = down } }
    /// API calls answered 503 while down.
    public var refusedWhileDown: Int { lock.withLock { state.refused } }

    // MARK: - What happens in Chatwoot

    /// A contact starts a conversation in the inbox, which has the bot: `pending`. Its display id.
    public func startConversation(contact name: String) -> Int {
        lock.withLock {
            let display = state.nextConversation
            state.nextConversation += 1
            let contact = state.nextContact
            state.nextContact += 1
            let now = Date()
            state.conversations[display] = Conversation(id: 1000 + display, displayID: display, contact: (contact, name), status: "pending",
                                                        labels: [], teamID: nil, messages: [], createdAt: now, updatedAt: now, handoffs: 0)
            return display
        }
    }

    /// The contact writes: an incoming message, delivered to the bot as `message_created` until
    /// it takes it. Its id.
    @discardableResult
    public func customerWrites(_ display: Int, _ text: String) async throws -> Int {
        let (id, payload) = try add(display) { c in
            Message(id: 0, content: text, type: "incoming", contentType: "text", isPrivate: false, attributes: Data("{}".utf8),
                    sender: .contact(id: c.contact.id, name: c.contact.name), createdAt: Date())
        }
        try await deliver(payload)
        return id
    }

    /// An agent writes to the contact (an outgoing message of a user), delivered until taken.
    @discardableResult
    public func agentWrites(_ display: Int, _ text: String, privately: Bool = false) async throws -> Int {
        let (id, payload) = try add(display) { _ in
            Message(id: 0, content: text, type: "outgoing", contentType: "text", isPrivate: privately, attributes: Data("{}".utf8),
                    sender: .user(id: 2, name: "Sam"), createdAt: Date())
        }
        try await deliver(payload)
        return id
    }

    /// The contact presses item `item` of the `input_select` message `id` in the web widget: as
    /// Chatwoot's widget does, no message is written — the select gets `submitted_values:
    /// [{title, value}]` (`PATCH /api/v1/widget/messages/:id`) and the bot `message_updated` of it,
    /// delivered until taken. Nothing is sent for a message that is not a select.
    public func press(_ display: Int, message id: Int, item: Int) async throws {
        let payload = try lock.withLock {
            guard var c = state.conversations[display], let i = c.messages.firstIndex(where: { $0.id == id }),
                  c.messages[i].contentType == "input_select", c.messages[i].items.indices.contains(item) else {
                throw StandInError("no select \(id) with an item \(item) in conversation \(display)")
            }
            let picked = c.messages[i].items[item]
            var attributes = (try? JSONSerialization.jsonObject(with: c.messages[i].attributes)) as? [String: Any] ?? [:]
            attributes["submitted_values"] = [["title": picked["title"] ?? "", "value": picked["value"] ?? ""]]
            c.messages[i].attributes = try JSONSerialization.data(withJSONObject: attributes)
            c.updatedAt = Date()
            state.conversations[display] = c
            var event = messageEvent(c.messages[i], in: c)
            event["event"] = "message_updated"
            return event
        }
        try await deliver(payload)
    }

    /// The `message_created` webhook of message `id` once more, as Chatwoot sends a webhook again;
    /// the bot's status for it.
    public func deliverAgain(_ display: Int, message id: Int) async throws -> Int {
        let payload = try lock.withLock {
            guard let c = state.conversations[display], let m = c.messages.first(where: { $0.id == id }) else {
                throw StandInError("no message \(id) in conversation \(display)")
            }
            return messageEvent(m, in: c)
        }
        return try await post(payload)
    }

    /// An agent resolves the conversation: `conversation_status_changed` and
    /// `conversation_resolved`, each delivered until taken.
    public func resolve(_ display: Int) async throws {
        let payloads = try lock.withLock {
            guard var c = state.conversations[display] else { throw StandInError("no conversation \(display)") }
            c.status = "resolved"
            c.updatedAt = Date()
            state.conversations[display] = c
            return [conversationEvent(c, "conversation_status_changed"), conversationEvent(c, "conversation_resolved")]
        }
        for p in payloads { try await deliver(p) }
    }

    /// An agent labels the conversation (labels are kept in lower case).
    public func setLabels(_ display: Int, _ labels: [String]) {
        lock.withLock { state.conversations[display]?.labels = labels.map { $0.lowercased() } }
    }

    // MARK: - Webhooks

    /// Delivers `payload` until the bot takes it (2xx).
    func deliver(_ payload: [String: Any]) async throws {
        let body = try JSONSerialization.data(withJSONObject: payload)
        let delivery = UUID().uuidString.lowercased()
        while true {
            try Task.checkCancellation()
            if let status = try? await send(body, delivery: delivery), (200..<300).contains(status) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Posts `payload` once; the bot's status.
    func post(_ payload: [String: Any]) async throws -> Int {
        try await send(try JSONSerialization.data(withJSONObject: payload), delivery: UUID().uuidString.lowercased())
    }

    private func send(_ body: Data, delivery: String) async throws -> Int {
        let bytes = [UInt8](body)
        var request = HTTPRequest(method: "POST", url: webhookURL,
                                  headers: [("Content-Type", "application/json"), ("Accept", "application/json"),
                                            ("X-Chatwoot-Delivery", delivery)],
                                  body: bytes)
        request.headers += WebhookSigner.chatwoot(secret: Array(secret.utf8)).headers(body: bytes, at: Date())
        let status = try await client.send(request).status
        if (200..<300).contains(status) { lock.withLock { state.webhooks += 1 } }
        return status
    }

    /// Sends `payloads` in the background, each tried three times as Chatwoot tries (the bot's
    /// own messages echoed, the events of its handoff): the bot need not take them.
    private func echo(_ payloads: [[String: Any]]) {
        guard let bodies = try? payloads.map({ try JSONSerialization.data(withJSONObject: $0) }) else { return }
        let task = Task { [weak self] in
            for body in bodies {
                for _ in 0..<3 {
                    guard let self, !Task.isCancelled else { return }
                    if let status = try? await self.send(body, delivery: UUID().uuidString), (200..<300).contains(status) { break }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
        lock.withLock {
            state.echoes.removeAll { $0.isCancelled }
            state.echoes.append(task)
        }
    }

    // MARK: - The API

    private func handle(_ request: HTTPServer.Request, _ responder: HTTPServer.Responder) {
        var answer: (status: Int, body: Any?)
        var after: Duration?
        var echoes: [[String: Any]] = []
        let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] ?? [:]
        if request.header("api_access_token") != token {
            answer = (401, ["error": "Invalid Access Token"])
        } else {
            answer = lock.withLock { () -> (Int, Any?) in
                if state.down {
                    state.refused += 1
                    return (503, ["error": "down"])
                }
                if !state.failing.isEmpty { return (state.failing.removeFirst(), ["error": "failed on purpose"]) }
                return route(request.method, request.path, body, stall: &after, echoes: &echoes)
            }
        }
        lock.withLock {
            state.calls.append(Call(method: request.method, path: request.path, body: String(decoding: request.body, as: UTF8.self),
                                    status: answer.status))
        }
        let json = answer.body.flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.fragmentsAllowed]) } ?? Data("null".utf8)
        let response = HTTPServer.Response(status: answer.status, contentType: "application/json; charset=utf-8",
                                           body: String(decoding: json, as: UTF8.self))
        if !echoes.isEmpty { echo(echoes) }
        if let after {
            let seconds = Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { responder.respond(response) }
        } else {
            responder.respond(response)
        }
    }

    /// Routes `api/v1/accounts/:account_id/conversations/:id[/…]` (under the lock).
    private func route(_ method: String, _ path: String, _ body: [String: Any], stall: inout Duration?,
                       echoes: inout [[String: Any]]) -> (Int, Any?) {
        let parts = path.split(separator: "/").map(String.init)
        guard parts.count >= 6, parts[0] == "api", parts[1] == "v1", parts[2] == "accounts", parts[4] == "conversations",
              let account = Int(parts[3]), let display = Int(parts[5]) else {
            return (404, ["error": "Not Found"])
        }
        guard account == Self.accountID, var c = state.conversations[display] else {
            return (404, ["error": "Resource could not be found"])
        }
        let action = parts.count > 6 ? parts[6] : ""
        switch (method, action) {
        case ("GET", ""):
            return (200, show(c))
        case ("GET", "messages"):
            return (401, ["error": "Access to this endpoint is not authorized for bots"])
        case ("POST", "messages"):
            let type = body["message_type"] as? String ?? "outgoing"
            guard type == "outgoing" else { return (422, ["error": "Incoming messages are only allowed in Api inboxes"]) }
            let attributes = body["content_attributes"] as? [String: Any] ?? [:]
            let contentType = body["content_type"] as? String ?? "text"
            if contentType == "input_select" {
                guard let items = attributes["items"] as? [[String: Any]], !items.isEmpty,
                      items.allSatisfy({ Set($0.keys).isSubset(of: ["title", "value"]) }) else {
                    return (422, ["error": "Validation failed: Content attributes At least one item is required."])
                }
            }
            let m = Message(id: state.nextMessage, content: body["content"] as? String, type: "outgoing", contentType: contentType,
                            isPrivate: body["private"] as? Bool ?? false,
                            attributes: (try? JSONSerialization.data(withJSONObject: attributes)) ?? Data("{}".utf8),
                            sender: .bot, createdAt: Date())
            state.nextMessage += 1
            c.messages.append(m)
            c.updatedAt = Date()
            state.conversations[display] = c
            echoes.append(messageEvent(m, in: c))
            if state.stalls > 0 {
                state.stalls -= 1
                stall = state.stall
            }
            return (200, pushData(m, in: c))
        case ("POST", "toggle_status"):
            guard let status = body["status"] as? String, ["open", "resolved", "pending", "snoozed"].contains(status) else {
                return (422, ["error": "invalid status"])
            }
            let before = c.status
            c.status = status
            c.updatedAt = Date()
            if before == "pending", status == "open" {
                // `bot_handoff!`: opened for agents, with an activity message.
                c.handoffs += 1
                c.messages.append(Message(id: state.nextMessage, content: "Conversation was transferred to agents by the bot",
                                          type: "activity", contentType: "text", isPrivate: false, attributes: Data("{}".utf8),
                                          sender: .none, createdAt: Date()))
                state.nextMessage += 1
            }
            state.conversations[display] = c
            if before != status {
                echoes.append(conversationEvent(c, "conversation_status_changed"))
                if status == "open" { echoes.append(conversationEvent(c, "conversation_opened")) }
            }
            return (200, ["meta": [String: Any](), "payload": ["success": true, "conversation_id": display, "current_status": status,
                                                              "snoozed_until": NSNull()]])
        case ("POST", "assignments"):
            guard body.keys.contains("team_id") else { return (200, nil) }
            // `Current.account.teams.find_by(id:)`: an unknown team unassigns, and answers null.
            let team = (body["team_id"] as? Int).flatMap { teams[$0] != nil ? $0 : nil }
            c.teamID = team
            state.conversations[display] = c
            return (200, team.map { ["id": $0, "name": teams[$0]!, "account_id": Self.accountID] as Any })
        case ("GET", "labels"):
            return (200, ["payload": c.labels])
        case ("POST", "labels"):
            c.labels = (body["labels"] as? [String] ?? []).map { $0.lowercased() }
            state.conversations[display] = c
            return (200, ["payload": c.labels])
        default:
            return (404, ["error": "Not Found"])
        }
    }

    /// Appends the message `make` gives to conversation `display`; its id and its
    /// `message_created` event.
    private func add(_ display: Int, _ make: (Conversation) -> Message) throws -> (Int, [String: Any]) {
        try lock.withLock {
            guard var c = state.conversations[display] else { throw StandInError("no conversation \(display)") }
            var m = make(c)
            m.id = state.nextMessage
            state.nextMessage += 1
            // A contact writing to a resolved conversation of a bot's inbox reopens it as pending
            // (app/models/message.rb `reopen_conversation`).
            if m.type == "incoming", c.status == "resolved" { c.status = "pending" }
            c.messages.append(m)
            c.updatedAt = Date()
            state.conversations[display] = c
            return (m.id, messageEvent(m, in: c))
        }
    }

    // MARK: - Chatwoot's shapes

    /// Rails writes times in JSON as ISO 8601 with milliseconds.
    private static func iso(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }

    private var account: [String: Any] { ["id": Self.accountID, "name": Self.accountName] }

    /// app/models/message.rb `webhook_data`, merged with `event`.
    private func messageEvent(_ m: Message, in c: Conversation) -> [String: Any] {
        var sender: Any = NSNull()
        switch m.sender {
        case let .contact(id, name):
            sender = ["account": account, "additional_attributes": [String: Any](), "avatar": "", "custom_attributes": [String: Any](),
                      "email": NSNull(), "id": id, "identifier": NSNull(), "name": name, "phone_number": NSNull(), "thumbnail": "",
                      "blocked": false, "type": "contact"]
        case let .user(id, name): sender = ["id": id, "name": name, "email": "sam@example.com", "type": "user"]
        case .bot: sender = ["id": Self.botID, "name": "Usher", "type": "agent_bot"]
        case .none: break
        }
        return ["account": account, "additional_attributes": [String: Any](),
                "content_attributes": (try? JSONSerialization.jsonObject(with: m.attributes)) ?? [String: Any](),
                "content_type": m.contentType, "content": m.content ?? NSNull(), "conversation": conversationData(c),
                "created_at": Self.iso(m.createdAt), "id": m.id, "inbox": ["id": Self.inboxID, "name": "Website"],
                "message_type": m.type, "private": m.isPrivate, "sender": sender, "source_id": NSNull(), "event": "message_created"]
    }

    /// app/presenters/conversations/event_data_presenter.rb `webhook_data`, merged with `event`.
    private func conversationEvent(_ c: Conversation, _ event: String) -> [String: Any] {
        var data = conversationData(c)
        data["event"] = event
        return data
    }

    private func conversationData(_ c: Conversation) -> [String: Any] {
        let last = c.messages.last { $0.type != "activity" && !$0.isPrivate }
        return ["additional_attributes": [String: Any](), "can_reply": true, "channel": "Channel::WebWidget",
                "contact_inbox": ["contact_id": c.contact.id, "inbox_id": Self.inboxID, "source_id": "contact-\(c.contact.id)",
                                  "hmac_verified": false],
                "id": c.displayID, "inbox_id": Self.inboxID, "messages": last.map { [pushData($0, in: c)] } ?? [],
                "labels": c.labels, "meta": meta(c), "status": c.status, "custom_attributes": [String: Any](),
                "snoozed_until": NSNull(), "unread_count": c.messages.filter { $0.type == "incoming" }.suffix(10).count,
                "first_reply_created_at": NSNull(), "priority": NSNull(), "waiting_since": 0,
                "agent_last_seen_at": 0, "contact_last_seen_at": 0, "last_activity_at": Int(c.updatedAt.timeIntervalSince1970),
                "timestamp": Int(c.updatedAt.timeIntervalSince1970), "created_at": Int(c.createdAt.timeIntervalSince1970),
                "updated_at": c.updatedAt.timeIntervalSince1970, "account": account]
    }

    private func meta(_ c: Conversation) -> [String: Any] {
        ["sender": ["additional_attributes": [String: Any](), "custom_attributes": [String: Any](), "email": NSNull(), "id": c.contact.id,
                    "identifier": NSNull(), "name": c.contact.name, "phone_number": NSNull(), "thumbnail": "", "type": "contact"],
         "assignee": NSNull(), "team": c.teamID.map { ["id": $0, "name": teams[$0] ?? ""] as Any } ?? NSNull(), "hmac_verified": false]
    }

    /// app/models/message.rb `push_event_data`: the record's attributes, the type as a number.
    private func pushData(_ m: Message, in c: Conversation) -> [String: Any] {
        let types = ["incoming": 0, "outgoing": 1, "activity": 2, "template": 3]
        var data: [String: Any] = [
            "id": m.id, "content": m.content ?? NSNull(), "account_id": Self.accountID, "inbox_id": Self.inboxID,
            "conversation_id": c.displayID, "message_type": types[m.type] ?? 1, "created_at": Int(m.createdAt.timeIntervalSince1970),
            "private": m.isPrivate, "status": "sent", "source_id": NSNull(), "content_type": m.contentType,
            "content_attributes": (try? JSONSerialization.jsonObject(with: m.attributes)) ?? [String: Any](),
            "sender_type": NSNull(), "sender_id": NSNull(), "external_source_ids": [String: Any](),
            "additional_attributes": [String: Any](), "conversation": ["assignee_id": NSNull()],
        ]
        switch m.sender {
        case let .contact(id, name):
            data["sender_type"] = "Contact"; data["sender_id"] = id
            data["sender"] = ["id": id, "name": name, "thumbnail": "", "type": "contact"]
        case let .user(id, name):
            data["sender_type"] = "User"; data["sender_id"] = id
            data["sender"] = ["id": id, "name": name, "available_name": name, "thumbnail": "", "type": "user"]
        case .bot:
            data["sender_type"] = "AgentBot"; data["sender_id"] = Self.botID
            data["sender"] = ["id": Self.botID, "name": "Usher", "avatar_url": "", "type": "agent_bot"]
        case .none: break
        }
        return data
    }

    /// GET a conversation (app/views/api/v1/conversations/partials/_conversation.json.jbuilder):
    /// its last message when no incoming message is unread, else up to its last ten unread —
    /// every message is unread here, no agent having looked.
    private func show(_ c: Conversation) -> [String: Any] {
        // As current Chatwoot's _conversation.json.jbuilder: `messages` holds the last message
        // only, `last_non_activity_message` the last one that is not an activity.
        let messages = c.messages.last.map { [$0] } ?? []
        var meta = meta(c)
        meta["channel"] = "Channel::WebWidget"
        let lastNonActivity: Any = c.messages.last { $0.type != "activity" }.map { pushData($0, in: c) } ?? NSNull()
        return ["meta": meta, "id": c.displayID, "messages": messages.map { pushData($0, in: c) }, "account_id": Self.accountID,
                "last_non_activity_message": lastNonActivity,
                "additional_attributes": [String: Any](), "agent_last_seen_at": 0, "assignee_last_seen_at": 0, "can_reply": true,
                "contact_last_seen_at": 0, "custom_attributes": [String: Any](), "inbox_id": Self.inboxID, "labels": c.labels,
                "muted": false, "snoozed_until": NSNull(), "status": c.status, "created_at": Int(c.createdAt.timeIntervalSince1970),
                "timestamp": Int(c.updatedAt.timeIntervalSince1970), "unread_count": c.messages.filter { $0.type == "incoming" }.count]
    }
}

/// A test asked the stand-in for something it does not have.
public struct StandInError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
