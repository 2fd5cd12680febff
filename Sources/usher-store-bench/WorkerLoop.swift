import Foundation
import UsherBenchSupport
import UsherRuntime
import UsherSQLite
import UsherStore

/// The worker end to end on the workload — reading, deciding (`BenchBot.oneReply`: one reply a
/// message, the loops' shape) and committing — timed from its start until every message is
/// committed: what the "decided and committed" is measured against the bare loop with.
enum WorkerLoop {
    static func run(path: String, messages: Int, options storeOptions: SQLiteStore.Options, groupCommit: Bool,
                    batch: Int) async throws -> Double {
        let (dir, bot) = try BenchBot.make(prefix: "usher-store-bench", rules: BenchBot.oneReply)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await SQLiteStore(path: path, options: storeOptions)
        var options = Worker.Options()
        options.groupCommit = groupCommit
        options.batchSize = batch
        options.idleWait = .milliseconds(5)
        let worker = Worker(store: store, bots: [bot], options: options, log: Logger(minimum: .error))
        let start = ContinuousClock.now
        let task = Task { try await worker.run() }
        while store.statistics.commits < messages { try await Task.sleep(for: .milliseconds(1)) }
        let seconds = (ContinuousClock.now - start).seconds
        worker.requestStop()
        try await task.value
        let left = try await store.pending(bot: Workload.bot.id, after: 0, limit: 1)
        precondition(left.isEmpty, "the worker left messages pending")
        try await store.close()
        return Double(messages) / seconds
    }
}
