import Foundation
import UsherBenchSupport
import UsherEngine
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherTestSupport

/// The worker on a SQLite file: throughput on a backlog (decided and committed, one message at
/// a time and with group commit), and latency from a message stored to its reply stored at a
/// fixed offered rate.
enum WorkerBench {
    static func scratch() throws -> (dir: URL, bot: BotRuntime) { try TestBot.make(prefix: "usher-bench") }

    /// Messages per second through the worker on a backlog of `count` messages (4 per
    /// conversation: three replies and a handoff).
    static func throughput(count: Int, groupCommit: Bool) async throws -> Double {
        let (dir, bot) = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await SQLiteStore(path: dir.appendingPathComponent("w.db").path)
        let at = Date()
        for i in 0..<count {
            try await store.append(NewMessage(id: "m\(i)", conversationID: "c\(i / 4)", from: .customer, text: "hello \(i % 4)", at: at))
        }
        let rate = try await TestBot.messagesPerSecond(store, bot, count: count, groupCommit: groupCommit) {
            store.statistics.commits
        }
        try await store.close()
        return rate
    }

    /// p50 and p99 (ms) from a message stored to its reply stored, with `rate` messages/s
    /// offered by another connection for `seconds`.
    static func latency(rate: Int, seconds: Int) async throws -> (p50: Double, p99: Double, count: Int) {
        let (dir, bot) = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("l.db").path
        let workerStore = try await SQLiteStore(path: path)
        let feeder = try await SQLiteStore(path: path)
        var options = Worker.Options()
        options.idleWait = .milliseconds(100)
        let worker = Worker(store: workerStore, bots: [bot], options: options, log: Logger(minimum: .error))
        let task = Task { try await worker.run() }
        try await Task.sleep(for: .milliseconds(200))
        let total = rate * seconds
        let interval = Duration.nanoseconds(1_000_000_000 / rate)
        var next = ContinuousClock.now
        for i in 0..<total {
            next += interval
            // Each conversation gets three messages (three replies), spread out.
            try await feeder.append(NewMessage(id: "m\(i)", conversationID: "c\(i % (total / 3))", from: .customer, text: "hi", at: Date()))
            let now = ContinuousClock.now
            if next > now { try await Task.sleep(until: next, clock: .continuous) }
        }
        while workerStore.statistics.commits < total { try await Task.sleep(for: .milliseconds(5)) }
        worker.requestStop()
        try await task.value
        var samples: [Double] = []
        for c in 0..<(total / 3) {
            let t = try await feeder.transcript(conversation: "c\(c)")
            var lastInbound: Date?
            for m in t {
                if m.from == .customer { lastInbound = m.at }
                if m.from == .bot, let inbound = lastInbound { samples.append(m.at.timeIntervalSince(inbound) * 1000); lastInbound = nil }
            }
        }
        try await workerStore.close()
        try await feeder.close()
        samples.sort()
        guard !samples.isEmpty else { return (0, 0, 0) }
        return (samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)], samples.count)
    }

    static func run(quick: Bool) async throws {
        let n = quick ? 4_000 : 40_000
        let single = try await throughput(count: n, groupCommit: false)
        let grouped = try await throughput(count: n, groupCommit: true)
        print("worker on SQLite (synchronous=NORMAL), \(n) backlog messages: \(fmt(single)) msg/s one commit per message, \(fmt(grouped)) msg/s with group commit   [target ≥ 100,000 msg/s with group commit]")
        let (p50, p99, count) = try await latency(rate: 1_000, seconds: quick ? 2 : 5)
        print("latency stored → reply stored at 1,000 msg/s offered: p50 \(fmt(p50, 2)) ms, p99 \(fmt(p99, 2)) ms over \(count) replies   [target p99 ≤ 5 ms]")
    }
}
