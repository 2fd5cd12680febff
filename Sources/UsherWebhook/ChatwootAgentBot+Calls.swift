public import Foundation
public import UsherHTTP
public import UsherSQLite
import UsherEngine
import UsherJSON
import UsherStore

/// Usher's actions as calls of Chatwoot's REST API (config/routes.rb: `resources :conversations`
/// under `api/v1/accounts/:account_id`, the conversation by its display id), with the agent bot's
/// token — which Chatwoot lets create messages, toggle a conversation's status, assign it, read
/// it and read and set its labels (`BOT_ACCESSIBLE_ENDPOINTS`,
/// app/controllers/concerns/access_token_auth_helper.rb).
extension ChatwootAgentBot {
    public func calls(for actions: [StoreAction]) -> [OutboundCall] {
        MessagesAPI.inCommitOrder(actions).flatMap { action -> [OutboundCall] in
            switch action {
            case let .message(m):
                // A reply, and the customer-facing notice of a handoff: a normal outgoing message.
                return [message(m.text, private: false, key: m.id, conversation: m.conversationID, quickReplies: m.quickReplies)]
            case let .handoff(h):
                return handoff(h)
            case let .notification(n):
                // A handoff's own notification: the handoff's note and Chatwoot's list of open
                // conversations tell the agents. A `notify` action without a handoff: a note.
                let a = n.notification
                guard !a.isHandoff else { return [] }
                return [message("Usher (\(n.bot)) for the \(a.queue) agents: \(a.text)", private: true, key: a.idempotencyKey,
                                conversation: a.conversationID)]
            case let .tags(change):
                return [labels(change)]
            }
        }
    }

    /// A handoff: the reason as a private note, the queue's team when `--teams` names one, then
    /// the conversation opened for agents (`POST …/toggle_status` with `status: open`; from
    /// `pending`, by a bot, Chatwoot's `bot_handoff!`: app/controllers/api/v1/accounts/
    /// conversations_controller.rb) — the note and the team are there when agents see it.
    func handoff(_ h: HandoffRecord) -> [OutboundCall] {
        var note = "Usher (\(h.bot)) handed this conversation to agents"
        if let reason = h.reason { note += ": \(reason)" }
        var details: [String] = []
        if let queue = h.queue { details.append("queue \(queue)") }
        if let rule = h.ruleID { details.append("rule \(rule)") }
        if let name = h.customerName { details.append("customer \(name)") }
        if !details.isEmpty { note += " (" + details.joined(separator: ", ") + ")" }
        var calls = [message(note + ".", private: true, key: h.idempotencyKey + ":note", conversation: h.conversationID)]
        if let queue = h.queue, let c = Self.chatwootConversation(h.conversationID), let team = teams.team(queue: queue, account: c.account) {
            var w = JSONWriter(capacity: 32)
            w.byte(UInt8(ascii: "{")); w.key("team_id", first: true); w.int(team); w.byte(UInt8(ascii: "}"))
            calls.append(call("assignments", body: w.text, key: h.idempotencyKey + ":team", conversation: h.conversationID))
        }
        calls.append(call("toggle_status", body: #"{"status":"open"}"#, key: h.idempotencyKey, conversation: h.conversationID))
        return calls
    }

    /// Tag changes become labels. Chatwoot's `POST …/labels` replaces the conversation's whole set
    /// (`update_labels`: app/controllers/concerns/label_concern.rb, app/models/concerns/
    /// labelable.rb), so the call in the outbox holds the change, and `prepare` merges it into the
    /// set Chatwoot has at the time (`GET …/labels`). Chatwoot keeps labels in lower case.
    func labels(_ change: TagChangeRecord) -> OutboundCall {
        var w = JSONWriter(capacity: 64)
        w.byte(UInt8(ascii: "{"))
        w.key("add", first: true); w.stringArray(change.added.map { $0.lowercased() })
        w.key("remove"); w.stringArray(change.removed.map { $0.lowercased() })
        w.byte(UInt8(ascii: "}"))
        return call("labels", body: w.text, key: change.idempotencyKey, conversation: change.conversationID)
    }

    public func authorize(_ request: inout HTTPRequest, now: Date) {
        if let token { request.headers.append(("api_access_token", token)) }
    }

    // MARK: - Before each call

    public func prepare(_ call: OutboundCall, repeated: Bool, read: BackendRead) async -> Preparation {
        if call.path.isEmpty {
            return .failed(.success(HTTPResponse(status: 400, body: Array(("conversation '\(call.conversation.prefix(80))' is not a "
                                                                         + "Chatwoot conversation (ACCOUNT/ID)").utf8))))
        }
        if call.path.hasSuffix("/labels") { return await labels(call, read: read) }
        guard repeated, call.path.hasSuffix("/messages") else { return .send(call) }
        return await made(call, read: read)
    }

    /// A message whose earlier attempt may have reached Chatwoot: made already when the
    /// conversation's latest messages hold one with its key in `content_attributes` (Chatwoot has
    /// no idempotency key on message creation). The conversation as a bot token may read it
    /// (`GET …/conversations/ID`, app/views/api/v1/conversations/partials/_conversation.json.jbuilder)
    /// shows only two messages: `messages`, the last one, and `last_non_activity_message`, the
    /// last that is not an activity message. So the check finds the call's message only while
    /// nothing but activity messages came after it: a customer's message, an agent's, or another
    /// of the bot's written in between hides it, and the repeat makes the message twice
    /// (docs/chatwoot.md, "Exactly once toward Chatwoot").
    func made(_ call: OutboundCall, read: BackendRead) async -> Preparation {
        let path = String(call.path.dropLast("/messages".count))
        let result = await read(path)
        guard case let .success(response) = result, (200..<300).contains(response.status) else { return .failed(result) }
        guard let conversation = Self.json(response.body), case var .array(messages)? = conversation["messages"]?.kind else {
            return .failed(.failure(HTTPError(kind: .failed, message: "GET \(path): no \"messages\" in Chatwoot's answer")))
        }
        if let last = conversation["last_non_activity_message"], case .object = last.kind { messages.append(last) }
        if let found = messages.first(where: { Self.marker($0) == call.key }) {
            let id = found["id"].flatMap { if case let .number(n) = $0.kind { n } else { nil } } ?? "?"
            return .settled("Chatwoot has message \(id) with this key: an earlier attempt made it")
        }
        return .send(call)
    }

    /// The labels Chatwoot has now, changed as the call says: sent as the whole set, or nothing
    /// when they are already so.
    func labels(_ call: OutboundCall, read: BackendRead) async -> Preparation {
        let change = Self.json(Array(call.body.utf8))
        func strings(_ key: String) -> [String] {
            guard case let .array(a)? = change?[key]?.kind else { return [] }
            return a.compactMap { if case let .string(s) = $0.kind { s } else { nil } }
        }
        let result = await read(call.path)
        guard case let .success(response) = result, (200..<300).contains(response.status) else { return .failed(result) }
        guard let answer = Self.json(response.body), case let .array(payload)? = answer["payload"]?.kind else {
            return .failed(.failure(HTTPError(kind: .failed, message: "GET \(call.path): no \"payload\" in Chatwoot's answer")))
        }
        let current = payload.compactMap { if case let .string(s) = $0.kind { s.lowercased() } else { nil } }
        let (added, removed) = (strings("add"), Set(strings("remove")))
        let labels = current.filter { !removed.contains($0) } + added.filter { !current.contains($0) }
        if Set(labels) == Set(current) { return .settled("the labels are so already") }
        var w = JSONWriter(capacity: 64)
        w.byte(UInt8(ascii: "{")); w.key("labels", first: true); w.stringArray(labels); w.byte(UInt8(ascii: "}"))
        var merged = call
        merged.body = w.text
        return .send(merged)
    }

    // MARK: - Helpers

    /// `POST …/messages`: an outgoing message (a note when `private`), marked with its key.
    ///
    /// A reply's buttons make it an `input_select` message, each an item of `title` and `value`
    /// (the only keys Chatwoot takes: app/models/concerns/content_attribute_validator.rb), the
    /// value the title. A press comes back two ways: Chatwoot's web widget writes no message but
    /// updates this one with `submitted_values: [{title, value}]` (the bot gets
    /// `message_updated`: `ChatwootAgentBot.submitted`); channels that turn a select into
    /// interactive buttons of their own (WhatsApp) send the reply as an incoming message.
    /// Chatwoot has no link among a select's items (a `cards` message would show each link as a
    /// card of its own, without the reply's text), so links are written under the text as
    /// Markdown links, which Chatwoot renders.
    func message(_ text: String, private isPrivate: Bool, key: String, conversation: String,
                 quickReplies: [QuickReply] = []) -> OutboundCall {
        let buttons = quickReplies.filter { !$0.isLink }
        var content = text
        for link in quickReplies where link.isLink {
            content += "\n[" + Self.markdownLinkText(link.title) + "](" + Self.markdownLinkDestination(link.url!) + ")"
        }
        var w = JSONWriter(capacity: content.utf8.count + key.utf8.count + 112 + 48 * buttons.count)
        w.byte(UInt8(ascii: "{"))
        w.key("content", first: true); w.string(content)
        w.key("message_type"); w.string("outgoing")
        w.key("private"); w.bool(isPrivate)
        if !buttons.isEmpty { w.key("content_type"); w.string("input_select") }
        w.key("content_attributes"); w.byte(UInt8(ascii: "{")); w.string(Self.markerKey); w.byte(UInt8(ascii: ":")); w.string(key)
        if !buttons.isEmpty {
            w.key("items"); w.byte(UInt8(ascii: "["))
            for (i, b) in buttons.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.byte(UInt8(ascii: "{")); w.key("title", first: true); w.string(b.title); w.key("value"); w.string(b.title)
                w.byte(UInt8(ascii: "}"))
            }
            w.byte(UInt8(ascii: "]"))
        }
        w.byte(UInt8(ascii: "}"))
        w.byte(UInt8(ascii: "}"))
        return call("messages", body: w.text, key: key, conversation: conversation)
    }

    /// A link's address as a Markdown link destination: the characters that would end it
    /// (parentheses, spaces) percent-encoded, which leaves the address the same.
    static func markdownLinkDestination(_ url: String) -> String {
        url.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "(", with: "%28").replacingOccurrences(of: ")", with: "%29")
    }

    /// A link's title as Markdown link text: brackets and backslashes escaped.
    static func markdownLinkText(_ title: String) -> String {
        var out = ""
        for ch in title {
            if ch == "[" || ch == "]" || ch == "\\" { out.append("\\") }
            out.append(ch)
        }
        return out
    }

    /// A POST under the conversation; its path is empty when the conversation is not Chatwoot's
    /// (`prepare` refuses it).
    func call(_ action: String, body: String, key: String, conversation: String) -> OutboundCall {
        let path = Self.chatwootConversation(conversation).map { "/api/v1/accounts/\($0.account)/conversations/\($0.display)/\(action)" }
        return OutboundCall(path: path ?? "", body: body, key: key, conversation: conversation)
    }

    static func json(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { b in try? JSONReader.parse(b) }
    }
}
