public import Foundation
public import UsherHTTP
public import UsherRuntime
public import UsherSQLite
public import UsherStore
import UsherJSON
import UsherStdio

/// Usher's own front door (`--store webhook:CALLBACK_URL`): `POST /v1/messages` with one message
/// or a JSON array of them, each an object of the transcript line format (docs/replay.md; the
/// stdio store's input: `conversation`, `id`, `from`, `text`, `at`, `sender_id`, `sender_name`,
/// `channel`, `locale`, or `"event":"close"`), every request signed (`WebhookSigner`); each action
/// POSTed to the callback URL as the stdio store's action line, signed the same way.
public struct MessagesAPI: FrontDoor {
    /// Nil: requests are neither checked nor signed (`--signatures off`).
    public let signer: WebhookSigner?
    /// The most messages one request may carry.
    public let maxMessages: Int

    public init(signer: WebhookSigner?, maxMessages: Int = 1_000) {
        self.signer = signer
        self.maxMessages = maxMessages
    }

    public var channel: String { WebhookStore.channel }
    public var intakePath: String { "/v1/messages" }

    public func authenticate(_ request: HTTPServer.Request, now: Date) -> IntakeError? {
        IntakeError.unsigned(request, by: signer, now: now)
    }

    public func messages(in request: HTTPServer.Request, now: Date) throws(IntakeError) -> [NewMessage] {
        let value = try IntakeError.json(request.body)
        let items: [(value: JSONValue, field: String)]
        switch value.kind {
        case .object:
            items = [(value, "")]
        case let .array(elements):
            guard !elements.isEmpty else { throw IntakeError(400, "no-messages", "the array holds no messages", field: "body") }
            guard elements.count <= maxMessages else {
                throw IntakeError(413, "too-many-messages", "\(elements.count) messages in one request; at most \(maxMessages)",
                                  field: "body")
            }
            items = elements.enumerated().map { ($1, "messages[\($0)]") }
        default:
            throw IntakeError(400, "bad-json", "expected a message (a JSON object) or an array of them, got \(value.typeName)",
                              field: "body")
        }
        var out: [NewMessage] = []
        out.reserveCapacity(items.count)
        for (item, prefix) in items {
            do {
                out.append(try InputLine.message(item, defaultID: nil, now: now))
            } catch {
                let field = [prefix, error.field ?? ""].filter { !$0.isEmpty }.joined(separator: ".")
                throw IntakeError(400, "bad-message", (prefix.isEmpty ? "" : "\(prefix): ") + error.message,
                                  field: field.isEmpty ? "body" : field)
            }
        }
        return out
    }

    public func calls(for actions: [StoreAction]) -> [OutboundCall] {
        Self.inCommitOrder(actions).map { action in
            OutboundCall(body: ActionLine.encode(action), key: action.idempotencyKey, conversation: action.conversation)
        }
    }

    /// The backend keeps its own copy of the tags when it wants one: each decision's changes
    /// are a `tags` call, after the decision's reply or notice.
    public var mirrorsTags: Bool { true }

    public func authorize(_ request: inout HTTPRequest, now: Date) {
        if let signer {
            let path = URLComponents(string: request.url)?.path ?? ""
            request.headers += signer.headers(method: request.method, path: path, body: request.body, at: now)
        }
    }

    /// A chunk of actions as `SQLiteStore.deliverActions` hands it (replies and notices by seq,
    /// then handoffs, then notifications) in the order they were committed: the actions of one
    /// inbound message (keys `BOT:MESSAGE:…`) together, where its first reply or notice stands —
    /// so a handoff comes right after its notice, before the answers to later messages.
    static func inCommitOrder(_ actions: [StoreAction]) -> [StoreAction] {
        var groups: [String: [StoreAction]] = [:]
        var order: [String] = []
        for action in actions {
            let key = action.idempotencyKey
            let group = key.lastIndex(of: ":").map { String(key[..<$0]) } ?? key
            if groups[group] == nil { order.append(group) }
            groups[group, default: []].append(action)
        }
        return order.flatMap { groups[$0]! }
    }
}

extension StoreAction {
    /// The conversation the action is about.
    var conversation: String {
        switch self {
        case let .message(m): m.conversationID
        case let .handoff(h): h.conversationID
        case let .notification(n): n.notification.conversationID
        case let .tags(t): t.conversationID
        }
    }
}
