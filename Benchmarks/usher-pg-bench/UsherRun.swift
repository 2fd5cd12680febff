import Foundation
import UsherPostgres
import UsherRuntime
import UsherStore

/// The worker end to end on a copy of the backlog: `workers` workers in this process, each with
/// its own `PostgresStore` (its own connection and LISTEN connection) and its own worker id, all
/// serving the same bot, timed from their start — their stores connected — until every message
/// is committed.
enum UsherRun {
    struct Result {
        var messagesPerSecond: Double
        var seconds: Double
        /// Commits that came back `conflict` or `outOfOrder` (decided again one at a time).
        var conflicts: Int
        /// CPU seconds the benchmark's process (the workers) used meanwhile.
        var cpu: Double
        /// CPU seconds the server used meanwhile (`BenchServer.serverCPUSeconds`).
        var serverCPU: Double
    }

    static func run(_ server: BenchServer, _ backlog: Backlog, database: String, workers count: Int, bot: BotRuntime,
                    notificationWindow: TimeInterval?, commitSessions: Int? = nil) async throws -> Result {
        let url = server.url(database)
        var storeOptions = PostgresStore.Options()
        var options = Worker.Options()
        setCommitSessions(commitSessions, &storeOptions, &options)
        var stores: [PostgresStore] = []
        for _ in 0..<count { stores.append(try await PostgresStore(url: url, options: storeOptions)) }
        let metrics = Metrics()
        if let notificationWindow { options.notificationWindow = notificationWindow }
        let workers = stores.enumerated().map { i, store in
            Worker(store: store, bots: [bot], workerID: "bench-worker-\(i + 1)", options: options, metrics: metrics,
                   log: Logger(minimum: .error))
        }
        func done() -> Int {
            Int((metrics.value("usher_commits_total", ["bot": "bench", "result": "committed"]) ?? 0)
                + (metrics.value("usher_commits_total", ["bot": "bench", "result": "duplicate"]) ?? 0))
        }
        // Connected before the clock starts, as pgbench's rate leaves out its initial connection
        // time: each store's sessions up, their statements prepared and planned (`warmUp`, which
        // each worker's start then repeats on connections already up).
        for store in stores { try await store.warmUp() }
        let clock = ContinuousClock()
        let cpuBefore = cpuSeconds()
        let serverBefore = server.serverCPUSeconds()
        let start = clock.now
        let tasks = workers.map { w in Task { try await w.run() } }
        let deadline = start + .seconds(600)
        while done() < backlog.count {
            if clock.now > deadline { throw BenchError("the workers did not finish the backlog in 600 s (\(done()) done)") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = (clock.now - start) / .seconds(1)
        let cpu = cpuSeconds() - cpuBefore
        let serverCPU = server.serverCPUSeconds() - serverBefore
        for w in workers { w.requestStop() }
        for t in tasks { try await t.value }
        for s in stores { try await s.close() }
        try await Task.sleep(for: .milliseconds(300))   // the LISTEN connections close
        let processed = Int(try server.value("SELECT count(*) FROM usher.processed WHERE quarantined IS NULL AND seq >= \(backlog.firstSeq)", database: database)) ?? -1
        guard processed == backlog.count else { throw BenchError("expected \(backlog.count) messages done, found \(processed)") }
        let conflicts = Int((metrics.value("usher_commits_total", ["bot": "bench", "result": "conflict"]) ?? 0)
            + (metrics.value("usher_commits_total", ["bot": "bench", "result": "outOfOrder"]) ?? 0))
        return Result(messagesPerSecond: Double(backlog.count) / elapsed, seconds: elapsed, conflicts: conflicts, cpu: cpu, serverCPU: serverCPU)
    }
}

/// `--commit-sessions N` (nil: the defaults): each worker's commit connections, and the batches
/// it writes at once, which go together.
func setCommitSessions(_ n: Int?, _ store: inout PostgresStore.Options, _ worker: inout Worker.Options) {
    guard let n else { return }
    store.commitSessions = n
    worker.writesInFlight = n
}
