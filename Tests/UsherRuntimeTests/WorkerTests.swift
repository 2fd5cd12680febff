import Foundation
import Testing
import UsherEngine
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherStoreTestKit
import UsherTestSupport

let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let seedMessage = "Thanks for your question! We're connecting you to a support agent now."

/// A SQLite store in a temporary file: for the tests of what the worker does with a store's
/// capabilities (leases, notifications, the agents' inbox) beyond the core `InMemoryStore` has.
func sqliteStore() async throws -> SQLiteStore {
    try await SQLiteStore(path: FileManager.default.temporaryDirectory.appendingPathComponent("usher-\(UUID().uuidString).db").path)
}

/// Whether every inbound message of `bot` is done.
func allDone(_ store: any ChatStore, bot: String) async throws -> Bool {
    try await store.pending(bot: bot, after: .start, limit: 1).messages.isEmpty
}

/// The seed's behaviour in short: three replies, a handoff on the fourth message.
let seedRules = TestBot.rules

/// Runs `body` with a worker running in the background, then stops it and waits for it.
func withWorker(_ store: any ChatStore, _ bots: [BotRuntime], id: String = "w1", groupCommit: Bool = true,
                _ body: (Worker) async throws -> Void) async throws {
    var options = Worker.Options()
    options.idleWait = .milliseconds(20)
    options.groupCommit = groupCommit
    let worker = Worker(store: store, bots: bots, workerID: id, options: options, log: Logger(minimum: .error))
    let task = Task { try await worker.run() }
    try await body(worker)
    worker.requestStop()
    try await task.value
}

/// A worker (idle wait 20 ms) whose agent notifications, merged in `window` seconds, are handed to
/// `deliver` — what the notification tests watch.
func notifyingWorker(_ store: any ChatStore, _ bot: BotRuntime, id: String = "w", window: Double,
                     deliver: @escaping @Sendable (NotificationDigest) -> Void) -> Worker {
    var options = Worker.Options()
    options.idleWait = .milliseconds(20)
    options.notificationWindow = window
    options.deliver = deliver
    return Worker(store: store, bots: [bot], workerID: id, options: options, log: Logger(minimum: .error))
}

@Suite("Worker")
struct WorkerTests {
    @Test func seedBehaviourThroughTheStore() async throws {
        let store = InMemoryStore()
        let bot = try BotRuntime(path: repo.appendingPathComponent("bots/support").path)
        try await withWorker(store, [bot]) { worker in
            for text in ["hello", "are you there", "???", "still nothing"] {
                try await store.append(NewMessage(conversationID: "c1", from: .customer, senderName: "Pooja", text: text,
                                                  at: ISO8601DateFormatter().date(from: "2026-11-30T02:00:00Z")!))
            }
            try await eventually("the handoff") { try await store.transcript(conversation: "c1").contains { $0.from == .system } }
            let t = try await store.transcript(conversation: "c1")
            #expect(t.filter { $0.from == .bot }.map(\.text) == ["Hi there! How can we assist you today?",
                                                                  "Thanks for reaching out—we're here to help.",
                                                                  "One moment while we review your request..."])
            #expect(t.filter { $0.from == .system }.map(\.text) == [seedMessage])
            #expect(worker.metrics.value("usher_handoffs_total", ["bot": "support", "rule": "threshold", "reason": "threshold"]) == 1)
            try await eventually("ready") { worker.isReady }
        }
    }

    /// A conversation another worker held when it was read is passed over — the reads go on
    /// above it — and is read at the next rescan from the cursor (`rescanInterval`) once that
    /// worker gives it up.
    @Test func whatWasPassedOverIsReadOnceItsHolderLetsGo() async throws {
        let store = try await sqliteStore()
        let bot = try BotRuntime(path: try temporaryBot(TestBot.oneReply).path)
        let held = try await store.append(NewMessage(conversationID: "x", from: .customer, text: "held elsewhere"))
        _ = try await store.claimPending(bot: bot.id, after: 0, limit: 10, worker: "other", until: Date().addingTimeInterval(3600),
                                         skipping: [:], share: .all, holds: { _ in false })
        try await store.append(NewMessage(conversationID: "y", from: .customer, text: "free"))
        var options = Worker.Options()
        options.idleWait = .milliseconds(20)
        options.rescanInterval = .milliseconds(300)
        let worker = Worker(store: store, bots: [bot], workerID: "w1", options: options, log: Logger(minimum: .error))
        let task = Task { try await worker.run() }
        try await eventually("y answered") { try await store.transcript(conversation: "y").count == 2 }
        try await Task.sleep(for: .milliseconds(200))   // idle, x still held by the other worker
        #expect(try await store.transcript(conversation: "x").count == 1)
        try await store.release(bot: bot.id, worker: "other")
        try await eventually("x answered once let go", timeout: .seconds(5)) {
            try await store.transcript(conversation: "x").count == 2
        }
        #expect(try await store.pending(bot: bot.id, after: held.seq - 1, limit: 10).isEmpty)
        worker.requestStop()
        try await task.value
    }

    @Test func twoMessagesAtTheThresholdHandOffOnce() async throws {
        let store = InMemoryStore()
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        // The seed's race: a read-modify-write of messageCount double-replied or skipped the handoff.
        for i in 1...3 { try await store.append(NewMessage(conversationID: "c", from: .customer, text: "m\(i)")) }
        try await withWorker(store, [bot]) { _ in
            try await eventually("three replies") { try await store.transcript(conversation: "c").filter { $0.from == .bot }.count == 3 }
            async let a = store.append(NewMessage(conversationID: "c", from: .customer, text: "fourth"))
            async let b = store.append(NewMessage(conversationID: "c", from: .customer, text: "fifth"))
            _ = try await (a, b)
            try await eventually("both decided") { try await allDone(store, bot: "temp") }
        }
        let t = try await store.transcript(conversation: "c")
        #expect(t.filter { $0.from == .system }.count == 1, "exactly one handoff notice")
        #expect(t.filter { $0.from == .bot }.count == 3, "no reply after the handoff")
        #expect(store.notifications.count == 1)
    }

    @Test func twoWorkersNeverDoubleReply() async throws {
        let store = InMemoryStore()
        let botA = try BotRuntime(path: try temporaryBot(seedRules).path)
        let botB = try BotRuntime(path: botA.path)
        for c in 0..<50 { for i in 0..<5 { try await store.append(NewMessage(conversationID: "c\(c)", from: .customer, text: "m\(i)")) } }
        try await withWorker(store, [botA], id: "A") { _ in
            // One worker commits batches, the other one message at a time.
            try await withWorker(store, [botB], id: "B", groupCommit: false) { _ in
                try await eventually("all decided") { try await allDone(store, bot: "temp") }
            }
        }
        for c in 0..<50 {
            let t = try await store.transcript(conversation: "c\(c)")
            #expect(t.filter { $0.from == .bot }.map(\.text) == ["one", "two", "three"], "conversation c\(c)")
            #expect(t.filter { $0.from == .system }.count == 1)
        }
    }

    @Test func agentTakeoverSilencesTheBot() async throws {
        let store = InMemoryStore()
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        // A backlog in which the agent wrote before the bot got to the customer's message.
        try await store.append(NewMessage(conversationID: "d", from: .customer, text: "hi"))
        try await store.append(NewMessage(conversationID: "d", from: .agent, senderID: "agent:li", text: "Li here"))
        try await withWorker(store, [bot]) { worker in
            try await store.append(NewMessage(conversationID: "c", from: .customer, text: "hi"))
            try await eventually("the reply") { try await store.transcript(conversation: "c").count == 2 }
            try await store.append(NewMessage(conversationID: "c", from: .agent, senderID: "agent:li", text: "Li here"))
            try await store.append(NewMessage(conversationID: "c", from: .customer, text: "thanks"))
            try await eventually("all decided") { try await allDone(store, bot: "temp") }
            // d's reply, decided before the agent's message was, was not written: not counted as sent.
            #expect(worker.metrics.value("usher_replies_total", ["bot": "temp", "rule": "opening"]) == 1)
            #expect(worker.metrics.value("usher_commits_total", ["bot": "temp", "result": "silenced"]) == 1)
        }
        #expect(try await store.transcript(conversation: "c").map(\.from) == [.customer, .bot, .agent, .customer])
        #expect(try await store.transcript(conversation: "d").map(\.from) == [.customer, .agent])
    }

    /// A reload that fails logs every error's file:line:col, not only the first (which may be
    /// a consequence: a misspelt `when:` leaves a rule without its condition and actions).
    @Test func aFailedReloadLogsEveryError() async throws {
        let dir = try temporaryBot(seedRules)
        let bot = try BotRuntime(path: dir.path)
        let lines = Locked<[String]>([])
        let worker = Worker(store: InMemoryStore(), bots: [bot], workerID: "w", options: Worker.Options(),
                            log: Logger(minimum: .info, sink: { line in lines.withLock { $0.append(line) } }))
        try Data("version: 1\nrules:\n  - id: broken\n    whne: {keywords: [zzz]}\n".utf8).write(to: dir.appendingPathComponent("rules.yaml"))
        worker.reload(force: true)
        let line = lines.withLock { $0 }.first { $0.contains("event=rules-reload-failed") } ?? ""
        #expect(line.contains("errors=2"), "\(line)")
        #expect(line.contains("rules.yaml:4:5: error: [unknown-key] unknown key 'whne' in a rule; did you mean 'when'?"), "\(line)")
        #expect(line.contains("[no-actions]") && line.contains("usher check \(dir.path)"), "\(line)")
    }

    @Test func brokenReloadKeepsTheRunningRules() async throws {
        let dir = try temporaryBot(seedRules)
        let store = InMemoryStore()
        let bot = try BotRuntime(path: dir.path)
        let version = bot.ruleSet.version
        try await withWorker(store, [bot]) { worker in
            try Data("version: 1\nrules:\n  - id: opening\n    whne: {}\n".utf8).write(to: dir.appendingPathComponent("rules.yaml"))
            worker.reload(force: true)
            #expect(worker.metrics.value("usher_rules_last_reload_successful", ["bot": "temp"]) == 0)
            #expect(bot.ruleSet.version == version)
            try await store.append(NewMessage(conversationID: "probe", from: .customer, text: "hello"))
            try await eventually("the probe is answered with the old rules") {
                try await store.transcript(conversation: "probe").contains { $0.text == "one" }
            }
            try Data(seedRules.replacingOccurrences(of: "\"one\"", with: "\"uno\"").utf8).write(to: dir.appendingPathComponent("rules.yaml"))
            worker.reload(force: true)
            #expect(worker.metrics.value("usher_rules_last_reload_successful", ["bot": "temp"]) == 1)
            #expect(bot.ruleSet.version != version)
            try await store.append(NewMessage(conversationID: "probe2", from: .customer, text: "hello"))
            try await eventually("the new rules answer") {
                try await store.transcript(conversation: "probe2").contains { $0.text == "uno" }
            }
        }
    }

    @Test func metricsRenderAsPrometheusText() {
        let m = Metrics()
        m.increment("usher_replies_total", ["bot": "support", "rule": "refund"])
        m.observe("usher_decision_seconds", ["bot": "support"], 0.0003)
        m.set("usher_rules_last_reload_successful", ["bot": "support"], to: 1)
        let text = m.render()
        #expect(text.contains("# TYPE usher_replies_total counter\nusher_replies_total{bot=\"support\",rule=\"refund\"} 1\n"))
        #expect(text.contains("usher_decision_seconds_bucket{bot=\"support\",le=\"0.0005\"} 1"))
        #expect(text.contains("usher_decision_seconds_bucket{bot=\"support\",le=\"0.00025\"} 0"))
        #expect(text.contains("usher_decision_seconds_count{bot=\"support\"} 1"))
        #expect(text.contains("usher_rules_last_reload_successful{bot=\"support\"} 1"))
        // Buckets are cumulative; labels are one series whatever their order.
        m.observe("usher_decision_seconds", ["bot": "support"], 2)
        m.increment("usher_replies_total", ["rule": "refund", "bot": "support"])
        let again = m.render()
        #expect(again.contains("usher_decision_seconds_bucket{bot=\"support\",le=\"0.0005\"} 1"))
        #expect(again.contains("usher_decision_seconds_bucket{bot=\"support\",le=\"2.5\"} 2"))
        #expect(again.contains("usher_decision_seconds_bucket{bot=\"support\",le=\"+Inf\"} 2"))
        #expect(again.contains("usher_replies_total{bot=\"support\",rule=\"refund\"} 2\n"))
        #expect(m.value("usher_replies_total", ["rule": "refund", "bot": "support"]) == 2)
    }

    @Test func logsCarryNoMessageTextAtInfo() async throws {
        let lines = LineCollector()
        let store = InMemoryStore()
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        var options = Worker.Options()
        options.idleWait = .milliseconds(20)
        let worker = Worker(store: store, bots: [bot], options: options, log: Logger(sink: { lines.add($0) }))
        let task = Task { try await worker.run() }
        try await store.append(NewMessage(conversationID: "c", from: .customer, text: "my secret address is 12 Main St"))
        try await eventually("decided") { try await allDone(store, bot: "temp") }
        worker.requestStop()
        try await task.value
        let all = lines.all.joined()
        #expect(all.contains("event=reply"))
        #expect(!all.contains("secret") && !all.contains("one"), Comment(rawValue: all))
    }
}

final class LineCollector: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ s: String) { lines.withLock { $0.append(s) } }
    var all: [String] { lines.withLock { $0 } }
}

import Synchronization

@Suite("HTTP endpoints")
struct HTTPTests {
    /// A plain HTTP/1.0 GET over a socket: what Prometheus and a load balancer do.
    func get(_ address: String, _ path: String) throws -> (Int, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", """
        import sys, urllib.request, urllib.error
        try:
            r = urllib.request.urlopen('http://\(address)\(path)', timeout=5); print(r.status); print(r.read().decode(), end='')
        except urllib.error.HTTPError as e:
            print(e.code); print(e.read().decode(), end='')
        """]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let status = Int(text.prefix { $0 != "\n" }) ?? 0
        return (status, String(text.drop { $0 != "\n" }.dropFirst()))
    }

    @Test func metricsHealthAndReadiness() async throws {
        let store = InMemoryStore()
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        try await withWorker(store, [bot]) { worker in
            let server = try HTTPServer(address: "127.0.0.1:0") { worker.httpResponse(path: $0) }
            defer { server.close() }
            try await store.append(NewMessage(conversationID: "c", from: .customer, text: "hi"))
            try await eventually("ready") {
                let empty = try await allDone(store, bot: "temp")
                return worker.isReady && empty
            }
            let (status, body) = try get(server.address, "/metrics")
            #expect(status == 200)
            #expect(body.contains("usher_replies_total{bot=\"temp\",rule=\"opening\"} 1"), Comment(rawValue: body))
            #expect(body.contains("usher_rules_last_reload_successful{bot=\"temp\"} 1"))
            #expect(try get(server.address, "/healthz") == (200, "ok\n"))
            #expect(try get(server.address, "/readyz") == (200, "ready\n"))
            #expect(try get(server.address, "/nope").0 == 404)
        }
    }
}

@Suite("Notification digests")
struct NotificationDigestTests {
    func n(_ seq: Int64, _ queue: String, _ name: String, at: Double) -> StoredNotification {
        StoredNotification(seq: seq, bot: "support", notification: AgentNotification(
            idempotencyKey: "k\(seq)", conversationID: "c\(seq)", queue: queue, reason: "threshold",
            text: "\(name) is waiting for an agent (threshold)", customerName: name, lastMessage: "help",
            isHandoff: true, at: Date(timeIntervalSince1970: at)))
    }

    @Test func burstsMergePerQueueWithinTheWindow() {
        let all = [n(1, "general", "Asha", at: 0), n(2, "general", "Ben", at: 3), n(3, "vip", "Chen", at: 4),
                   n(4, "general", "Dee", at: 5), n(5, "general", "Eli", at: 20)]
        let d = NotificationDigest.merge(all, window: 10)
        #expect(d.map(\.text) == ["3 conversations are waiting in general: Asha, Ben and 1 other",
                                  "Chen is waiting for an agent (threshold)",
                                  "Eli is waiting for an agent (threshold)"])
        #expect(d.map(\.through) == [4, 3, 5])
        #expect(d[0].conversations == ["c1", "c2", "c4"])
    }

    @Test func mutedQueuesAreLeftOut() {
        let d = NotificationDigest.merge([n(1, "general", "Asha", at: 0), n(2, "vip", "Ben", at: 1)], window: 10, muted: ["general"])
        #expect(d.map(\.queue) == ["vip"])
    }
}

@Suite("Notification delivery")
struct NotificationDeliveryTests {
    @Test func handoffBurstsArriveAsOneDigest() async throws {
        let store = try await sqliteStore()
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        let got = Mutex<[NotificationDigest]>([])
        // The burst is there before the worker starts, and the first round of the dispatcher
        // comes one window after the start: the twelve decisions (milliseconds) have five
        // seconds, so a loaded machine does not split them over two rounds.
        for c in 0..<3 { for k in 0..<4 { try await store.append(NewMessage(conversationID: "c\(c)", from: .customer, senderName: "N\(c)", text: "m\(k)")) } }
        let worker = notifyingWorker(store, bot, window: 5) { d in got.withLock { $0.append(d) } }
        let task = Task { try await worker.run() }
        try await eventually("one digest") { got.withLock { $0.count } >= 1 }
        // A window more: nothing else comes.
        try await Task.sleep(for: .seconds(5))
        worker.requestStop()
        try await task.value
        let digests = got.withLock { $0 }
        #expect(digests.count == 1, "\(digests.map(\.text))")
        // Named in the order their handoffs committed: two batches are written at once, so
        // which two come first is a race.
        let text = digests.first?.text ?? ""
        let prefix = "3 conversations are waiting in general: ", suffix = " and 1 other"
        #expect(text.hasPrefix(prefix) && text.hasSuffix(suffix), "\(text)")
        let names = text.dropFirst(prefix.count).dropLast(suffix.count).components(separatedBy: ", ")
        #expect(names.count == 2 && Set(names).count == 2 && Set(names).isSubset(of: ["N0", "N1", "N2"]), "\(text)")
    }

    /// Two workers on one store: each digest goes out once, from the worker holding the dispatch
    /// lease; when that one stops, the other delivers.
    @Test func workersSharingAStoreDeliverEachDigestOnce() async throws {
        let store = try await sqliteStore()
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        let got = Mutex<[(String, NotificationDigest)]>([])
        func worker(_ id: String) -> Worker {
            notifyingWorker(store, bot, id: id, window: 1) { d in got.withLock { $0.append((id, d)) } }
        }
        let a = worker("a"), b = worker("b")
        let ta = Task { try await a.run() }
        let tb = Task { try await b.run() }
        try await Task.sleep(for: .milliseconds(100))
        for c in 0..<3 { for k in 0..<4 { try await store.append(NewMessage(conversationID: "c\(c)", from: .customer, senderName: "N\(c)", text: "m\(k)")) } }
        try await eventually("one digest") { got.withLock { $0.count } >= 1 }
        // More than four windows: the follower's position has passed the burst, so a takeover
        // does not deliver it again.
        try await Task.sleep(for: .milliseconds(4500))
        let first = got.withLock { $0 }
        #expect(first.count == 1, "\(first.map { "\($0.0): \($0.1.text)" })")
        // The dispatching worker stops (and gives the lease up): the other delivers what follows.
        let dispatcher = try #require(first.first?.0)
        let (stopped, stays) = dispatcher == "a" ? (a, b) : (b, a)
        stopped.requestStop()
        try await (dispatcher == "a" ? ta : tb).value
        for k in 0..<4 { try await store.append(NewMessage(conversationID: "d", from: .customer, senderName: "D", text: "m\(k)")) }
        try await eventually("a digest from the other worker") { got.withLock { $0.count } >= 2 }
        let second = got.withLock { $0 }
        #expect(second.count == 2 && second[1].0 != dispatcher && second[1].1.text.contains("D"),
                "\(second.map { "\($0.0): \($0.1.text)" })")
        stays.requestStop()
        try await (dispatcher == "a" ? tb : ta).value
    }
}

/// A SQLite store with hooks: notifications of the conversations in `hidden` stay out of sight
/// until let go (a commit that took an earlier notification number and commits after a later
/// one); group commits with a conversation in `held` wait until it is let go (a slow write);
/// every append notifies `changeSignal` (a store that signals new messages); the worker's
/// calls named in `faults` (`commit`, `claimPending`, `advanceCursor`) throw its error until
/// it is taken out.
final class HookedStore: SharedStore, SignallingStore, NotificationStore, BackendStore {
    let inner: SQLiteStore
    let hidden = Mutex<Set<String>>([])
    let held = Mutex<Set<String>>([])
    /// Group commits waiting in `held`.
    let holding = Mutex(0)
    let signal = ChangeSignal()
    let faults = Mutex<[String: StoreError]>([:])

    /// Throws the error set for `call`, if any.
    private func inject(_ call: String) throws {
        if let error = faults.withLock({ $0[call] }) { throw error }
    }

    init() async throws { inner = try await sqliteStore() }

    var changeSignal: ChangeSignal? { signal }

    func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification] {
        let hide = hidden.withLock { $0 }
        return try await inner.notifications(after: seq, limit: limit).filter { !hide.contains($0.notification.conversationID) }
    }
    func pending(bot: String, after cursor: Int64, limit: Int) async throws -> [StoredMessage] {
        try await inner.pending(bot: bot, after: cursor, limit: limit)
    }
    func waitForChanges(after seq: Int64, timeout: Duration) async throws { try await inner.waitForChanges(after: seq, timeout: timeout) }
    func cursor(bot: String) async throws -> Int64 { try await inner.cursor(bot: bot) }
    func advanceCursor(bot: String) async throws {
        try inject("advanceCursor")
        try await inner.advanceCursor(bot: bot)
    }
    func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String> {
        try await inner.claim(bot: bot, conversations: conversations, worker: worker, until: until)
    }
    func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date, skipping: [String: Int64],
                      share: Share, holds: @Sendable (String) -> Bool) async throws -> Intake {
        try inject("claimPending")
        return try await inner.claimPending(bot: bot, after: cursor, limit: limit, worker: worker, until: until, skipping: skipping,
                                     share: share, holds: holds)
    }
    func members(group: String, worker: String, until: Date) async throws -> [String] {
        try await inner.members(group: group, worker: worker, until: until)
    }
    func release(bot: String, worker: String, keeping: Set<String>) async throws {
        try await inner.release(bot: bot, worker: worker, keeping: keeping)
    }
    @discardableResult
    func append(_ message: NewMessage) async throws -> StoredMessage {
        defer { signal.notify() }
        return try await inner.append(message)
    }
    func transcript(conversation: String) async throws -> [StoredMessage] { try await inner.transcript(conversation: conversation) }
    func inbox(bot: String) async throws -> [InboxEntry] { try await inner.inbox(bot: bot) }
    func lastNotificationSeq() async throws -> Int64 { try await inner.lastNotificationSeq() }
    func close() async throws { try await inner.close() }
    func latestSeq() async throws -> Int64 { try await inner.latestSeq() }
    func conversation(_ id: String) async throws -> ConversationInfo? { try await inner.conversation(id) }
    func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        try await inner.states(bot: bot, conversations: conversations)
    }
    func commit(batch: [Commit]) async throws -> [CommitResult] {
        try inject("commit")
        if held.withLock({ h in batch.contains { h.contains($0.inbound.conversationID) } }) {
            holding.withLock { $0 += 1 }
            while held.withLock({ h in batch.contains { h.contains($0.inbound.conversationID) } }) {
                try await Task.sleep(for: .milliseconds(5))
            }
            holding.withLock { $0 -= 1 }
        }
        return try await inner.commit(batch: batch)
    }
}

@Suite("Worker: a slow write") struct SlowWriteTests {
    /// A message that arrives while a batch is written is read and answered at once (in the
    /// second write slot), not after that write: a slow commit does not hold up the next one.
    @Test func aNewMessageIsAnsweredWhileAnotherBatchIsWritten() async throws {
        let store = try await HookedStore()
        store.held.withLock { $0 = ["slow"] }
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        var options = Worker.Options()
        options.idleWait = .seconds(4)   // longer than the wait for the reply below
        let worker = Worker(store: store, bots: [bot], workerID: "w", options: options, log: Logger(minimum: .error))
        let task = Task { try await worker.run() }
        try await Task.sleep(for: .milliseconds(100))
        try await store.append(NewMessage(conversationID: "slow", from: .customer, text: "hello"))
        try await eventually("the slow batch being written") { store.holding.withLock { $0 } == 1 }
        try await store.append(NewMessage(conversationID: "fast", from: .customer, text: "hello"))
        try await eventually("the reply in the other conversation, while the slow one is written", timeout: .seconds(3)) {
            try await store.transcript(conversation: "fast").contains { $0.from == .bot }
        }
        #expect(try await store.transcript(conversation: "slow").allSatisfy { $0.from == .customer })
        store.held.withLock { $0 = [] }
        try await eventually("the slow reply") { try await store.transcript(conversation: "slow").contains { $0.from == .bot } }
        worker.requestStop()
        try await task.value
    }
}

@Suite("Notifications out of order") struct LateNotificationTests {
    /// Two commits written at once can show their notifications out of order (a worker writes
    /// two batches at a time; several workers share a store): the earlier one, seen late, is
    /// still delivered, and nothing is delivered twice.
    @Test func aNotificationSeenLateIsStillDelivered() async throws {
        let store = try await HookedStore()
        store.hidden.withLock { $0 = ["c0"] }
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        let got = Mutex<[NotificationDigest]>([])
        let worker = notifyingWorker(store, bot, window: 0.2) { d in got.withLock { $0.append(d) } }
        let task = Task { try await worker.run() }
        try await Task.sleep(for: .milliseconds(100))
        for c in 0..<2 { for k in 0..<4 { try await store.append(NewMessage(conversationID: "c\(c)", from: .customer, text: "m\(k)")) } }
        try await eventually("c1's digest") { got.withLock { $0.contains { $0.conversations.contains("c1") } } }
        store.hidden.withLock { $0 = [] }
        try await eventually("c0's digest, seen late") { got.withLock { $0.contains { $0.conversations.contains("c0") } } }
        try await Task.sleep(for: .milliseconds(500))
        let all = got.withLock { $0 }.flatMap(\.conversations)
        #expect(all.sorted() == ["c0", "c1"], "each delivered once: \(all)")
        worker.requestStop()
        try await task.value
    }
}
