public import Foundation
public import UsherRuntime
public import UsherStore
import UsherEngine

/// The bot of the worker benchmarks (`usher-bench --only worker`, `usher-pg-bench`) and of the
/// worker tests: three canned replies, then a handoff on the fourth customer message.
public enum BenchBot {
    public static let rules = """
    version: 1
    rules:
      - id: opening
        when: {customer_messages: {at_most: 3}}
        then: [reply: {sequence: ["one", "two", "three"]}]
      - id: threshold
        when: {customer_messages: {at_least: 4}}
        then: [handoff: {reason: threshold}]
    """

    /// A bot that answers every customer message with one reply: the transaction shape of
    /// `usher-store-bench` (a state, a reply, a done mark per message).
    public static let oneReply = """
    version: 1
    rules:
      - id: opening
        when: {customer_messages: {at_least: 1}}
        then: [reply: "Thanks for reaching out—we're here to help."]
    """

    /// The bot (id `bench`) written into a new temporary folder, and that folder (the caller
    /// removes it).
    public static func make(prefix: String, rules: String = rules) throws -> (dir: URL, bot: BotRuntime) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("bot"), withIntermediateDirectories: true)
        try Data("bot: bench\nrules: [rules.yaml]\n".utf8).write(to: dir.appendingPathComponent("bot/bot.yaml"))
        try Data(rules.utf8).write(to: dir.appendingPathComponent("bot/rules.yaml"))
        return (dir, try BotRuntime(path: dir.appendingPathComponent("bot").path))
    }

    /// Messages per second of a worker (batches of `batch`, idle wait 5 ms) on `store`'s backlog
    /// of `count` messages, from its start until `committed()` — the store's own count: asking
    /// the store from seq 0 every millisecond would walk every done message on the worker's own
    /// connection — reaches `count`; then checks that nothing is left pending and stops it.
    public static func messagesPerSecond(_ store: any ChatStore, _ bot: BotRuntime, count: Int, groupCommit: Bool,
                                         batch: Int = Worker.Options().batchSize,
                                         committed: @Sendable () -> Int) async throws -> Double {
        var options = Worker.Options()
        options.groupCommit = groupCommit
        options.batchSize = batch
        options.idleWait = .milliseconds(5)
        let worker = Worker(store: store, bots: [bot], options: options, log: Logger(minimum: .error))
        let start = ContinuousClock.now
        let task = Task { try await worker.run() }
        while committed() < count { try await Task.sleep(for: .milliseconds(1)) }
        let d = ContinuousClock.now - start
        worker.requestStop()
        try await task.value
        let left = try await store.pending(bot: bot.id, after: 0, limit: 1)
        precondition(left.isEmpty, "every message committed, none pending")
        return Double(count) / d.seconds
    }

    /// The commits of one conversation's messages, decided in order from no state (as the worker
    /// decides a conversation in a batch).
    public static func decide(_ messages: [StoredMessage], _ bot: BotRuntime, at now: Date) -> [Commit] {
        var state: ConversationState? = nil
        var out: [Commit] = []
        for m in messages {
            let initial = state ?? ConversationState(conversationID: m.conversationID, channel: m.channel, locale: m.locale)
            let decision = Engine.decide(bot.ruleSet, initial, m.message, now: m.at)
            out.append(Commit(bot: bot.identity, inbound: m, expectedVersion: state?.version ?? 0, expectedOwner: state?.owner,
                              decision: decision, at: now))
            state = decision.state
        }
        return out
    }
}
