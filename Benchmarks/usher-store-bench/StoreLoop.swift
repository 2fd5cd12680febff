import Foundation
import UsherEngine
import UsherSQLite
import UsherStore

/// The same shape through `SQLiteStore`: what the worker does for each message.
enum StoreLoop {
    /// One message at a time: pending (limit 1), state, commit.
    static func perMessage(_ store: SQLiteStore, messages: Int) async throws -> Double {
        let bot = Workload.bot.id
        var cursor: Int64 = 0
        var done = 0
        let start = ContinuousClock.now
        while done < messages {
            guard let m = try await store.pending(bot: bot, after: cursor, limit: 1).first else { break }
            let old = try await store.state(bot: bot, conversation: m.conversationID)
            let new = Workload.next(old, for: m)
            let r = try await store.commit(Workload.commit(m, old: old, new: new))
            precondition(r == .committed, "\(r)")
            cursor = m.seq
            done += 1
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        precondition(done == messages, "store loop did \(done) of \(messages)")
        return Double(done) / seconds
    }

    /// A batch at a time: pending (limit `batch`), the batch's states in one query, group commit.
    static func grouped(_ store: SQLiteStore, messages: Int, batch: Int, split: Bool = false) async throws -> Double {
        let bot = Workload.bot.id
        var cursor: Int64 = 0
        var done = 0
        let start = ContinuousClock.now
        var tp = Duration.zero, ts = Duration.zero, tc = Duration.zero
        defer {
            if split, done > 0 {
                print(String(format: "      per message: pending %.2f µs, states %.2f µs, commit(batch:) %.2f µs",
                             tp / .microseconds(1) / Double(done), ts / .microseconds(1) / Double(done),
                             tc / .microseconds(1) / Double(done)))
            }
        }
        while done < messages {
            var t = ContinuousClock.now
            let ms = try await store.pending(bot: bot, after: cursor, limit: min(batch, messages - done))
            if ms.isEmpty { break }
            tp += ContinuousClock.now - t; t = .now
            var states = try await store.states(bot: bot, conversations: ms.map(\.conversationID))
            ts += ContinuousClock.now - t
            var commits: [Commit] = []
            commits.reserveCapacity(ms.count)
            for m in ms {
                let old = states[m.conversationID]
                let new = Workload.next(old, for: m)
                commits.append(Workload.commit(m, old: old, new: new))
                states[m.conversationID] = new
            }
            t = .now
            let results = try await store.commit(batch: commits)
            tc += ContinuousClock.now - t
            precondition(results.allSatisfy { $0 == .committed }, "\(Set(results))")
            cursor = ms.last!.seq
            done += ms.count
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        precondition(done == messages, "grouped loop did \(done) of \(messages)")
        return Double(done) / seconds
    }
}
