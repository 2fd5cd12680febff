import Foundation
import Synchronization
import UsherPostgres
import UsherRuntime
import UsherStore

/// One worker with LISTEN/NOTIFY intake, on a copy of the history database, while other
/// connections append customer messages at a fixed rate (each conversation gets three messages,
/// spread out, so three replies): by default pgbench in its own process (`-R`, Poisson
/// arrivals), as a backend would write them; with `--feeder store`, `PostgresStore.append` from
/// tasks of the benchmark's own process, one message every 1/rate s. Latency is
/// measured on the server: from the commit of the customer's message to the commit of the reply
/// (`pg_xact_commit_timestamp`), and, as `usher-bench` measures it on SQLite, from the
/// message's time (taken by the writer just before its insert) to the reply's time (taken by the
/// worker when it decides the batch, just before its commit).
enum Latency {
    struct Result {
        var p50: Double, p99: Double, max: Double
        var clientP50: Double, clientP99: Double
        var count: Int
        var offered: Double
        var profile: Profile
        var seconds: Double
        /// `--breakdown`: message → read and read → reply (p50, p90, p99 arrays, and the count).
        var halves: String
        /// Messages the worker took from their NOTIFY without reading them.
        var takenFromNotifications = 0
        /// The benchmark's process — the responder, and the wait for it — while the messages
        /// came and were answered: CPU seconds and context switches.
        var clientCPU = 0.0, clientSwitches = 0
        /// The worker's commits that came back other than committed, by result (none for the floor).
        var notCommitted: [String: Int] = [:]
        /// Over the same time: how many of the machine's cores were busy, and of them the
        /// server's processes and the writers (pgbench's own process; none with `--feeder store`).
        var cores = Cores()
    }

    /// Cores kept busy over a stretch of wall time (CPU seconds ÷ seconds).
    struct Cores {
        var machine = 0.0, stolen = 0.0, waiting = 0.0, server = 0.0, responder = 0.0, writers = 0.0

        /// "1.62 of 2 cores busy (server 1.10, responder 0.28, writers 0.08), 0.01 stolen, a task
        /// waiting for a core 31% of the time" (`waiting`: the share of wall time, PSI's "some")
        var text: String {
            "\(fmt(machine, 2)) of \(ProcessInfo.processInfo.activeProcessorCount) cores busy (server \(fmt(server, 2)), "
                + "responder \(fmt(responder, 2)), writers \(fmt(writers, 2))), \(fmt(stolen, 2)) stolen, "
                + "a task waiting for a core \(fmt(waiting * 100))% of the time"
        }
    }

    enum Feeder: String { case pgbench, store }

    /// Who answers: Usher's worker, or the floor (`Floor`).
    enum Responder {
        case usher(BotRuntime)
        case floor
    }

    static func run(_ server: BenchServer, responder: Responder, rate: Int, seconds duration: Int, writers: Int,
                    feeder: Feeder, breakdown: Bool = false, takeNotified: Bool = true, commitSessions: Int? = nil) async throws -> Result {
        let database = "usher_latency"
        try server.copy(Backlog.history, to: database)
        defer { server.drop(database) }
        let url = server.url(database)
        var storeOptions = PostgresStore.Options()
        storeOptions.takeNotified = takeNotified
        var options = Worker.Options()
        options.idleWait = .milliseconds(100)
        setCommitSessions(commitSessions, &storeOptions, &options)
        let workerStore = try await PostgresStore(url: url, options: storeOptions)
        let workerStoreSQL = workerStore.sql
        var feeders: [PostgresStore] = []
        if feeder == .store { for _ in 0..<writers { feeders.append(try await PostgresStore(url: url)) } }
        let metrics = Metrics()
        let failure = Mutex<String?>(nil)
        let answerer: Answerer
        switch responder {
        case .usher(let bot):
            let worker = Worker(store: workerStore, bots: [bot], workerID: "bench-latency", options: options, metrics: metrics,
                                log: Logger(minimum: .error))
            let task = Task {
                do { try await worker.run() } catch { failure.withLock { $0 = "\(error)" }; throw error }
            }
            answerer = Answerer(
                // Decided: committed, or found done when a commit whose outcome was lost (a
                // connection dropped after COMMIT) was tried again.
                decided: { ["committed", "duplicate"].reduce(0) { $0 + Int(metrics.value("usher_commits_total", ["bot": "bench", "result": $1]) ?? 0) } },
                stop: { worker.requestStop(); try await task.value; try await workerStore.close() })
        case .floor:
            guard let channel = workerStore.notifyChannel else { throw BenchError("latency: the store has no NOTIFY channel") }
            // Closed at once: its own LISTEN connection would take every NOTIFY too.
            try await workerStore.close()
            let floor = try Floor(url: url, channel: channel)
            answerer = Answerer(decided: { floor.answered }, stop: { try floor.stop() })
        }
        try await Task.sleep(for: .milliseconds(300))   // the worker is idle and LISTENing
        try server.checkpoint()
        try Profile.reset(server)

        var total = rate * duration
        let conversations = max(1, total / 3)
        let interval = 1.0 / Double(rate)
        let clock = ContinuousClock()
        let start = clock.now + .milliseconds(10)
        let finished: ContinuousClock.Instant
        let cpuBefore = cpuSeconds(), switchesBefore = contextSwitches()
        let machineBefore = machineSeconds(), pressureBefore = cpuPressureSeconds()
        let serverBefore = server.serverCPUSeconds(), childrenBefore = cpuSeconds(children: true)
        let timedFrom = clock.now
        switch feeder {
        case .pgbench:
            // Message i (i = n × clients + client) in conversation i mod conversations, written
            // as `usher send` writes one: the conversation upserted, then the message, in one
            // transaction (one pipeline).
            let script = """
                \\set i :n * :clients + :client_id
                \\set n :n + 1
                \\set c :i % \(conversations)
                \\startpipeline
                BEGIN;
                INSERT INTO conversations (id, created_at, updated_at) VALUES ('c' || :c, clock_timestamp(), clock_timestamp())
                  ON CONFLICT (id) DO UPDATE SET updated_at = greatest(conversations.updated_at, excluded.updated_at);
                INSERT INTO messages (id, conversation_id, kind, sender_type, content, created_at)
                  VALUES ('m' || :i, 'c' || :c, 'message', 'customer', 'hi', clock_timestamp());
                COMMIT;
                \\endpipeline

                """
            let args = ["-R", String(rate), "-T", String(duration), "-c", String(writers), "-j", String(min(writers, 2))]
            try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
                // pgbench blocks: not on the worker's cooperative threads.
                Thread.detachNewThread {
                    k.resume(with: Swift.Result { _ = try Ceiling.runPGBench(server, script: script, database: database, options: args) })
                }
            }
            finished = clock.now
            total = Int(try server.value("SELECT count(*) FROM messages WHERE id LIKE 'm%'", database: database)) ?? 0
        case .store:
            // Writer f appends messages f, f + writers, …, each at its time (or at once when late).
            let total = total
            finished = try await withThrowingTaskGroup(of: ContinuousClock.Instant.self) { group in
                for f in 0..<writers {
                    let feeder = feeders[f]
                    group.addTask {
                        for i in stride(from: f, to: total, by: writers) {
                            let due = start + .nanoseconds(Int64(Double(i) * interval * 1e9))
                            if due > clock.now { try await Task.sleep(until: due, clock: .continuous) }
                            _ = try await feeder.append(NewMessage(id: "m\(i)", conversationID: "c\(i % conversations)",
                                                                   from: .customer, text: "hi", at: Date()))
                        }
                        return clock.now
                    }
                }
                var last = start
                for try await t in group { last = max(last, t) }
                return last
            }
        }
        let offered = Double(total) / max(1e-9, (finished - start) / .seconds(1))
        let ran = (finished - start) / .seconds(1)
        let deadline = clock.now + .seconds(60)
        while answerer.decided() < total {
            if let why = failure.withLock({ $0 }) { throw BenchError("latency: the worker stopped: \(why)") }
            if clock.now > deadline {
                let count = { (result: String) in Int(metrics.value("usher_commits_total", ["bot": "bench", "result": result]) ?? 0) }
                // What is left, for the diagnosis: each undone message with the cursor and its lease.
                let left = (try? server.psql("""
                    SELECT m.seq, m.conversation_id, (SELECT seq FROM usher.cursors WHERE bot = 'bench') AS cursor,
                           (SELECT worker || ' until ' || until FROM usher.leases AS l WHERE l.bot = 'bench' AND l.conversation_id = m.conversation_id)
                    FROM messages AS m WHERE m.sender_type = 'customer' AND m.id LIKE 'm%'
                      AND NOT EXISTS (SELECT 1 FROM usher.processed AS p WHERE p.bot = 'bench' AND p.message_id = m.id)
                    ORDER BY m.seq LIMIT 10
                    """, database: database)) ?? "?"
                throw BenchError("latency: the responder answered \(answerer.decided()) of \(total) messages in 60 s "
                                 + "(\(count("duplicate")) found done when tried again; \(count("conflict")) conflicts, "
                                 + "\(count("outOfOrder")) out of order); undone (seq, conversation, cursor, lease):\n\(left)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let clientCPU = cpuSeconds() - cpuBefore, clientSwitches = contextSwitches() - switchesBefore
        let timed = max(1e-9, (clock.now - timedFrom) / .seconds(1))
        let machineAfter = machineSeconds()
        let cores = Cores(machine: (machineAfter.busy - machineBefore.busy) / timed,
                          stolen: (machineAfter.stolen - machineBefore.stolen) / timed,
                          waiting: (cpuPressureSeconds() - pressureBefore) / timed,
                          server: (server.serverCPUSeconds() - serverBefore) / timed,
                          responder: clientCPU / timed,
                          writers: (cpuSeconds(children: true) - childrenBefore) / timed)
        // The two halves of the way, for each conversation's first message (whose read wrote
        // the conversation's lease, so the lease's commit time is when it was read): message →
        // read, read → reply; p50, p90, p99 of each. Before the worker stops (it gives the
        // leases up).
        var halves = ""
        if breakdown, case .usher = responder {
            halves = try server.value("""
                SELECT percentile_disc(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY d1), percentile_disc(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY d2), count(*)
                FROM (SELECT extract(epoch FROM pg_xact_commit_timestamp(l.xmin) - pg_xact_commit_timestamp(i.xmin)) * 1000 AS d1,
                             extract(epoch FROM pg_xact_commit_timestamp(r.xmin) - pg_xact_commit_timestamp(l.xmin)) * 1000 AS d2
                      FROM messages AS i JOIN messages AS r ON r.idempotency_key = 'bench:' || i.id || ':0'
                      JOIN usher.leases AS l ON l.bot = 'bench' AND l.conversation_id = i.conversation_id
                      WHERE i.sender_type = 'customer' AND i.id LIKE 'm%' AND substr(i.id, 2)::int < \(conversations)) AS t
                """, database: database)
        }
        try await answerer.stop()
        for f in feeders { try await f.close() }
        try await Task.sleep(for: .milliseconds(300))   // the LISTEN connections close

        let out = try server.value("""
            SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY d), percentile_disc(0.99) WITHIN GROUP (ORDER BY d), max(d),
                   percentile_disc(0.5) WITHIN GROUP (ORDER BY dc), percentile_disc(0.99) WITHIN GROUP (ORDER BY dc), count(*)
            FROM (SELECT extract(epoch FROM pg_xact_commit_timestamp(r.xmin) - pg_xact_commit_timestamp(i.xmin)) * 1000 AS d,
                         extract(epoch FROM r.created_at - i.created_at) * 1000 AS dc
                  FROM messages AS i JOIN messages AS r ON r.idempotency_key = 'bench:' || i.id || ':0'
                  WHERE i.sender_type = 'customer' AND i.id LIKE 'm%') AS t
            """, database: database)
        if let dump = ProcessInfo.processInfo.environment["USHER_PG_BENCH_DUMP"] {
            let rows = try server.psql("""
                SELECT i.seq, i.id, extract(epoch FROM pg_xact_commit_timestamp(i.xmin)), extract(epoch FROM pg_xact_commit_timestamp(r.xmin) - pg_xact_commit_timestamp(i.xmin)) * 1000
                FROM messages AS i JOIN messages AS r ON r.idempotency_key = 'bench:' || i.id || ':0'
                WHERE i.sender_type = 'customer' AND i.id LIKE 'm%' ORDER BY 1
                """, database: database)
            try rows.write(toFile: dump, atomically: true, encoding: .utf8)
        }
        let profile = try Profile.read(server, database: database, sql: workerStoreSQL)
        let f = out.split(separator: "\t").map { Double($0) ?? .nan }
        guard f.count == 6 else { throw BenchError("latency query: \(out)") }
        return Result(p50: f[0], p99: f[1], max: f[2], clientP50: f[3], clientP99: f[4], count: Int(f[5]), offered: offered,
                      profile: profile, seconds: ran, halves: halves, takenFromNotifications: workerStore.takenFromNotifications,
                      clientCPU: clientCPU, clientSwitches: clientSwitches,
                      notCommitted: Dictionary(uniqueKeysWithValues: ["duplicate", "conflict", "outOfOrder"].map {
                          ($0, Int(metrics.value("usher_commits_total", ["bot": "bench", "result": $0]) ?? 0))
                      }), cores: cores)
    }

    /// What the latency run needs of whoever answers: how many messages it answered, and how to
    /// stop it.
    struct Answerer {
        var decided: () -> Int
        var stop: () async throws -> Void
    }
}

/// The floor of the latency part (in every round unless `--no-floor`): the least any responder to these messages must
/// do, without Usher. One connection LISTENs on the store's channel, on a thread of its own; on
/// each wake-up it takes the seqs of the messages notified from the NOTIFY payloads (the
/// native schema's payload starts with the seq: `PGSchema.trigger`) and writes one reply to each
/// in one statement, its own transaction committed as Usher's are: one round trip a wake-up,
/// no read. No rules, states, leases, done marks or order checks: what is left of Usher's way
/// from the message to the reply (Usher too takes a notified message without reading it).
final class Floor: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var running = true
    private var error: (any Error)?
    private let finished = DispatchSemaphore(value: 0)

    init(url: String, channel: String) throws {
        let db = try PGConnection(url)
        try db.script("LISTEN \(channel)")
        nonisolated(unsafe) let connection = db   // used by the thread alone from here on
        let thread = Thread { [self] in
            do { try loop(connection) } catch { lock.withLock { self.error = error } }
            finished.signal()
        }
        thread.name = "usher-pg-bench-floor"
        thread.start()
    }

    var answered: Int { lock.withLock { count } }

    func stop() throws {
        lock.withLock { running = false }
        finished.wait()
        if let error = lock.withLock({ error }) { throw error }
    }

    /// $1 the seqs of the messages to answer (int8[]): one reply each.
    static let reply = """
        INSERT INTO messages (id, conversation_id, sender_type, content, created_at, idempotency_key)
        SELECT 'r' || m.id, m.conversation_id, 'bot', 'ok', clock_timestamp(), 'bench:' || m.id || ':0'
        FROM messages AS m WHERE m.seq = ANY($1::int8[])
        """

    /// The seq a payload starts with: `[seq, …]`, or the seq alone.
    static func seq(_ payload: String) -> Int64? {
        Int64(payload.drop { $0 == "[" }.prefix { $0.isNumber })
    }

    private func loop(_ db: PGConnection) throws {
        let reply = Self.reply
        while lock.withLock({ running }) {
            // Notifications that came during the last statement are taken without waiting.
            var notes = try db.notifications(wait: 0)
            if notes.isEmpty { notes = try db.notifications(wait: 100) }
            let seqs = notes.compactMap { Self.seq($0.payload) }
            if seqs.isEmpty { continue }
            try db.execute(reply, ["{" + seqs.map(String.init).joined(separator: ",") + "}"], prepare: true)
            lock.withLock { count += seqs.count }
        }
    }
}
