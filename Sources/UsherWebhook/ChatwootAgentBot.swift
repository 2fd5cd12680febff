public import Foundation
import UsherEngine
public import UsherJSON
public import UsherRuntime
public import UsherStore
import UsherStdio

/// Chatwoot's agent-bot protocol as a front door (`--store chatwoot+http://HOST:PORT`,
/// docs/chatwoot.md). Chatwoot POSTs the events of the inboxes the bot is connected to to the
/// bot's outgoing URL (`/chatwoot/webhook` on `--listen`), signed with the bot's secret; Usher
/// acts through Chatwoot's REST API with the bot's access token, through the webhook store's
/// outbox.
///
/// The shapes are Chatwoot's own (chatwoot/chatwoot): an event is `webhook_data` of its record
/// merged with `event` (app/listeners/agent_bot_listener.rb) — a message's
/// (app/models/message.rb: `id`, `content`, `created_at`, `message_type` "incoming" |
/// "outgoing" | "activity" | "template", `content_type`, `private`, `content_attributes`,
/// `sender`, `inbox`, `conversation`, `account`), or a conversation's
/// (app/presenters/conversations/event_data_presenter.rb: `id` — the display id —, `status`,
/// `messages`, `meta`, `timestamp`, `updated_at`, and `account`). A sender's `type` is "contact",
/// "user" or "agent_bot" (the `webhook_data` of app/models/contact.rb, user.rb, agent_bot.rb).
public struct ChatwootAgentBot: FrontDoor {
    /// The key in a message's `content_attributes` that carries the action's idempotency key:
    /// how Usher knows its own messages, and finds one an earlier attempt made.
    public static let markerKey = "usher_key"

    /// Checks Chatwoot's signature of each webhook (`X-Chatwoot-Signature`); nil: not checked
    /// (`--signatures off`).
    public let signer: WebhookSigner?
    /// The agent bot's access token, sent as `api_access_token` (nil: calls cannot be made).
    public let token: String?
    /// The team a handoff's queue is assigned to.
    public let teams: Teams

    public init(signer: WebhookSigner?, token: String?, teams: Teams = Teams()) {
        self.signer = signer
        self.token = token
        self.teams = teams
    }

    public var channel: String { "chatwoot" }
    public var intakePath: String { "/chatwoot/webhook" }
    /// Chatwoot sends an agent-bot webhook again after a 429 or a 500 only (three tries, 3 s
    /// apart: app/jobs/agent_bots/webhook_job.rb, lib/webhooks/trigger.rb). When a webhook fails
    /// for good, `handle_error` opens the conversation for its agents only if the event was
    /// `message_created` or `message_updated`, the conversation is still `pending`, and the
    /// account has not set `keep_pending_on_bot_failure`; any other event is just lost.
    public var retryStatus: Int { 429 }
    public var mirrorsTags: Bool { true }
    /// Chatwoot sends the bot its own messages as `message_created` webhooks, with the marker.
    public var echoesCalls: Bool { true }

    /// Usher's conversation id for Chatwoot's conversation `display` of account `account`:
    /// `ACCOUNT/ID` (display ids are numbered per account).
    public static func conversationID(account: String, display: String) -> String { "\(account)/\(display)" }

    /// The account and display id of one of Usher's conversation ids (nil: not `ACCOUNT/ID`).
    public static func chatwootConversation(_ id: String) -> (account: Int, display: Int)? {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let account = Int(parts[0]), let display = Int(parts[1]), account > 0, display > 0 else { return nil }
        return (account, display)
    }

    // MARK: - Events in

    public func authenticate(_ request: HTTPServer.Request, now: Date) -> IntakeError? {
        IntakeError.unsigned(request, by: signer, now: now)
    }

    public func messages(in request: HTTPServer.Request, now: Date) throws(IntakeError) -> [NewMessage] {
        try intake(request, now: now).messages
    }

    public func intake(_ request: HTTPServer.Request, now: Date) throws(IntakeError) -> Intake {
        switch try Self.event(try IntakeError.json(request.body), now: now) {
        case let .message(m), let .close(m): Intake(messages: [m])
        case .skipped: Intake()
        case let .echo(key): Intake(echoes: [key])
        case let .unplaced(why): Intake(warning: why)
        }
    }

    /// What one webhook means to Usher.
    public enum Event: Sendable, Equatable {
        /// A customer's message, or an agent's (which takes the conversation over).
        case message(NewMessage)
        /// The conversation was resolved: the next customer message starts a new session.
        case close(NewMessage)
        /// Of no concern to the bot, and why.
        case skipped(String)
        /// Usher's own message (a reply, a notice, a note), shown back by Chatwoot with the key
        /// of the call that made it: that call is made.
        case echo(String)
        /// One the bot would act on but cannot place (a resolution naming no account): answered
        /// 200 all the same — Chatwoot does not send a conversation event again — and logged.
        case unplaced(String)
    }

    /// Reads one webhook's JSON; a 400 naming the field when an event Usher takes in lacks one.
    public static func event(_ value: JSONValue, now: Date) throws(IntakeError) -> Event {
        guard case .object = value.kind else {
            throw IntakeError(400, "bad-event", "expected a Chatwoot event (a JSON object), got \(value.typeName)", field: "body")
        }
        let event = try string(value, "event", required: true)!
        switch event {
        case "message_created":
            return try message(value, now: now)
        case "message_updated":
            return try submitted(value, now: now)
        case "conversation_resolved":
            return try close(value, now: now)
        case "conversation_status_changed":
            let status = try string(value, "status")
            return status == "resolved" ? try close(value, now: now) : .skipped("the conversation is now \(status ?? "?")")
        case "conversation_opened":
            // Sent for the bot's own handoff too (toggle_status), and the payload does not say who
            // opened it: an agent takes over by writing, as in the seed.
            return .skipped("conversation_opened: an agent takes over by writing")
        default:
            return .skipped("\(event.prefix(40)): not an event the bot acts on")
        }
    }

    /// `message_created`: a customer's message, an agent's, or one skipped (docs/chatwoot.md).
    static func message(_ value: JSONValue, now: Date) throws(IntakeError) -> Event {
        let id = try number(value, "id")
        let type = try string(value, "message_type", required: true)!
        // Usher's own, whatever else it is (a handoff's note is private): the call that made it
        // is made.
        if type == "outgoing", let key = marker(value) { return .echo(key) }
        if value["private"].map({ if case .bool(true) = $0.kind { true } else { false } }) == true {
            return .skipped("a private note")
        }
        let from: SenderRole
        let sender = value["sender"]
        let senderType = sender.flatMap { $0["type"] }.flatMap { if case let .string(s) = $0.kind { s } else { nil } }
        switch type {
        case "incoming":
            from = .customer
        case "outgoing":
            switch senderType {
            case "user": from = .agent
            case "agent_bot": return .skipped("a bot's message")
            default: return .skipped("an outgoing message not from an agent (\(senderType ?? "no sender"))")
            }
        default:
            return .skipped("a message of type \(type.prefix(20))")
        }
        let account = try accountID(value, conversation: value["conversation"])
        guard let conversation = value["conversation"] else {
            throw IntakeError(400, "bad-event", "message_created without its \"conversation\"", field: "conversation")
        }
        let display = try number(conversation, "id", field: "conversation.id")
        let text: String
        switch value["content"]?.kind {
        case let .string(s)?: text = s
        case nil, .null?: text = ""   // attachments only
        default: throw IntakeError(400, "bad-event", "\"content\" must be a string or null", field: "content")
        }
        let senderID = sender.flatMap { s in s["id"] }.flatMap { if case let .number(n) = $0.kind { n } else { nil } }
        let name = sender.flatMap { $0["name"] }.flatMap { if case let .string(s) = $0.kind { s } else { nil } }
        return .message(NewMessage(id: id, conversationID: conversationID(account: account, display: display), from: from,
                                   senderID: senderID.map { (from == .agent ? "user:" : "contact:") + $0 }, senderName: name,
                                   text: text, at: try time(value["created_at"], field: "created_at") ?? now,
                                   channel: channelName(conversation)))
    }

    /// `message_updated` of the bot's own `input_select` message with `submitted_values`: the
    /// customer pressed one of its buttons in Chatwoot's web widget, which does not write a
    /// message of its own but updates the select (`PATCH /api/v1/widget/messages/:id` with
    /// `submitted_values`: app/controllers/api/v1/widget/messages_controller.rb `update`; the
    /// update is sent to the bot as `message_updated`, app/listeners/agent_bot_listener.rb). It
    /// is the customer's message: the item's `value`, else its `title`, from the conversation's
    /// contact, with the id `ID@submitted` — the same for a repeated or later update of the same
    /// select, so that one press is taken once. Any other update is skipped.
    static func submitted(_ value: JSONValue, now: Date) throws(IntakeError) -> Event {
        guard case .string("outgoing")? = value["message_type"]?.kind, case .string("input_select")? = value["content_type"]?.kind else {
            return .skipped("message_updated: not a select of the bot's")
        }
        guard case let .array(values)? = value["content_attributes"]?["submitted_values"]?.kind, let item = values.first else {
            return .skipped("message_updated: nothing submitted")
        }
        func text(_ key: String) -> String? {
            if case let .string(s)? = item[key]?.kind, !s.isEmpty { s } else { nil }
        }
        guard let picked = text("value") ?? text("title") else {
            throw IntakeError(400, "bad-event", "submitted_values[0] has neither a \"value\" nor a \"title\"",
                              field: "content_attributes.submitted_values[0].value")
        }
        let id = try number(value, "id")
        let account = try accountID(value, conversation: value["conversation"])
        guard let conversation = value["conversation"] else {
            throw IntakeError(400, "bad-event", "message_updated without its \"conversation\"", field: "conversation")
        }
        let display = try number(conversation, "id", field: "conversation.id")
        // The widget's contact: the conversation's `meta.sender` (the event's `sender` is the bot).
        let contact = conversation["meta"]?["sender"]
        let contactID = contact.flatMap { $0["id"] }.flatMap { if case let .number(n) = $0.kind { n } else { nil } }
        let name = contact.flatMap { $0["name"] }.flatMap { if case let .string(s) = $0.kind { s } else { nil } }
        return .message(NewMessage(id: id + "@submitted", conversationID: conversationID(account: account, display: display),
                                   from: .customer, senderID: contactID.map { "contact:" + $0 }, senderName: name, text: picked,
                                   at: now, channel: channelName(conversation)))
    }

    /// `conversation_resolved` (or `conversation_status_changed` to resolved): a close event.
    /// Its id is the conversation's and the time it changed (`updated_at`, else `timestamp`), so
    /// that the two events of one resolution, and Chatwoot's retries, close it once. A
    /// resolution naming no account anywhere (`accountID`) cannot be placed: `.unplaced`.
    static func close(_ value: JSONValue, now: Date) throws(IntakeError) -> Event {
        let display = try number(value, "id")
        let account: String
        do {
            account = try accountID(value, conversation: value)
        } catch {
            return .unplaced("conversation \(display) was resolved, but the event names no account (no \"account\", "
                             + "\"account_id\" or message with one): its next customer message continues the session")
        }
        guard let changed = value["updated_at"] ?? value["timestamp"], case let .number(stamp) = changed.kind else {
            throw IntakeError(400, "bad-event", "a resolved conversation without \"updated_at\" or \"timestamp\"", field: "updated_at")
        }
        let conversation = conversationID(account: account, display: display)
        return .close(NewMessage(id: "\(conversation)@resolved:\(stamp)", conversationID: conversation, kind: .close, from: .system,
                                 text: "", at: Double(stamp).map { Date(timeIntervalSince1970: $0) } ?? now))
    }

    // MARK: - Fields

    /// The account: the event's `account`, else its conversation's (`account` or `account_id`),
    /// else the conversation's last message's `account_id` — how a conversation event written by
    /// app/presenters/conversations/event_data_presenter.rb, which names no account of its own,
    /// tells it (its `messages` hold the last message's `push_event_data`).
    static func accountID(_ value: JSONValue, conversation: JSONValue?) throws(IntakeError) -> String {
        let candidates = [value["account"]?["id"], conversation?["account"]?["id"], conversation?["account_id"],
                          conversation?["messages"].flatMap { if case let .array(a) = $0.kind { a.first?["account_id"] } else { nil } }]
        for case let v? in candidates { if case let .number(n) = v.kind { return n } }
        throw IntakeError(400, "bad-event", "no account: expected \"account\": {\"id\": N}", field: "account.id")
    }

    static func string(_ value: JSONValue, _ key: String, required: Bool = false) throws(IntakeError) -> String? {
        switch value[key]?.kind {
        case let .string(s)?: return s
        case nil, .null?:
            if required { throw IntakeError(400, "bad-event", "missing \"\(key)\"", field: key) }
            return nil
        default: throw IntakeError(400, "bad-event", "\"\(key)\" must be a string", field: key)
        }
    }

    /// A whole number as written (Chatwoot's ids).
    static func number(_ value: JSONValue, _ key: String, field: String? = nil) throws(IntakeError) -> String {
        guard case let .number(n)? = value[key]?.kind, !n.isEmpty, n.allSatisfy(\.isNumber) else {
            throw IntakeError(400, "bad-event", "\"\(field ?? key)\" must be a whole number (Chatwoot's id)", field: field ?? key)
        }
        return n
    }

    /// Rails writes times as ISO 8601 (`2026-12-06T10:00:00.123Z`); seconds since 1970 are taken too.
    static func time(_ value: JSONValue?, field: String) throws(IntakeError) -> Date? {
        switch value?.kind {
        case nil, .null?: return nil
        case let .string(s)?:
            guard let d = InputLine.date(s) else {
                throw IntakeError(400, "bad-event", "\"\(field)\" is not an ISO 8601 time: '\(s.prefix(40))'", field: field)
            }
            return d
        case let .number(n)?:
            guard let seconds = Double(n) else { throw IntakeError(400, "bad-event", "\"\(field)\" is not a time", field: field) }
            return Date(timeIntervalSince1970: seconds)
        default: throw IntakeError(400, "bad-event", "\"\(field)\" is not a time", field: field)
        }
    }

    /// The conversation's channel for rules' `channel:`: Chatwoot's channel type without
    /// `Channel::`, in lower case (`Channel::WebWidget` → `webwidget`, `Channel::Whatsapp` →
    /// `whatsapp`).
    static func channelName(_ conversation: JSONValue) -> String? {
        guard case let .string(type)? = conversation["channel"]?.kind, !type.isEmpty else { return nil }
        return (type.hasPrefix("Channel::") ? String(type.dropFirst("Channel::".count)) : type).lowercased()
    }

    /// The idempotency key Usher put in a message's `content_attributes`, if it did.
    static func marker(_ message: JSONValue) -> String? {
        if case let .string(key)? = message["content_attributes"]?[markerKey]?.kind { key } else { nil }
    }
}

extension ChatwootAgentBot {
    /// Which Chatwoot team a handoff's queue is assigned to (`--teams general=3,billing=5`;
    /// `ACCOUNT/QUEUE=ID` for one account's team: team ids belong to an account).
    public struct Teams: Sendable, Equatable {
        private var ids: [String: Int] = [:]

        public init() {}

        /// Reads `QUEUE=ID[,…]`; throws what is wrong when it is not that.
        public init(parsing text: String) throws(StoreError) {
            for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, let id = Int(parts[1]), id > 0 else {
                    throw StoreError("bad-option", "--teams entry '\(entry.prefix(60))' is not QUEUE=TEAM_ID (general=3) "
                                     + "or ACCOUNT/QUEUE=TEAM_ID (1/general=3), the team's id a whole number")
                }
                ids[parts[0]] = id
            }
        }

        /// The team of `queue` in `account`: the account's own entry, else the queue's.
        public func team(queue: String, account: Int) -> Int? { ids["\(account)/\(queue)"] ?? ids[queue] }

        public var isEmpty: Bool { ids.isEmpty }
    }
}
