public import Foundation
public import UsherRuntime
public import UsherStore
public import UsherTestSupport
import UsherEngine

extension TestBot {
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
        let left = try await store.pending(bot: bot.id, after: .start, limit: 1).messages
        precondition(left.isEmpty, "every message committed, none pending")
        return Double(count) / (d / .seconds(1))
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
