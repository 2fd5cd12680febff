public import Foundation
public import UsherRuntime
public import UsherSQLite
public import UsherStore
import UsherEngine
import UsherHTTP
import UsherJSON

/// The webhook store (`--store webhook:CALLBACK_URL --listen ADDR`): Usher beside a backend that
/// speaks only HTTP. Messages come in as requests to the listener (`FrontDoor`), each answered
/// 202 only once it is committed to the embedded SQLite state file; actions go out as calls to
/// the callback URL, from an outbox in the same file — signed, with an `Idempotency-Key`, each
/// conversation's in order, retried with backoff, and kept as dead letters when they cannot be
/// delivered. The same file holds what the worker needs (`SQLiteBackedStore`), so a restart
/// decides nothing twice and sends nothing twice (a call is repeated only when the process died
/// between the receiver's answer and the record of it: the same key, for the receiver to skip).
///
/// With another front door, the same store is another backend's connector: Chatwoot's agent bot
/// (`ChatwootAgentBot`, `--store chatwoot+https://HOST`), whose calls carry the bot's token and
/// are checked before a repeat (`FrontDoor.prepare`) since Chatwoot skips no key.
///
/// Only `usher run` (`StoreRequest.worker`) listens and delivers; the other commands read and
/// write the state file (`usher send`, `usher inbox`, `usher deadletters`).
public final class WebhookStore: SQLiteBackedStore, ServingStore {
    /// The delivery channel of Usher's own front door (`MessagesAPI`) in the state file
    /// (`deliveries`, `outbox`, `deadletters`); another front door has its own (`channel`).
    public static let channel = "webhook"
    /// The state file when `--state` names none.
    public static let defaultStatePath = "usher-state.db"

    /// What the store is told.
    public struct Options: Sendable {
        /// Where actions go: `http://` or `https://`.
        public var callbackURL: String
        /// Where to listen (`HOST:PORT`); nil: neither listen nor deliver (not a worker).
        public var listen: String?
        public var limits = HTTPServer.Limits()
        /// Attempts per call before it becomes a dead letter.
        public var deliveryAttempts = 12
        /// The wait after a call's first failure (doubled after each).
        public var firstBackoff: Duration = .milliseconds(500)
        /// The longest wait between two attempts of a call.
        public var longestBackoff: Duration = .seconds(60)
        /// Conversations whose calls are made at once.
        public var lanes = 8
        /// The longest one call may take.
        public var callTimeout: Duration = .seconds(10)
        /// Why calls cannot be made, when they cannot (a command that only reads was not given the
        /// secret that signs them, or the token that authorizes them): what `resend` says.
        public var callsUnauthorized: String?
        public var clock: @Sendable () -> Date = { Date() }

        public init(callbackURL: String, listen: String? = nil) {
            self.callbackURL = callbackURL
            self.listen = listen
        }
    }

    public let database: SQLiteStore
    public let options: Options
    let door: any FrontDoor
    let events: WebhookEvents
    private let worker: Locked<Worker?>
    private let running: Running?
    private let closed = Locked(false)

    /// The listener and what runs behind it, in worker mode.
    private struct Running: Sendable {
        let server: HTTPServer
        let jobs: AsyncStream<Job>.Continuation
        let intake: Task<Void, Never>
        let delivery: Delivery
        let delivering: Task<Void, Never>
    }

    private final class WeakStore: Sendable {
        private let store = Locked(Weak())
        private struct Weak { weak var value: WebhookStore? }
        var value: WebhookStore? {
            get { store.withLock { $0.value } }
            set { store.withLock { $0.value = newValue } }
        }
    }

    /// Work for the intake, in arrival order, on the state file's thread.
    enum Job: Sendable {
        case messages([NewMessage], HTTPServer.Responder)
        case conversation(String, HTTPServer.Responder)
    }

    /// Opens (or creates) the state file; with `options.listen`, starts listening and delivering.
    /// `warn`: where warnings go until a worker is served (`serve`).
    public init(database: SQLiteStore, door: any FrontDoor, options: Options,
                warn: (@Sendable (String, [(String, String)]) -> Void)? = nil) async throws {
        self.database = database
        self.door = door
        self.options = options
        let worker = Locked<Worker?>(nil)
        self.worker = worker
        let events = WebhookEvents(warn: warn)
        self.events = events
        do {
            try await database.prepareOutbox()
        } catch {
            try? await database.close()
            throw error
        }
        guard let listen = options.listen else {
            running = nil
            return
        }
        let (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
        // The listener reaches the store through a weak reference, set once the store is whole: it
        // must not keep the store alive. (A closure kept in a `Locked` would not do: each `withLock`
        // reading it through its `inout` wraps it in two more reabstraction thunks, for good.)
        let target = WeakStore()
        let server: HTTPServer
        do {
            server = try HTTPServer(address: listen, limits: options.limits, report: { events.log($0, $1, $2) }) { request, responder in
                guard let store = target.value else { return responder.respond(.error(503, "starting", "starting; send again shortly")) }
                store.route(request, responder)
            }
        } catch {
            try? await database.close()
            throw StoreError(error.code, error.message)
        }
        let delivery = Delivery(database: database, channel: door.channel, door: door, callbackURL: options.callbackURL,
                                policy: Delivery.Policy(attempts: options.deliveryAttempts, firstBackoff: options.firstBackoff,
                                                        longestBackoff: options.longestBackoff, lanes: options.lanes,
                                                        timeout: options.callTimeout),
                                holder: "webhook@" + server.address, events: events, clock: options.clock)
        // Both run from here until `close()`, which ends and awaits them: the intake on the state
        // file's thread (its appends then run inline), the delivery wherever.
        let intake = Task(executorPreference: database.taskExecutor) {
            await Self.takeIn(jobs, database: database, events: events, retryStatus: door.retryStatus) {
                worker.withLock { $0?.bots.map(\.id) } ?? []
            }
        }
        running = Running(server: server, jobs: continuation, intake: intake, delivery: delivery,
                          delivering: Task { await delivery.run() })
        target.value = self
    }

    /// The address the listener is bound to (nil when not listening).
    public var listenAddress: String? { running?.server.address }

    /// The front door's delivery channel in the state file.
    public var channel: String { door.channel }

    public func serve(_ worker: Worker) {
        self.worker.withLock { $0 = worker }
        events.attach(log: worker.log, metrics: worker.metrics)
        if let running {
            events.info("webhook-listening", [("address", running.server.address), ("intake", door.intakePath),
                                              ("callback", Self.redacted(options.callbackURL))])
        }
    }

    // MARK: ChatStore

    public func commit(batch: [Commit]) async throws -> [CommitResult] {
        do {
            let results = try await database.commit(batch: batch)
            if results.contains(where: \.isWritten) { running?.delivery.committed() }
            return results
        } catch {
            // A partly failed batch still committed the others.
            running?.delivery.committed()
            throw error
        }
    }

    public func commit(_ commit: Commit) async throws -> CommitResult {
        let result = try await database.commit(commit)
        if result.isWritten { running?.delivery.committed() }
        return result
    }

    /// Takes in what was received (answering those requests), stops listening, ends the calls
    /// under way (made again at the next start), closes the state file.
    public func close() async throws {
        guard closed.withLock({ c in defer { c = true }; return !c }) else { return }
        if let running {
            running.jobs.finish()
            await running.intake.value
            running.server.close()
            running.delivering.cancel()
            running.delivery.stop()
            await running.delivering.value
        }
        try await database.close()
    }

    // MARK: - Dead letters

    /// The calls given up on, oldest first.
    public func deadLetters() async throws -> [DeadLetter] { try await database.deadLetters(channel: channel) }

    /// What sending a dead letter again came to.
    public struct Resent: Sendable {
        public var letter: DeadLetter
        /// The receiver took it (2xx): it is no longer a dead letter.
        public var delivered: Bool
        /// The status and what the receiver said, or why there was no answer.
        public var detail: String
    }

    /// Sends `letters` again now, one after another, signed or authorized as the worker's calls
    /// are, each prepared as a repeat (a backend without idempotency keys is asked first whether
    /// it has the call); those the receiver takes, or has, are removed from the dead letters, the
    /// others stay.
    public func resend(_ letters: [DeadLetter]) async throws -> [Resent] {
        if let why = options.callsUnauthorized { throw StoreError("no-credentials", why) }
        let client = HTTPClient(connections: 1, timeout: options.callTimeout)
        defer { client.close() }
        var out: [Resent] = []
        for letter in letters {
            guard let call = Delivery.decode(letter.call) else {
                out.append(Resent(letter: letter, delivered: false, detail: "a call this version cannot read"))
                continue
            }
            let outcome = await Delivery.send(call, repeated: true, to: options.callbackURL, through: client, door: door,
                                              timeout: options.callTimeout, clock: options.clock)
            switch outcome {
            case let .delivered(status):
                try await database.removeDeadLetter(channel: channel, id: letter.id)
                out.append(Resent(letter: letter, delivered: true, detail: "HTTP \(status)"))
            case let .settled(why):
                try await database.removeDeadLetter(channel: channel, id: letter.id)
                out.append(Resent(letter: letter, delivered: true, detail: why))
            case let .failed(_, error, _, _), let .refused(_, error):
                out.append(Resent(letter: letter, delivered: false, detail: error))
            }
        }
        return out
    }

    // MARK: - Requests (on the listener's thread)

    private func route(_ request: HTTPServer.Request, _ responder: HTTPServer.Responder) {
        let isRead = request.method == "GET" || request.method == "HEAD"
        switch request.path {
        case "/healthz", "/readyz", "/metrics":
            responder.respond(isRead ? health(request.path) : Self.methodNotAllowed("GET"))
        case door.intakePath:
            guard request.method == "POST" else { return responder.respond(Self.methodNotAllowed("POST")) }
            take(request, responder)
        case let path where path.hasPrefix("/v1/conversations/") && path.count > "/v1/conversations/".count:
            guard isRead else { return responder.respond(Self.methodNotAllowed("GET")) }
            if let refusal = door.authenticate(request, now: options.clock()) { return responder.respond(refusal.response) }
            enqueue(.conversation(String(path.dropFirst("/v1/conversations/".count)), responder), responder)
        default:
            responder.respond(.error(404, "not-found", "no such path: POST \(door.intakePath), GET /v1/conversations/ID, /healthz, "
                                     + "/readyz or /metrics"))
        }
        events.metrics.increment("usher_webhook_requests_total", ["path": Self.pathLabel(request.path, door.intakePath)])
    }

    /// Checks a POST of messages and queues it for the intake; errors are answered at once.
    private func take(_ request: HTTPServer.Request, _ responder: HTTPServer.Responder) {
        let now = options.clock()
        let type = request.header("Content-Type")?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            return refuse(IntakeError(415, "unsupported-media-type", "Content-Type is '\(request.header("Content-Type") ?? "")'; "
                                      + "send application/json", field: "Content-Type"), responder)
        }
        if let refusal = door.authenticate(request, now: now) { return refuse(refusal, responder) }
        let intake: Intake
        do {
            intake = try door.intake(request, now: now)
        } catch {
            return refuse(error, responder)
        }
        if let warning = intake.warning { events.warning("webhook-event-unused", [("path", request.path), ("why", warning)]) }
        if !intake.echoes.isEmpty {
            // Recorded before the answer: an echo answered is an echo kept.
            let (database, channel, events, retry) = (database, door.channel, events, door.retryStatus)
            Task {
                do {
                    try await database.recordEchoes(channel: channel, keys: intake.echoes, at: now)
                    responder.respond(Self.json(200, "{\"messages\":[]}"))
                } catch {
                    events.warning("webhook-echo-error", [("error", "\(error)")])
                    responder.respond(Self.retryLater(retry, "state-unwritable", "the echo could not be recorded; send again shortly"))
                }
            }
            return
        }
        let messages = intake.messages
        if messages.isEmpty { return responder.respond(Self.json(200, "{\"messages\":[]}")) }
        enqueue(.messages(messages, responder), responder)
    }

    private func refuse(_ error: IntakeError, _ responder: HTTPServer.Responder) {
        events.metrics.increment("usher_webhook_refused_total", ["status": "\(error.status)"])
        events.info("webhook-refused", [("status", "\(error.status)"), ("error", error.code), ("field", error.field ?? ""),
                                        ("message", error.message)])
        responder.respond(error.response)
    }

    private func enqueue(_ job: Job, _ responder: HTTPServer.Responder) {
        guard let running, case .enqueued = running.jobs.yield(job) else {
            return responder.respond(Self.retryLater(door.retryStatus, "stopping", "the worker is stopping; send again shortly"))
        }
    }

    private func health(_ path: String) -> HTTPServer.Response {
        if let worker = worker.withLock({ $0 }) { return worker.httpResponse(path: path) }
        switch path {
        case "/healthz": return .init(body: "ok\n")
        case "/readyz": return .init(status: 503, body: "starting\n")
        default: return .init(contentType: "text/plain; version=0.0.4; charset=utf-8", body: events.metrics.render())
        }
    }

    // MARK: - The intake (on the state file's thread)

    /// `bots`: the worker's bots, whose states `GET /v1/conversations/ID` shows.
    private static func takeIn(_ jobs: AsyncStream<Job>, database: SQLiteStore, events: WebhookEvents, retryStatus: Int,
                               bots: @Sendable () -> [String]) async {
        for await job in jobs {
            switch job {
            case let .messages(messages, responder):
                responder.respond(await commit(messages, database, events, retryStatus: retryStatus))
            case let .conversation(id, responder):
                do {
                    responder.respond(try await conversation(id, database, bots: bots()))
                } catch {
                    responder.respond(storeFailed(error, events, status: retryStatus))
                }
            }
        }
    }

    /// Appends each message (a message id already stored is left as it is) and says which were
    /// new: 202 when any was, 200 when all were in already.
    private static func commit(_ messages: [NewMessage], _ database: SQLiteStore, _ events: WebhookEvents,
                               retryStatus: Int) async -> HTTPServer.Response {
        do {
            // A message stored before has a seq at most this; a new one, above it.
            let before = try await database.latestSeq()
            var seen = Set<String>()
            var w = JSONWriter(capacity: 64 * messages.count)
            w.raw("{\"messages\":[")
            var accepted = 0
            for (i, m) in messages.enumerated() {
                let stored = try await database.append(m)
                let new = stored.seq > before && seen.insert(m.id).inserted
                if new { accepted += 1 }
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.byte(UInt8(ascii: "{"))
                w.key("id", first: true); w.string(m.id)
                w.key("conversation"); w.string(m.conversationID)
                w.key("status"); w.string(new ? "accepted" : "duplicate")
                w.byte(UInt8(ascii: "}"))
            }
            w.raw("]}\n")
            if accepted > 0 { events.metrics.increment("usher_webhook_messages_total", ["result": "accepted"], by: Double(accepted)) }
            if accepted < messages.count {
                events.metrics.increment("usher_webhook_messages_total", ["result": "duplicate"], by: Double(messages.count - accepted))
            }
            return json(accepted > 0 ? 202 : 200, String(decoding: w.bytes, as: UTF8.self))
        } catch {
            // What was appended before the failure stays: sent again, it comes back "duplicate".
            return storeFailed(error, events, status: retryStatus)
        }
    }

    private static func storeFailed(_ error: any Error, _ events: WebhookEvents, status: Int) -> HTTPServer.Response {
        let message = (error as? StoreError)?.message ?? "\(error)"
        events.warning("webhook-store-error", [("error", message)])
        return retryLater(status, "store-unavailable", "the state file could not be written or read: \(message); "
                          + "nothing is acknowledged: send again")
    }

    /// An answer asking the backend to send the request again in a second, with the status its
    /// retries cover (`FrontDoor.retryStatus`).
    static func retryLater(_ status: Int, _ code: String, _ message: String) -> HTTPServer.Response {
        var r = HTTPServer.Response.error(status, code, message)
        r.headers["Retry-After"] = "1"
        return r
    }

    // MARK: - GET /v1/conversations/ID

    /// The conversation as each of the worker's bots sees it: owner, counters, since when it waits.
    private static func conversation(_ id: String, _ database: SQLiteStore, bots: [String]) async throws -> HTTPServer.Response {
        guard let info = try await database.conversation(id) else {
            return .error(404, "no-conversation", "no conversation '\(id.prefix(80))' has been taken in", field: "id")
        }
        var w = JSONWriter(capacity: 512)
        w.byte(UInt8(ascii: "{"))
        w.key("conversation", first: true); w.string(info.id)
        if let v = info.channel { w.key("channel"); w.string(v) }
        if let v = info.locale { w.key("locale"); w.string(v) }
        w.key("created_at"); w.string(time(info.createdAt))
        w.key("bots"); w.byte(UInt8(ascii: "["))
        var first = true
        for bot in bots {
            guard let state = try await database.state(bot: bot, conversation: id) else { continue }
            if !first { w.byte(UInt8(ascii: ",")) }
            first = false
            w.byte(UInt8(ascii: "{"))
            w.key("bot", first: true); w.string(bot)
            w.key("owner"); w.string(state.owner.rawValue)
            w.key("session"); w.int(state.session)
            w.key("customer_messages"); w.int(state.customerMessages)
            w.key("bot_replies"); w.int(state.botReplies)
            w.key("fallbacks_in_a_row"); w.int(state.fallbacksInARow)
            w.key("tags"); w.stringArray(state.tags)
            if let v = state.language { w.key("language"); w.string(v) }
            if let v = state.lastActivityAt { w.key("last_activity_at"); w.string(time(v)) }
            if let handoff = try await database.openHandoff(bot: bot, conversation: id) {
                w.key("waiting_since"); w.string(time(handoff.since))
                if let v = handoff.queue { w.key("queue"); w.string(v) }
                if let v = handoff.reason { w.key("reason"); w.string(v) }
            }
            w.byte(UInt8(ascii: "}"))
        }
        w.raw("]}\n")
        return json(200, String(decoding: w.bytes, as: UTF8.self))
    }

    // MARK: - Helpers

    static func json(_ status: Int, _ body: String) -> HTTPServer.Response {
        HTTPServer.Response(status: status, contentType: "application/json", body: body)
    }

    static func methodNotAllowed(_ allowed: String) -> HTTPServer.Response {
        var r = HTTPServer.Response.error(405, "method-not-allowed", "use \(allowed) here")
        r.headers["Allow"] = allowed
        return r
    }

    static func time(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }

    /// A label for a request path that does not grow with conversation ids.
    static func pathLabel(_ path: String, _ intake: String) -> String {
        switch path {
        case intake, "/healthz", "/readyz", "/metrics": path
        case let p where p.hasPrefix("/v1/conversations/"): "/v1/conversations/ID"
        default: "other"
        }
    }

    /// The callback URL for logs: scheme, host and port only (a path or query may hold a token).
    static func redacted(_ url: String) -> String {
        guard let c = URLComponents(string: url), let scheme = c.scheme, let host = c.host else { return "(unreadable URL)" }
        return "\(scheme)://\(host)\(c.port.map { ":\($0)" } ?? "")/…"
    }
}
