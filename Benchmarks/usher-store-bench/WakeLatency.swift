import Foundation
import Synchronization
import UsherSQLite
import UsherStore

/// Time from a message being committed to `waitForChanges` returning in a waiting worker.
enum WakeLatency {
    struct Result {
        var samples: [Double]   // milliseconds
        var p50: Double { percentile(0.5) }
        var p99: Double { percentile(0.99) }
        var max: Double { samples.max() ?? 0 }
        func percentile(_ p: Double) -> Double {
            let s = samples.sorted()
            return s.isEmpty ? 0 : s[min(s.count - 1, Int(Double(s.count - 1) * p + 0.5))]
        }
        var line: String {
            String(format: "p50 %7.3f ms   p99 %7.3f ms   max %7.3f ms   (n = %d)", p50, p99, max, samples.count)
        }
    }

    static func ensureConversation(_ db: RawDB) {
        db.exec("INSERT OR IGNORE INTO conversations (id, created_at, updated_at) VALUES ('wake', 0, 0)")
    }

    /// The writer appends through the same `SQLiteStore` (the in-process signal).
    static func sameStore(_ store: SQLiteStore, samples: Int, gap: Duration) async throws -> Result {
        var out: [Double] = []
        for i in 0..<samples {
            let head = try await store.latestSeq()
            let waiter = Task { () -> ContinuousClock.Instant in
                try await store.waitForChanges(after: head, timeout: .seconds(5))
                return .now
            }
            try await Task.sleep(for: gap)
            let t0 = ContinuousClock.now
            try await store.append(NewMessage(id: "same-\(i)-\(UUID())", conversationID: "wake", from: .customer, text: "x"))
            out.append((try await waiter.value - t0).ms)
        }
        return Result(samples: out)
    }

    /// The writer is another connection on another thread (no in-process signal): the poll of
    /// `PRAGMA data_version` must notice.
    static func otherConnection(_ store: SQLiteStore, path: String, samples: Int, gap: Duration) async throws -> Result {
        let writer = RawDB(path: path)
        defer { writer.close() }
        ensureConversation(writer)
        let queue = DispatchQueue(label: "bench-writer")
        var out: [Double] = []
        for i in 0..<samples {
            let head = try await store.latestSeq()
            let waiter = Task { () -> ContinuousClock.Instant in
                try await store.waitForChanges(after: head, timeout: .seconds(5))
                return .now
            }
            try await Task.sleep(for: gap)
            let committed: ContinuousClock.Instant = await withCheckedContinuation { c in
                queue.async {
                    let s = writer.prepare(Workload.insertMessage)
                    writer.bind(s, 1, "other-\(i)-\(UUID())"); writer.bind(s, 2, "wake"); writer.bind(s, 3, "message")
                    writer.bind(s, 4, "customer"); writer.null(s, 5); writer.null(s, 6); writer.bind(s, 7, "x")
                    writer.bind(s, 8, Date().timeIntervalSince1970)
                    _ = writer.step(s)
                    writer.reset(s)
                    c.resume(returning: .now)
                }
            }
            out.append(max(0, (try await waiter.value - committed).ms))
        }
        return Result(samples: out)
    }

    /// The writer is another process (this executable with `--writer`), stamping each message
    /// with the wall clock at commit.
    static func otherProcess(_ store: SQLiteStore, path: String, samples: Int, gapMs: Int) async throws -> Result {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--writer", path, "\(samples)", "\(gapMs)"]
        var out: [Double] = []
        var head = try await store.latestSeq()
        try child.run()
        while out.count < samples {
            try await store.waitForChanges(after: head, timeout: .seconds(10))
            let woke = wallClockNanos()
            let latest = try await store.latestSeq()
            if latest == head {
                if !child.isRunning { break }
                continue
            }
            head = latest
            let last = try await store.transcript(conversation: "wake-process").last
            if let stamp = last.flatMap({ Int64($0.text) }) { out.append(Double(woke - stamp) / 1e6) }
        }
        child.waitUntilExit()
        return Result(samples: out)
    }

    /// `--writer PATH COUNT GAP_MS`: the child side of `otherProcess`.
    static func writerMain(path: String, count: Int, gapMs: Int) {
        let db = RawDB(path: path)
        db.exec("INSERT OR IGNORE INTO conversations (id, created_at, updated_at) VALUES ('wake-process', 0, 0)")
        let s = db.prepare(Workload.insertMessage)
        for i in 0..<count {
            usleep(UInt32(gapMs * 1000))
            db.bind(s, 1, "process-\(i)-\(UUID())"); db.bind(s, 2, "wake-process"); db.bind(s, 3, "message")
            db.bind(s, 4, "customer"); db.null(s, 5); db.null(s, 6); db.bind(s, 7, "\(wallClockNanos())")
            db.bind(s, 8, Date().timeIntervalSince1970)
            _ = db.step(s)
            db.reset(s)
        }
        db.close()
    }

    static func wallClockNanos() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
