import Foundation
import UsherHTTP
import UsherJSON
import UsherSQLite
import UsherStore

/// Makes the calls of the webhook's outbox: each conversation's calls one at a time, in order,
/// several conversations at once; a call that times out, cannot connect or gets a 5xx, 408 or
/// 429 is tried again after a backoff (doubling, with jitter, at least what `Retry-After` asks);
/// one refused (any other 4xx), or out of attempts, becomes a dead letter. Of the processes
/// sharing a state file, the one holding the delivery lease makes the calls.
///
/// Each attempt is prepared by the front door first (`FrontDoor.prepare`), told whether an
/// earlier attempt may have reached the backend unanswered: one of this process that timed out,
/// lost its connection or got a 5xx, and any call that was in the outbox when this process took
/// the lease (the process before it may have had it under way when it died). A backend without
/// idempotency keys (Chatwoot) is then asked whether it has the call already.
final class Delivery: Sendable {
    /// How calls are retried.
    struct Policy: Sendable {
        /// Attempts per call before it becomes a dead letter.
        var attempts = 12
        /// The wait after the first failure; doubled after each (with jitter: 50–100 % of it).
        var firstBackoff: Duration = .milliseconds(500)
        /// The longest wait between two attempts.
        var longestBackoff: Duration = .seconds(60)
        /// Conversations whose calls are made at the same time.
        var lanes = 8
        /// The longest one call may take.
        var timeout: Duration = .seconds(10)
        /// After a call with no answer (a timeout, a lost connection) to a backend that shows
        /// Usher's calls back (`FrontDoor.echoesCalls`), the least wait before the repeat: time
        /// for the echo of a call that was made to come in and settle it.
        var echoWait: Duration = .seconds(3)

        /// The wait before attempt `attempts + 1`, after `attempts` failed ones.
        func backoff(after attempts: Int, retryAfter: Double?, random: Double) -> Double {
            let doubled = firstBackoff.seconds * pow(2, Double(max(0, attempts - 1)))
            let wait = min(longestBackoff.seconds, doubled) * (0.5 + 0.5 * random)
            return max(wait, min(retryAfter ?? 0, longestBackoff.seconds))
        }
    }

    /// What became of one attempt.
    enum Outcome: Equatable {
        case delivered(status: Int)
        /// The backend had it already (`Preparation.settled`): nothing was sent.
        case settled(String)
        /// Worth another try: 5xx, 408, 429, or no answer. `reached`: the request may have been
        /// acted on (a timeout, a broken connection, a 5xx), so the next attempt is a repeat.
        case failed(status: Int?, error: String, retryAfter: Double?, reached: Bool)
        /// The receiver refused the call: trying again would get the same.
        case refused(status: Int, error: String)

        init(_ result: Result<HTTPResponse, HTTPError>) {
            switch result {
            case let .success(r) where (200..<300).contains(r.status):
                self = .delivered(status: r.status)
            case let .success(r) where r.status >= 500 || r.status == 408 || r.status == 429:
                self = .failed(status: r.status, error: "HTTP \(r.status)\(Self.excerpt(r.body))",
                               retryAfter: r.header("Retry-After").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) },
                               reached: r.status >= 500)
            case let .success(r):
                self = .refused(status: r.status, error: "HTTP \(r.status)\(Self.excerpt(r.body))")
            case let .failure(e):
                self = .failed(status: nil, error: e.message, retryAfter: nil, reached: e.kind != .cannotConnect)
            }
        }

        /// The outcome of a read made before the call (`Preparation.failed`): the call itself was
        /// not sent, so it reached nothing.
        init(read result: Result<HTTPResponse, HTTPError>) {
            switch Outcome(result) {
            case let .failed(status, error, retryAfter, _):
                self = .failed(status: status, error: "before the call: " + error, retryAfter: retryAfter, reached: false)
            case let .refused(status, error):
                self = .refused(status: status, error: "before the call: " + error)
            case .delivered, .settled:
                self = .failed(status: nil, error: "before the call: the read succeeded but was reported failed", retryAfter: nil,
                               reached: false)
            }
        }

        static func excerpt(_ body: [UInt8]) -> String {
            body.isEmpty ? "" : ": " + String(decoding: body.prefix(200), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        }
    }

    static let leaseBot = "usher:webhook"

    let database: SQLiteStore
    let channel: String
    let door: any FrontDoor
    let callbackURL: String
    let client: HTTPClient
    let policy: Policy
    /// Who this process is in the delivery lease: the same after a restart on the same listen
    /// address, so that a worker killed and started again takes its lease back at once.
    let holder: String
    let events: WebhookEvents
    let clock: @Sendable () -> Date
    /// Notified when there may be something new to send: a commit, a call done, a dead letter.
    let wake = ChangeSignal()
    /// Bumped by every commit of this process that wrote something (`committed()`).
    private let commits = Locked<UInt64>(0)
    private let busy = Locked(Set<String>())
    /// Calls whose last attempt of this process may have reached the backend unanswered: their
    /// next attempt is a repeat. Forgotten once delivered or given up on.
    private let uncertain = Locked(Set<Int64>())
    /// The newest call in the outbox when this process took the delivery lease: calls up to it
    /// may have been under way in the process before.
    private let inherited = Locked<Int64>(0)

    init(database: SQLiteStore, channel: String, door: any FrontDoor, callbackURL: String, policy: Policy, holder: String,
         events: WebhookEvents, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.channel = channel
        self.door = door
        self.callbackURL = callbackURL
        self.policy = policy
        self.holder = holder
        self.events = events
        self.clock = clock
        client = HTTPClient(connections: policy.lanes, timeout: policy.timeout)
    }

    /// A commit wrote actions: move them into the outbox and send them.
    func committed() {
        commits.withLock { $0 &+= 1 }
        wake.notify()
    }

    /// Delivers until cancelled; the calls under way then end with the client (`stop`).
    func run() async {
        var leaseUntil = Date.distantPast
        var errorDelay = 0.05
        // Filling the outbox is a write transaction: made after this process's commits, and once
        // a second for those of other processes on the file (and what a crash left).
        var filled: (commits: UInt64, at: Date)? = nil
        let door = door
        let encodeActions: @Sendable ([StoreAction]) -> [OutboxItem] = { Self.items(door.calls(for: $0)) }
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let seen = wake.generation
                var wait = 1.0
                do {
                    let now = clock()
                    if leaseUntil.timeIntervalSince(now) < 10 {
                        let until = now.addingTimeInterval(15)
                        let held = try await database.claim(bot: Self.leaseBot, conversations: [channel], worker: holder, until: until)
                        if !held.isEmpty, leaseUntil <= now {
                            // Taken (again): what is in the outbox now may have been under way elsewhere.
                            let last = try await database.lastOutboxID(channel: channel)
                            inherited.withLock { $0 = last }
                        }
                        leaseUntil = held.isEmpty ? .distantPast : until
                    }
                    if leaseUntil > now {
                        let generation = commits.withLock { $0 }
                        if filled == nil || filled!.commits != generation || now.timeIntervalSince(filled!.at) >= 1 {
                            try await database.fillOutbox(channel: channel, tags: door.mirrorsTags, encodeActions)
                            filled = (generation, now)
                        }
                        let busy = busy.withLock { $0 }
                        let free = policy.lanes - busy.count
                        let (due, next) = try await database.dueOutbox(channel: channel, now: now, limit: max(0, free), busy: busy)
                        for entry in due {
                            self.busy.withLock { _ = $0.insert(entry.item.conversation) }
                            group.addTask {
                                await self.attempt(entry)
                                _ = self.busy.withLock { $0.remove(entry.item.conversation) }
                                self.wake.notify()
                            }
                        }
                        if let next { wait = min(wait, max(0.001, next.timeIntervalSince(now))) }
                    }
                    errorDelay = 0.05
                } catch {
                    events.warning("webhook-outbox-error", [("error", "\(error)"), ("retry_in", "\(errorDelay)s")])
                    wait = errorDelay
                    errorDelay = min(errorDelay * 2, 5)
                }
                await wake.wait(since: seen, timeout: .milliseconds(Int(wait * 1000)))
            }
        }
    }

    /// Ends the calls under way (they are tried again at the next start).
    func stop() { client.close() }

    /// Makes one call and records what came of it.
    func attempt(_ entry: OutboxEntry) async {
        guard let call = Self.decode(entry.item.call) else {
            await record(entry, .refused(status: 0, error: "the outbox holds a call this version cannot read"))
            return
        }
        let repeated = uncertain.withLock { $0.contains(entry.id) } || entry.id <= inherited.withLock { $0 }
        if repeated, door.echoesCalls, (try? await database.echoed(channel: channel, key: entry.item.key)) == true {
            uncertain.withLock { _ = $0.remove(entry.id) }
            await record(entry, .settled("the backend showed it back: an earlier attempt made it"))
            return
        }
        let outcome = await Self.send(call, repeated: repeated, to: callbackURL, through: client, door: door, timeout: policy.timeout,
                                      clock: clock)
        switch outcome {
        case .failed where entry.attempts + 1 >= policy.attempts: uncertain.withLock { _ = $0.remove(entry.id) }   // a dead letter
        case .failed(_, _, _, reached: true): uncertain.withLock { _ = $0.insert(entry.id) }
        case .delivered, .settled, .refused: uncertain.withLock { _ = $0.remove(entry.id) }
        case .failed: break   // an earlier attempt may still have reached it
        }
        await record(entry, outcome)
    }

    /// Prepares `call` (`FrontDoor.prepare`, its reads authorized by the door at the time) and
    /// sends what that says to the callback, authorized by the door (signed, a token) at the
    /// time it is sent.
    static func send(_ call: OutboundCall, repeated: Bool, to callbackURL: String, through client: HTTPClient, door: any FrontDoor,
                     timeout: Duration, clock: @escaping @Sendable () -> Date) async -> Outcome {
        let read: BackendRead = { path in
            var request = HTTPRequest(url: callbackURL + path, headers: [("Accept", "application/json")], timeout: timeout)
            door.authorize(&request, now: clock())
            do throws(HTTPError) { return .success(try await client.send(request)) } catch { return .failure(error) }
        }
        let prepared: OutboundCall
        switch await door.prepare(call, repeated: repeated, read: read) {
        case let .send(c): prepared = c
        case let .settled(why): return .settled(why)
        case let .failed(result): return Outcome(read: result)
        }
        var request = HTTPRequest(method: prepared.method, url: callbackURL + prepared.path,
                                  headers: [("Content-Type", "application/json"), ("Idempotency-Key", prepared.key)],
                                  body: Array(prepared.body.utf8), timeout: timeout)
        door.authorize(&request, now: clock())
        do {
            return Outcome(.success(try await client.send(request)))
        } catch {
            return Outcome(.failure(error))
        }
    }

    private func record(_ entry: OutboxEntry, _ outcome: Outcome) async {
        let fields = [("conversation", entry.item.conversation), ("key", entry.item.key), ("attempts", "\(entry.attempts + 1)")]
        do {
            switch outcome {
            case .delivered:
                try await database.outboxDelivered(id: entry.id)
                events.count("usher_webhook_deliveries_total", result: "delivered")
            case let .settled(why):
                try await database.outboxDelivered(id: entry.id)
                events.count("usher_webhook_deliveries_total", result: "settled")
                events.info("webhook-settled", fields + [("why", why)])
            case let .failed(status, error, retryAfter, reached) where entry.attempts + 1 < policy.attempts:
                var wait = policy.backoff(after: entry.attempts + 1, retryAfter: retryAfter, random: Double.random(in: 0...1))
                if reached, status == nil, door.echoesCalls { wait = max(wait, policy.echoWait.seconds) }
                try await database.outboxRetry(id: entry.id, next: clock().addingTimeInterval(wait), error: error)
                events.count("usher_webhook_deliveries_total", result: "retried")
                events.info("webhook-retry", fields + [("status", status.map(String.init) ?? "none"), ("error", error),
                                                       ("retry_in", String(format: "%.2fs", wait))])
            case let .failed(status, error, _, _):
                try await database.outboxDeadLetter(id: entry.id, status: status, error: error)
                deadLettered(fields + [("status", status.map(String.init) ?? "none"), ("error", error),
                                       ("why", "no attempt of \(policy.attempts) succeeded")])
            case let .refused(status, error):
                try await database.outboxDeadLetter(id: entry.id, status: status, error: error)
                deadLettered(fields + [("status", "\(status)"), ("error", error), ("why", "the receiver refused it")])
            }
        } catch {
            // The call is still in the outbox as it was: it is made again (same Idempotency-Key).
            events.warning("webhook-outbox-error", fields + [("error", "\(error)")])
        }
    }

    private func deadLettered(_ fields: [(String, String)]) {
        events.count("usher_webhook_deliveries_total", result: "deadlettered")
        events.count("usher_webhook_deadletters_total")
        events.error("webhook-deadletter", fields + [("hint", "usher deadletters lists them and sends them again")])
    }

    // MARK: - Calls in the outbox

    static func items(_ calls: [OutboundCall]) -> [OutboxItem] {
        calls.map { OutboxItem(key: $0.key, conversation: $0.conversation, call: encode($0)) }
    }

    /// `{"method":…,"path":…,"body":…}`; the key and conversation are columns of their own.
    static func encode(_ call: OutboundCall) -> String {
        var w = JSONWriter(capacity: call.body.utf8.count + 64)
        w.byte(UInt8(ascii: "{"))
        w.key("method", first: true); w.string(call.method)
        w.key("path"); w.string(call.path)
        w.key("body"); w.string(call.body)
        w.key("key"); w.string(call.key)
        w.key("conversation"); w.string(call.conversation)
        w.byte(UInt8(ascii: "}"))
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func decode(_ text: String) -> OutboundCall? {
        let bytes = Array(text.utf8)
        guard let value = try? bytes.withUnsafeBufferPointer({ b throws(JSONError) in try JSONReader.parse(b) }) else { return nil }
        func string(_ key: String) -> String? { if case let .string(s)? = value[key]?.kind { s } else { nil } }
        guard let method = string("method"), let path = string("path"), let body = string("body"), let key = string("key"),
              let conversation = string("conversation") else { return nil }
        return OutboundCall(method: method, path: path, body: body, key: key, conversation: conversation)
    }
}
