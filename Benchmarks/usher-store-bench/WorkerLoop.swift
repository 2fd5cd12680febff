import Foundation
import UsherBenchSupport
import UsherSQLite
import UsherStore
import UsherTestSupport

/// The worker end to end on the workload — reading, deciding (`TestBot.oneReply`: one reply a
/// message, the loops' shape) and committing — timed from its start until every message is
/// committed: what the "decided and committed" is measured against the bare loop with.
enum WorkerLoop {
    static func run(path: String, messages: Int, options: SQLiteStore.Options, groupCommit: Bool, batch: Int) async throws -> Double {
        let (dir, bot) = try TestBot.make(prefix: "usher-store-bench", rules: TestBot.oneReply)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await SQLiteStore(path: path, options: options)
        let rate = try await TestBot.messagesPerSecond(store, bot, count: messages, groupCommit: groupCommit, batch: batch) {
            store.statistics.commits
        }
        try await store.close()
        return rate
    }
}
