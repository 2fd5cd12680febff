public import Foundation
public import UsherHTTP
public import UsherRuntime
public import UsherSQLite
public import UsherStore
import UsherJSON

/// What a backend speaks to Usher over HTTP: how its requests become messages, and how Usher's
/// actions become its calls. The webhook store (`WebhookStore`) does the rest — the listener, the
/// intake committed before the answer, the outbox, retries, dead letters — for any front door:
/// Usher's own JSON API (`MessagesAPI`), or a helpdesk's (Chatwoot's agent-bot webhooks).
public protocol FrontDoor: Sendable {
    /// Its delivery channel in the state file (`deliveries`, `outbox`, `deadletters`): `webhook`,
    /// `chatwoot`.
    var channel: String { get }

    /// The path the backend POSTs its events to (`/v1/messages`).
    var intakePath: String { get }

    /// Whether the request may be taken in at all (its signature, its token), before its body is
    /// read as anything; nil when it may, otherwise the refusal (401).
    func authenticate(_ request: HTTPServer.Request, now: Date) -> IntakeError?

    /// The messages and events a request carries, in order, or what is wrong with it (nothing of
    /// a request in error is taken in). May be empty (an event of no concern to the bot).
    func messages(in request: HTTPServer.Request, now: Date) throws(IntakeError) -> [NewMessage]

    /// What a request brings, in full: its messages (`messages(in:)` unless said) and what to log
    /// about a request taken but of no use (answered 200: the backend would not send it again).
    func intake(_ request: HTTPServer.Request, now: Date) throws(IntakeError) -> Intake

    /// The calls that deliver a chunk of committed actions, in the order they are to be made.
    func calls(for actions: [StoreAction]) -> [OutboundCall]

    /// Adds what every call needs at the time it is sent (a fresh signature, a token).
    func authorize(_ request: inout HTTPRequest, now: Date)

    /// The status of an answer that asks the backend to send a request again shortly (the state
    /// file failed, the worker is stopping): one its retries cover. 503 unless said.
    var retryStatus: Int { get }

    /// Whether the backend keeps tags of its own that the bot's `tag` and `untag` actions change:
    /// then `calls(for:)` gets `.tags` actions too. False unless said: the tags stay in Usher's
    /// state.
    var mirrorsTags: Bool { get }

    /// Whether the backend shows Usher's calls back as requests to the listener (Chatwoot sends
    /// the bot's own messages as webhooks, with their marker): their keys are recorded
    /// (`Intake.echoes`), a repeat whose echo came is settled without a call, and a call left
    /// without an answer waits a little (`Policy.echoWait`) for its echo before it is repeated.
    var echoesCalls: Bool { get }

    /// What to send, just before a call is sent: the call as it is (unless said), one rewritten
    /// from what the backend has now (Chatwoot's labels, a set replaced whole, merged with the
    /// change), or nothing when the backend has it already. `repeated`: an earlier attempt may
    /// have reached the backend without its answer reaching Usher (a timeout, a lost connection,
    /// a 5xx, or a process that died with the call under way) — a backend without idempotency
    /// keys is asked first (`read`) whether it made the call. Called before every attempt.
    func prepare(_ call: OutboundCall, repeated: Bool, read: BackendRead) async -> Preparation
}

extension FrontDoor {
    public func intake(_ request: HTTPServer.Request, now: Date) throws(IntakeError) -> Intake {
        Intake(messages: try messages(in: request, now: now))
    }
    public var retryStatus: Int { 503 }
    public var mirrorsTags: Bool { false }
    public var echoesCalls: Bool { false }
    public func prepare(_ call: OutboundCall, repeated: Bool, read: BackendRead) async -> Preparation { .send(call) }
}

/// What one request to a front door brings (`FrontDoor.intake`).
public struct Intake: Sendable, Equatable {
    /// The messages and events to take in, in order.
    public var messages: [NewMessage]
    /// Why the request, taken, is of no use and worth a warning in the log (an event Usher cannot
    /// place); nil when it is not.
    public var warning: String?
    /// Keys of Usher's own calls the backend shows back (Chatwoot's webhook of a message the bot
    /// made, with its marker): recorded, so a repeat of the call is known to be made already.
    public var echoes: [String]

    public init(messages: [NewMessage] = [], warning: String? = nil, echoes: [String] = []) {
        self.messages = messages
        self.warning = warning
        self.echoes = echoes
    }
}

/// A GET of `path` (relative to the base URL the calls go to), authorized as the calls are: how a
/// front door's `prepare` asks the backend what it has.
public typealias BackendRead = @Sendable (_ path: String) async -> Result<HTTPResponse, HTTPError>

/// What a front door makes of a call just before it is sent (`FrontDoor.prepare`).
public enum Preparation: Sendable {
    /// Send this call: the one given, or one made from what the backend has now.
    case send(OutboundCall)
    /// Send nothing: the backend has what the call would make (an earlier attempt made it; the
    /// labels are already so). It counts as delivered; the text says why, for the log.
    case settled(String)
    /// The read before the call failed: the attempt fails as a call answered so would (tried
    /// again after a timeout, no connection, a 5xx, 408 or 429; a dead letter on any other 4xx).
    case failed(Result<HTTPResponse, HTTPError>)
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

    /// The 401 for a request `signer` refuses (nil: it takes it, or there is no signer).
    static func unsigned(_ request: HTTPServer.Request, by signer: WebhookSigner?, now: Date) -> IntakeError? {
        guard let signer else { return nil }
        do {
            try signer.check(method: request.method, path: request.path, body: request.body, headers: request.headers, now: now)
            return nil
        } catch {
            return IntakeError(401, "bad-signature", error.message, field: error.field)
        }
    }

    /// A request's body as JSON, or the 400 that says where it is not (line and column).
    static func json(_ body: [UInt8]) throws(IntakeError) -> JSONValue {
        guard String(validating: body, as: UTF8.self) != nil else {
            throw IntakeError(400, "bad-json", "the body is not valid UTF-8", field: "body")
        }
        let parsed: Result<JSONValue, IntakeError> = body.withUnsafeBufferPointer { b in
            do throws(JSONError) {
                return .success(try JSONReader.parse(b))
            } catch {
                let (line, column) = position(of: error.offset, in: b)
                return .failure(IntakeError(400, "bad-json", "invalid JSON at line \(line), column \(column): \(error.message)",
                                            field: "body"))
            }
        }
        return try parsed.get()
    }

    /// 1-based line and column of a byte offset (columns in Unicode scalars), for JSON errors.
    static func position(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        let end = min(offset, bytes.count)
        var lineStart = 0, line = 1
        for i in 0..<end where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        let column = JSONReader.column(ofOffset: end - lineStart, in: UnsafeBufferPointer(rebasing: bytes[lineStart...]))
        return (line, column)
    }
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
