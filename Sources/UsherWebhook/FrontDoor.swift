public import Foundation
public import UsherHTTP
public import UsherRuntime
public import UsherSQLite
public import UsherStore

/// What a backend speaks to Usher over HTTP: how its requests become messages, and how Usher's
/// actions become its calls. The webhook store (`WebhookStore`) does the rest — the listener, the
/// intake committed before the answer, the outbox, retries, dead letters — for any front door:
/// Usher's own JSON API (`MessagesAPI`), or a helpdesk's (Chatwoot's agent-bot webhooks).
public protocol FrontDoor: Sendable {
    /// The path the backend POSTs its events to (`/v1/messages`).
    var intakePath: String { get }

    /// Whether the request may be taken in at all (its signature, its token), before its body is
    /// read as anything; nil when it may, otherwise the refusal (401).
    func authenticate(_ request: HTTPServer.Request, now: Date) -> IntakeError?

    /// The messages and events a request carries, in order, or what is wrong with it (nothing of
    /// a request in error is taken in). May be empty (an event of no concern to the bot).
    func messages(in request: HTTPServer.Request, now: Date) throws(IntakeError) -> [NewMessage]

    /// The calls that deliver a chunk of committed actions, in the order they are to be made.
    func calls(for actions: [StoreAction]) -> [OutboundCall]

    /// Adds what every call needs at the time it is sent (a fresh signature, a token).
    func authorize(_ request: inout HTTPRequest, now: Date)
}

/// Why a request was not taken in: its status and the JSON error naming what is wrong.
public struct IntakeError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    /// The header, key or element at fault (`X-Usher-Signature`, `messages[2].from`).
    public var field: String?

    public init(_ status: Int, _ code: String, _ message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    public var response: HTTPServer.Response { .error(status, code, message, field: field) }
}

/// One call owed to the backend: a request relative to the callback URL, with the key the
/// backend deduplicates on (`Idempotency-Key`). Kept in the outbox as a JSON object until made.
public struct OutboundCall: Sendable, Hashable {
    public var method: String
    /// Appended to the callback URL ("" for the URL itself).
    public var path: String
    public var body: String
    /// Unique per call; sent as `Idempotency-Key`.
    public var key: String
    /// Calls of one conversation are made one at a time, in order.
    public var conversation: String

    public init(method: String = "POST", path: String = "", body: String, key: String, conversation: String) {
        self.method = method
        self.path = path
        self.body = body
        self.key = key
        self.conversation = conversation
    }
}
