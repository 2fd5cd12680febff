import Foundation
import Testing
import UsherEngine
import UsherPostgres
import UsherPostgresTestServer
import UsherRuntime
import UsherSQLMapping
import UsherStore
import UsherTestSupport

/// Worker processes on a real PostgreSQL server of the test run's own (initdb in a temporary
/// directory, a Unix socket): many workers, kill -9, a database restart, bursts at the
/// threshold, and a helpdesk's own schema through a mapping file. Asserted by counting rows.
@Suite("Workers on PostgreSQL", .serialized)
struct PostgresWorkerTests {
    static var server: PostgresTestServer { get async throws { try await PostgresTestServer.ready() } }

    /// Four workers share 10,000 customer messages in 500 conversations; one of them, chosen at
    /// random, is killed with SIGKILL at ≥ 50 random moments and started again under the same
    /// worker id (so it takes its own leases back at once).
    @Test func fourWorkersKilledAtRandom() async throws {
        let url = try await Self.server.createDatabase()
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await PostgresStore(url: url)
        let conversations = 500, perConversation = 20
        let fed = Flag()
        let feeder = Task {
            defer { fed.set() }
            try await Feed.customers(store, conversations: conversations, perConversation: perConversation)
        }
        func start(_ i: Int) throws -> WorkerProcess {
            try WorkerProcess(bot: scratch.bot, store: url, extra: ["--worker-id", "w\(i)"])
        }
        var workers = try (0..<4).map(start)
        var kills = 0
        while kills < 50 || !fed.isSet {
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...150)))
            let i = Int.random(in: 0..<4)
            workers[i].kill9()
            kills += 1
            workers[i] = try start(i)
            if kills > 400 { break }
        }
        try await feeder.value
        try await drain(store, bot: "crash")
        for w in workers {
            let (status, seconds) = w.terminate()
            #expect(status == 0 && seconds < 10, "SIGTERM: clean exit within the deadline (\(status), \(seconds) s)")
        }
        #expect(kills >= 50)
        try await Feed.verify(store, conversations: conversations, perConversation: perConversation)
        try await store.close()
    }

    /// The database goes down (an immediate shutdown, as a crash) for a second while two
    /// workers run and messages keep coming: nothing is lost or doubled, and the workers carry on.
    @Test func databaseRestartMidRun() async throws {
        let server = try PostgresTestServer()
        defer { try? server.stop(mode: "immediate") }
        let url = try await server.createDatabase()
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await PostgresStore(url: url)
        let conversations = 200, perConversation = 20
        let feeder = Task {
            try await Feed.customers(store, conversations: conversations, perConversation: perConversation, pause: .milliseconds(150))
        }
        let workers = try (0..<2).map { try WorkerProcess(bot: scratch.bot, store: url, extra: ["--worker-id", "w\($0)"]) }
        try await Task.sleep(for: .seconds(1))
        try server.restart(downFor: 1)
        try await Task.sleep(for: .seconds(1))
        try server.restart(downFor: 0.5)
        try await feeder.value
        try await drain(store, bot: "crash")
        for w in workers {
            let (status, _) = w.terminate()
            #expect(status == 0, "the worker survived the restarts and exits cleanly: \(w.log.suffix(2000))")
        }
        try await Feed.verify(store, conversations: conversations, perConversation: perConversation)
        try await store.close()
    }

    /// A worker started before its database (both started together, by compose or systemd):
    /// it logs `store-unreachable` and waits, opens once the server is up, and answers. SIGTERM
    /// while it waits ends it at once with status 0. A password that is wrong is not waited for.
    @Test(.timeLimit(.minutes(2))) func aWorkerWaitsForItsDatabaseToStart() async throws {
        let server = try PostgresTestServer()
        defer { try? server.stop(mode: "immediate") }
        let url = try await server.createDatabase()
        let scratch = try Scratch()
        defer { scratch.remove() }
        try server.stop()
        let worker = try WorkerProcess(bot: scratch.bot, store: url)
        try await worker.waitForLog("event=store-unreachable")
        #expect(worker.process.isRunning, "the worker waits for the server")
        try server.start()
        let store = try await PostgresStore(url: url)
        _ = try await store.append(NewMessage(conversationID: "early", from: .customer, text: "hello"))
        try await drain(store, bot: "crash", timeout: .seconds(30))
        #expect(try await store.transcript(conversation: "early").contains { $0.from == .bot })
        let (status, _) = worker.terminate()
        #expect(status == 0, "\(worker.log)")
        try await store.close()

        try server.stop()
        let waiting = try WorkerProcess(bot: scratch.bot, store: url)
        try await waiting.waitForLog("event=store-unreachable")
        let (stopped, seconds) = waiting.terminate()
        #expect(stopped == 0 && seconds < 3, "SIGTERM while waiting: status \(stopped) after \(seconds) s")

        try server.start()
        let wrong = try WorkerProcess(bot: scratch.bot, store: url.replacingOccurrences(of: "user=\(server.user)", with: "user=nobody_here"))
        wrong.process.waitUntilExit()
        #expect(wrong.process.terminationStatus == 1, "a role that does not exist is not waited for")
    }

    /// `usher send` through the example's mapping, as the docs' walkthrough would: no sender id
    /// made up for the helpdesk's numeric column, and a new ticket's `source` (NOT NULL) left to
    /// its default, for its first message and the next.
    @Test func sendThroughTheHelpdeskMapping() async throws {
        let server = try await Self.server
        let url = try server.createDatabase(prefix: "hdsend")
        let database = PostgresTestServer.database(of: url)
        _ = try server.psql(try String(contentsOf: repoRoot.appendingPathComponent("examples/mapping/helpdesk-schema.sql"), encoding: .utf8),
                            database: database)
        let mapping = repoRoot.appendingPathComponent("examples/mapping/helpdesk.yaml").path
        for text in ["hello", "again"] {
            let (status, output) = try runUsher(["send", "--store", url, "--mapping", mapping, "--conversation", "t-9", text], stdout: true)
            #expect(status == 0, "\(output)")
        }
        #expect(try server.psql("SELECT source || ' ' || count(*) FROM helpdesk.tickets JOIN helpdesk.ticket_events USING (ticket_id) "
                                + "WHERE ticket_id = 't-9' GROUP BY source", database: database)
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "web 2")
    }

    /// A role without the rights a first start needs is told where the grants are.
    @Test func aRoleWithoutRightsIsToldWhereTheGrantsAre() async throws {
        let server = try await Self.server
        let url = try server.createDatabase(prefix: "norights")
        let database = PostgresTestServer.database(of: url)
        let role = "plain_" + database
        _ = try server.psql("CREATE ROLE \(role) LOGIN", database: database)
        let (status, text) = try runUsher(["inbox", "--store", url.replacingOccurrences(of: "user=\(server.user)", with: "user=\(role)")])
        #expect(status == 1)
        #expect(text.contains("permission denied") && text.contains("docs/store-postgres.md, \"A least-privileged role\""), "\(text)")
    }

    /// The seed's race at scale: after three messages each, 200 conversations get their 4th
    /// and 5th customer message at the same moment from two connections while four workers
    /// run: exactly one handoff (one notice, one notification) per conversation.
    @Test func burstsAtTheThresholdAcrossWorkers() async throws {
        let url = try await Self.server.createDatabase()
        let scratch = try Scratch()
        defer { scratch.remove() }
        let a = try await PostgresStore(url: url)
        let b = try await PostgresStore(url: url)
        let workers = try (0..<4).map { try WorkerProcess(bot: scratch.bot, store: url, extra: ["--worker-id", "w\($0)"]) }
        let conversations = 200
        for k in 0..<3 {
            for c in 0..<conversations {
                try await a.append(NewMessage(id: "c\(c)-m\(k)", conversationID: "c\(c)", from: .customer, senderID: "u\(c)", text: "hi"))
            }
        }
        try await drain(a, bot: "crash")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (store, k) in [(a, 3), (b, 4)] {
                group.addTask {
                    for c in 0..<conversations {
                        try await store.append(NewMessage(id: "c\(c)-m\(k)", conversationID: "c\(c)", from: .customer,
                                                          senderID: "u\(c)", text: "still there?"))
                    }
                }
            }
            try await group.waitForAll()
        }
        try await drain(a, bot: "crash")
        for w in workers { _ = w.terminate() }
        var problems: [String] = []
        for c in 0..<conversations {
            let t = try await a.transcript(conversation: "c\(c)")
            let notices = t.filter { $0.from == .system }.count
            let replies = t.filter { $0.from == .bot }.map(\.text)
            if notices != 1 || replies != ["one", "two", "three"] { problems.append("c\(c): \(notices) notices, replies \(replies)") }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(try await a.notifications(after: 0, limit: 10_000).count == conversations)
        #expect(try await a.inbox(bot: "crash").count == conversations)
        try await a.close()
        try await b.close()
    }

    /// The worker reads only when a NOTIFY names a message above what its last read covered,
    /// or a backlog written before it listened is not read through yet (`SignallingStore.notified`).
    /// A backlog waits when the worker starts (read in batches of 16: each read is full, and
    /// skips the conversations in flight), and must be done without any NOTIFY; then messages
    /// arrive one by one, a few milliseconds
    /// apart, in a handful of conversations — so most arrive while their conversation's last
    /// batch is being written, and are passed over by the read that follows their NOTIFY. With
    /// rescans off, a message the worker wrongly decided not to read for would never be
    /// answered: every one must be, and no reply may come before its message.
    @Test func messagesArrivingWhileTheirConversationIsWrittenAreRead() async throws {
        let url = try await Self.server.createDatabase()
        let (dir, bot) = try TestBot.make(prefix: "usher-skip-test", rules: TestBot.oneReply)
        defer { try? FileManager.default.removeItem(at: dir) }
        let feeder = try await PostgresStore(url: url)
        var options = Worker.Options()
        options.rescanInterval = .seconds(3600)
        options.batchSize = 16
        let conversations = 6, perConversation = 60, backlog = 20
        var sent = [Int](repeating: 0, count: conversations)
        for _ in 0..<backlog {
            for c in 0..<conversations {
                _ = try await feeder.append(NewMessage(id: "c\(c)-m\(sent[c])", conversationID: "c\(c)", from: .customer, text: "n\(sent[c])"))
                sent[c] += 1
            }
        }
        let store = try await PostgresStore(url: url)   // listening after the backlog was written
        let worker = Worker(store: store, bots: [bot], workerID: "w", options: options, log: Logger(minimum: .error))
        let running = Task { try await worker.run() }
        try await drain(feeder, bot: bot.id, timeout: .seconds(30))   // the backlog alone, no NOTIFY
        var order = (0..<conversations).flatMap { c in Array(repeating: c, count: perConversation - backlog) }
        order.shuffle()
        for c in order {
            _ = try await feeder.append(NewMessage(id: "c\(c)-m\(sent[c])", conversationID: "c\(c)", from: .customer, text: "n\(sent[c])"))
            sent[c] += 1
            try await Task.sleep(for: .microseconds(Int.random(in: 200...3_000)))
        }
        try await drain(feeder, bot: bot.id, timeout: .seconds(30))
        worker.requestStop()
        try await running.value
        // Most of the messages that came one by one were taken from their NOTIFY, not read.
        #expect(store.takenFromNotifications > 0)
        for c in 0..<conversations {
            let t = try await feeder.transcript(conversation: "c\(c)")
            let answered = t.filter { $0.from == .bot }.count
            // No reply before the message it answers: never more replies than messages so far.
            var balance = 0
            let inOrder = t.allSatisfy { m in balance += m.from == .customer ? 1 : -1; return balance >= 0 }
            #expect(answered == perConversation && inOrder, "c\(c): \(answered) replies; \(t.map(\.text))")
        }
        try await store.close()
        try await feeder.close()
    }

    /// Shares settle: a worker whose share changed reads from the cursor at once, and again two
    /// member intervals later — by then the other workers have let go of what is now its own.
    /// What its reads passed over as still theirs meanwhile is answered then, not at the next
    /// rescan (an hour away here).
    @Test func whatAnotherLetsGoAfterASharesChangeIsReadSoon() async throws {
        let url = try await Self.server.createDatabase()
        let (dir, bot) = try TestBot.make(prefix: "usher-settle-test", rules: TestBot.oneReply)
        defer { try? FileManager.default.removeItem(at: dir) }
        let other = try await PostgresStore(url: url)
        let group = "usher:workers:" + bot.id
        _ = try await other.members(group: group, worker: "other", until: Date().addingTimeInterval(3600))
        _ = try await other.append(NewMessage(id: "x1", conversationID: "x", from: .customer, text: "held elsewhere"))
        _ = try await other.claimPending(bot: bot.id, after: 0, limit: 10, worker: "other", until: Date().addingTimeInterval(3600),
                                         skipping: [:], share: .all, holds: { _ in false })
        var options = Worker.Options()
        options.rescanInterval = .seconds(3600)
        // Heartbeats every 50 ms while the group forms; two intervals (3 s) leave room for a
        // loaded machine between y's answer and the release below.
        options.memberInterval = .milliseconds(1_500)
        let store = try await PostgresStore(url: url)
        let worker = Worker(store: store, bots: [bot], workerID: "w1", options: options, log: Logger(minimum: .error))
        let running = Task { try await worker.run() }
        try await Task.sleep(for: .milliseconds(900))   // w1 shares with "other"; x is held by it
        // "other" leaves the group: at its next heartbeat w1's share becomes everything, and it
        // reads from the cursor at once — x still held.
        _ = try await other.members(group: group, worker: "other", until: .distantPast)
        try await Task.sleep(for: .milliseconds(450))
        // A message that keeps w1 busy: its read passes over x, and the reads after it start above.
        _ = try await other.append(NewMessage(id: "y1", conversationID: "y", from: .customer, text: "free"))
        try await eventually("y answered") { try await other.transcript(conversation: "y").count == 2 }
        try await other.release(bot: bot.id, worker: "other")   // well within the two member intervals
        #expect(try await other.transcript(conversation: "x").count == 1)
        try await eventually("x answered well before the next rescan", timeout: .seconds(15)) {
            try await other.transcript(conversation: "x").count == 2
        }
        worker.requestStop()
        try await running.value
        try await store.close()
        try await other.close()
    }

    /// Rescans only for what the reads passed over (`Intake.passedOver`): a worker whose reads
    /// pass over nothing does not go back below them (until the tenth interval, from the
    /// cursor); one whose read passed over a message another worker held goes back at the next
    /// interval — from just below it — and answers it once let go.
    @Test func aWorkerLooksBackOnlyForWhatItsReadsPassedOver() async throws {
        let url = try await Self.server.createDatabase()
        let (dir, bot) = try TestBot.make(prefix: "usher-rescan-test", rules: TestBot.oneReply)
        defer { try? FileManager.default.removeItem(at: dir) }
        var otherOptions = PostgresStore.Options()
        otherOptions.takeNotified = false
        let other = try await PostgresStore(url: url, options: otherOptions)
        var options = Worker.Options()
        // From the cursor every 10 s: far beyond the 2.4 s looked at below, however late the look.
        options.rescanInterval = .seconds(1)
        let metrics = Metrics()
        let store = try await PostgresStore(url: url)
        let worker = Worker(store: store, bots: [bot], workerID: "w1", options: options, metrics: metrics, log: Logger(minimum: .error))
        let started = ContinuousClock.now
        let running = Task { try await worker.run() }
        func rescans() -> Double { metrics.value("usher_rescans_total", ["bot": bot.id]) ?? 0 }
        for i in 0..<20 { _ = try await other.append(NewMessage(id: "a\(i)", conversationID: "a\(i % 5)", from: .customer, text: "hi")) }
        try await drain(other, bot: bot.id, timeout: .seconds(10))
        try await Task.sleep(until: started + .milliseconds(2_400))
        #expect(rescans() == 0, "nothing was passed over: no rescan in 2.4 s")
        worker.requestStop()
        try await running.value
        try await store.close()
        // Meanwhile "other" took x; the next worker's first read passes over it to y.
        _ = try await other.append(NewMessage(id: "x1", conversationID: "x", from: .customer, text: "held elsewhere"))
        let last = try await other.latestSeq()
        _ = try await other.claimPending(bot: bot.id, after: last - 1, limit: 10, worker: "other", until: Date().addingTimeInterval(3600),
                                         skipping: [:], share: .all, holds: { _ in false })
        _ = try await other.append(NewMessage(id: "y1", conversationID: "y", from: .customer, text: "free"))
        let again = try await PostgresStore(url: url)
        let next = Worker(store: again, bots: [bot], workerID: "w1", options: options, metrics: metrics, log: Logger(minimum: .error))
        let resumed = Task { try await next.run() }
        try await eventually("y answered") { try await other.transcript(conversation: "y").count == 2 }
        try await eventually("a rescan for x, held", timeout: .seconds(5)) { rescans() >= 1 }
        #expect(try await other.transcript(conversation: "x").count == 1)
        try await other.release(bot: bot.id, worker: "other")
        try await eventually("x answered at the next rescan", timeout: .seconds(5)) {
            try await other.transcript(conversation: "x").count == 2
        }
        next.requestStop()
        try await resumed.value
        try await again.close()
        try await other.close()
    }

    /// A worker whose LISTEN connection goes deaf without breaking (its backend stopped with
    /// SIGSTOP; a transaction-pooling proxy does the same) still answers: the store's probes find
    /// the deafness and it polls. Without them the worker waited for NOTIFYs that did not come,
    /// and found the message only at its next read from the cursor — ten hours away here.
    @Test(.timeLimit(.minutes(1))) func aWorkerWhoseListenerGoesDeafStillAnswers() async throws {
        let server = try await Self.server
        let url = try server.createDatabase()
        let database = PostgresTestServer.database(of: url)
        let (dir, bot) = try TestBot.make(prefix: "usher-deaf-test", rules: TestBot.oneReply)
        defer { try? FileManager.default.removeItem(at: dir) }
        let feeder = try await PostgresStore(url: url + (url.contains("?") ? "&" : "?") + "application_name=feeder")
        var storeOptions = PostgresStore.Options()
        storeOptions.listenProbeInterval = .milliseconds(150)
        let store = try await PostgresStore(url: url, options: storeOptions)
        var options = Worker.Options()
        options.rescanInterval = .seconds(3600)
        let worker = Worker(store: store, bots: [bot], workerID: "w", options: options, log: Logger(minimum: .error))
        let running = Task { try await worker.run() }
        _ = try await feeder.append(NewMessage(id: "m1", conversationID: "c", from: .customer, text: "hi"))
        try await drain(feeder, bot: bot.id, timeout: .seconds(10))
        let pid = try #require(Int32(server.psql("SELECT pid FROM pg_stat_activity WHERE datname = '\(database)' "
                                                 + "AND application_name = 'usher.postgres.listen'", database: database)
                                        .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, SIGSTOP) == 0)
        defer { kill(pid, SIGCONT) }
        try await eventually("the probes find it deaf") { store.changeSignal == nil }
        _ = try await feeder.append(NewMessage(id: "m2", conversationID: "c", from: .customer, text: "still there?"))
        try await drain(feeder, bot: bot.id, timeout: .seconds(30))
        #expect(try await feeder.transcript(conversation: "c").filter { $0.from == .bot }.count == 2)
        kill(pid, SIGCONT)
        worker.requestStop()
        try await running.value
        try await store.close()
        try await feeder.close()
    }

    /// TLS: a worker whose store URL asks for it (`sslmode=require`, over TCP) reads, listens and
    /// commits through encrypted connections; and a reply much larger than libpq's buffer comes
    /// whole through a pipeline whose task waits on its thread. (TLS can hold bytes it decrypted
    /// already, which the socket does not announce — `usher_pq_tls_pending` reads them before a
    /// wait — but this reply does not get into that state here: it passes without the check too.)
    @Test(.timeLimit(.minutes(2))) func aWorkerOverTLS() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func command(_ args: [String]) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = args
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0, "\(args.joined(separator: " "))")
        }
        try command(["openssl", "req", "-new", "-x509", "-days", "1", "-nodes", "-subj", "/CN=localhost",
                     "-keyout", dir + "/server.key", "-out", dir + "/server.crt"])
        chmod(dir + "/server.key", 0o600)
        if getuid() == 0 { try command(["chown", "postgres", dir + "/server.key", dir + "/server.crt"]) }
        let port = try Loopback.freePort()
        let server = try PostgresTestServer(settings: [
            "fsync": "off", "listen_addresses": "127.0.0.1", "port": String(port), "ssl": "on",
            "ssl_cert_file": dir + "/server.crt", "ssl_key_file": dir + "/server.key",
        ])
        defer { try? server.stop(mode: "immediate") }
        let database = PostgresTestServer.database(of: try server.createDatabase())
        let url = "postgresql://\(server.user)@127.0.0.1:\(port)/\(database)?sslmode=require"
        let check = try PGConnection(url)
        #expect(try check.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").string(0, 0) == "t")
        // A megabyte in one reply, its task waiting on the thread.
        let thread = ThreadExecutor(name: "usher-test-tls", spin: .zero)
        defer { thread.stop() }
        let length = await Task(executorPreference: thread) { () async -> Int in
            guard let c = try? PGConnection(url),
                  let r = try? await c.pipeline([("SELECT repeat('x', $1::int)", ["1000000"])], on: thread) else { return -1 }
            return r[0].string(0, 0).utf8.count
        }.value
        #expect(length == 1_000_000)
        // A worker over TLS: LISTEN, claims and commits, every connection encrypted.
        let (botDir, bot) = try TestBot.make(prefix: "usher-tls-test", rules: TestBot.oneReply)
        defer { try? FileManager.default.removeItem(at: botDir) }
        let feeder = try await PostgresStore(url: url)
        let store = try await PostgresStore(url: url)
        let worker = Worker(store: store, bots: [bot], workerID: "w", options: Worker.Options(), log: Logger(minimum: .error))
        let running = Task { try await worker.run() }
        // Listening before the messages come, so that they arrive as NOTIFYs over TLS too.
        try await eventually("the worker's store listens") { store.changeSignal != nil }
        for c in 0..<5 {
            for k in 0..<4 {
                _ = try await feeder.append(NewMessage(id: "c\(c)-m\(k)", conversationID: "c\(c)", from: .customer,
                                                       text: String(repeating: "long message ", count: 1_000)))
            }
        }
        try await drain(feeder, bot: bot.id, timeout: .seconds(30))
        for c in 0..<5 { #expect(try await feeder.transcript(conversation: "c\(c)").filter { $0.from == .bot }.count == 4) }
        // The server names every connection of the two stores (reading, commits, LISTEN, the
        // feeder's) and its client port, and says whether it is encrypted; each is a socket of
        // this process, on which the kernel applies Usher's settings (`PGConnInfo`): probed
        // after 30 s idle, not after the system's two hours, and given up within a minute.
        let wanted = Loopback.Settings(keepalive: true, idle: 30, interval: 10, count: 3, userTimeout: 60_000)
        var seen: [String] = []
        try await eventually("every connection of the stores encrypted, with Usher's keepalives", timeout: .seconds(30),
                             detail: seen.joined(separator: "\n")) {
            let r = try check.execute("SELECT a.application_name, a.client_port, s.ssl FROM pg_stat_activity a "
                                      + "JOIN pg_stat_ssl s USING (pid) WHERE a.application_name LIKE 'usher.postgres%' "
                                      + "ORDER BY a.application_name")
            let sockets = Loopback.connections(to: port)
            seen = (0..<r.rows).map { i in
                let settings = Int(r.string(i, 1)).flatMap { sockets[$0] }
                return "\(r.string(i, 0)) port \(r.string(i, 1)) ssl \(r.string(i, 2)): \(settings.map(String.init(describing:)) ?? "no socket here")"
            }
            return r.rows >= 5 && (0..<r.rows).allSatisfy { i in
                r.string(i, 2) == "t" && Int(r.string(i, 1)).flatMap { sockets[$0] } == wanted
            }
        }
        worker.requestStop()
        try await running.value
        try await store.close()
        try await feeder.close()

        // One-off commands over TLS with a SCRAM login end with status 0: their store waits for
        // its listener's thread to close its connection before the process exits. It did not,
        // and the thread, still connecting, raced OpenSSL's clean-up at exit: a crash (status
        // 139) after the message was written, in about one run in six — a script that sends
        // again on failure would have sent it twice.
        _ = try server.psql("CREATE ROLE teller LOGIN SUPERUSER PASSWORD 'tls-secret'")
        let hba = server.directory + "/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("hostssl all teller 127.0.0.1/32 scram-sha-256\n" + rules).write(toFile: hba, atomically: false, encoding: .utf8)
        _ = try server.psql("SELECT pg_reload_conf()")
        let teller = "postgresql://teller:tls-secret@127.0.0.1:\(port)/\(database)?sslmode=require"
        for k in 0..<12 {
            let (sent, sendOutput) = try runUsher(["send", "--store", teller, "--conversation", "one-off", "hi \(k)"], stdout: true)
            #expect(sent == 0 && sendOutput.hasPrefix("sent "), "send \(k): status \(sent)\n\(sendOutput)")
            let (listed, inboxOutput) = try runUsher(["inbox", "--store", teller], stdout: true)
            #expect(listed == 0, "inbox \(k): status \(listed)\n\(inboxOutput)")
        }
        #expect(try check.execute("SELECT count(*) FROM messages WHERE conversation_id = 'one-off'").int64(0, 0) == 12)
    }

    /// `warmUp` connects the reading and commit sessions and runs every commit statement once
    /// — on the native tables, and on a helpdesk's through its mapping as the least-privileged
    /// role — without writing a row.
    @Test func aWarmUpReadiesTheSessionsAndWritesNothing() async throws {
        let server = try await Self.server
        let native = try server.createDatabase(prefix: "warm")
        let helpdesk = try server.createDatabase(prefix: "warmhelpdesk")
        try server.psql(try String(contentsOf: repoRoot.appendingPathComponent("examples/mapping/helpdesk-schema.sql"), encoding: .utf8),
                        database: PostgresTestServer.database(of: helpdesk))
        let (mapping, diagnostics) = SQLMapping.load(path: repoRoot.appendingPathComponent("examples/mapping/helpdesk.yaml").path)
        #expect(diagnostics.isEmpty)
        let stores = [
            (native, "messages", try await PostgresStore(url: native)),
            (helpdesk, "helpdesk.ticket_events",
             try await PostgresStore(url: helpdesk.replacingOccurrences(of: "user=\(server.user)", with: "user=usher"),
                                     mapping: try #require(mapping))),
        ]
        for (url, messages, store) in stores {
            let database = PostgresTestServer.database(of: url)
            func sql(_ q: String) throws -> String { try server.psql(q, database: database).trimmingCharacters(in: .whitespacesAndNewlines) }
            let written = ["usher.bot_state", "usher.processed", "usher.notifications", "usher.handoffs", messages]
                .map { "(SELECT count(*) FROM \($0))" }.joined(separator: " || ',' || ")
            let before = try sql("SELECT " + written)
            try await store.warmUp()
            #expect(try sql("SELECT " + written) == before)
            var names: [String] = []
            for _ in 0..<40 {
                names = try sql("SELECT string_agg(application_name, ',' ORDER BY application_name) FROM pg_stat_activity "
                                + "WHERE datname = '\(database)' AND application_name LIKE 'usher.postgres.%'").split(separator: ",").map(String.init)
                if names.contains("usher.postgres.listen") || names.count >= 3 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(["usher.postgres.commit0", "usher.postgres.commit1", "usher.postgres.reader"].allSatisfy(names.contains), "\(names)")
            try await store.close()
        }
    }

    /// The example's index of inbound events (examples/mapping/helpdesk-schema.sql) reads as the
    /// store's test for an inbound message through the example's mapping: the plan of a read,
    /// made once as the store's sessions make it, goes through it.
    @Test func theHelpdesksInboundIndexServesTheReads() async throws {
        let server = try await Self.server
        let url = try server.createDatabase(prefix: "hdindex")
        let database = PostgresTestServer.database(of: url)
        try server.psql(try String(contentsOf: repoRoot.appendingPathComponent("examples/mapping/helpdesk-schema.sql"), encoding: .utf8)
                        + """
                        INSERT INTO helpdesk.ticket_events (ticket_id, event_type, author_role, body)
                        SELECT '7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 'comment', CASE WHEN g % 3 = 0 THEN 'end_user' ELSE 'automation' END, 'text'
                        FROM generate_series(1, 3000) AS g;
                        ANALYZE helpdesk.ticket_events;
                        """, database: database)
        let (mapping, diagnostics) = SQLMapping.load(path: repoRoot.appendingPathComponent("examples/mapping/helpdesk.yaml").path)
        #expect(diagnostics.isEmpty)
        let store = try await PostgresStore(url: url.replacingOccurrences(of: "user=\(server.user)", with: "user=usher"),
                                            mapping: try #require(mapping))
        let db = try PGConnection(url)
        try db.script("SET plan_cache_mode = force_generic_plan; SET jit = off; PREPARE q AS \(store.sql.claimPending)")
        let r = try db.execute("EXPLAIN EXECUTE q('100', 'support', '512', 'w1', '2000000000', '0', '{}', '1', '0', '{}')")
        let plan = (0..<r.rows).map { r.string($0, 0) }.joined(separator: "\n")
        #expect(plan.contains("ticket_events_inbound"), "\(plan)")
        try await store.close()
    }

    /// A helpdesk's own tables (examples/mapping): the worker runs as the least-privileged
    /// role of the example, reads the helpdesk's events, writes its replies and notes into them
    /// and sets who handles the ticket; an agent's event silences it; "resolved" hands back.
    @Test func helpdeskSchemaThroughAMapping() async throws {
        let server = try await Self.server
        let url = try server.createDatabase(prefix: "helpdesk")
        let database = PostgresTestServer.database(of: url)
        try server.psql(try String(contentsOf: repoRoot.appendingPathComponent("examples/mapping/helpdesk-schema.sql"), encoding: .utf8),
                        database: database)
        let scratch = try Scratch()
        defer { scratch.remove() }
        let mapping = repoRoot.appendingPathComponent("examples/mapping/helpdesk.yaml").path
        let asUsher = url.replacingOccurrences(of: "user=\(server.user)", with: "user=usher")
        let worker = try WorkerProcess(bot: scratch.bot, store: asUsher, extra: ["--mapping", mapping])
        func sql(_ q: String) throws -> String { try server.psql(q, database: database).trimmingCharacters(in: .whitespacesAndNewlines) }
        // A mapped store starts a new bot after the newest message (--from now): write once it has.
        try await eventually("the worker has its position", detail: worker.log) {
            (try? sql("SELECT count(*) FROM usher.cursors WHERE bot = 'crash'")) == "1"
        }
        func event(_ role: String, _ body: String, type: String = "comment") throws {
            try sql("INSERT INTO helpdesk.ticket_events (ticket_id, event_type, author_role, author_id, body) "
                    + "VALUES ('T-9', '\(type)', '\(role)', '1', '\(body)')")
        }
        let bodies = "SELECT string_agg(author_role || ':' || body, ' | ' ORDER BY event_no) FROM helpdesk.ticket_events WHERE ticket_id = 'T-9'"

        try sql("INSERT INTO helpdesk.tickets (ticket_id, requester_id, source) VALUES ('T-9', 1, 'web')")
        for i in 1...4 { try event("end_user", "question \(i)") }
        try await eventually("three replies and a note", detail: worker.log) { try sql(bodies).contains("note:") }
        // Replies in order (after their messages; a backlog may be answered in one batch).
        #expect(try sql("SELECT string_agg(body, ',' ORDER BY event_no) FROM helpdesk.ticket_events "
                        + "WHERE ticket_id = 'T-9' AND author_role = 'automation'") == "one,two,three")
        #expect(try sql("SELECT handled_by FROM helpdesk.tickets WHERE ticket_id = 'T-9'") == "queue")
        #expect(try sql("SELECT automation_rule FROM helpdesk.ticket_events WHERE author_role = 'note' AND ticket_id = 'T-9'") == "threshold")

        try event("agent", "Ana here")
        try await eventually("the ticket is the agent's", detail: worker.log) { try sql("SELECT handled_by FROM helpdesk.tickets WHERE ticket_id = 'T-9'") == "human" }
        try event("end_user", "thanks Ana")
        // Decided on (done for the bot) before its absence of a reply is looked at.
        let (loaded, _) = SQLMapping.load(path: mapping)
        let reader = try await PostgresStore(url: asUsher, mapping: try #require(loaded))
        try await drain(reader, bot: "crash", timeout: .seconds(30))
        try await reader.close()
        #expect(try sql("SELECT count(*) FROM helpdesk.ticket_events WHERE ticket_id = 'T-9' AND event_no > "
                        + "(SELECT max(event_no) FROM helpdesk.ticket_events WHERE author_role = 'agent')"
                        + " AND author_role IN ('automation', 'note')") == "0", "silent once a human owns it")

        try event("agent", "", type: "resolved")
        try await eventually("resolved hands the ticket back", detail: worker.log) { try sql("SELECT handled_by FROM helpdesk.tickets WHERE ticket_id = 'T-9'") == "bot" }
        try event("end_user", "one more thing")
        try await eventually("a new session starts with the opening", detail: worker.log) { try sql(bodies).hasSuffix("end_user:one more thing | automation:one") }
        let (status, _) = worker.terminate()
        #expect(status == 0)
    }
}

/// Store URLs a command reads from.
@Suite("Store URLs")
struct StoreURLTests {
    /// `usher inbox` on a SQLite path where no store is: an error, and no empty store left there.
    @Test func inboxOnAMissingStoreSaysSo() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("usher-missing-\(UUID().uuidString).db").path
        let (status, text) = try runUsher(["inbox", "--store", "sqlite:" + path])
        #expect(status == 1)
        #expect(text.contains("no store at \(path): nothing has been written there yet"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

/// Two versions of one bot side by side (`replay --against`): they share an id, so the report
/// names them by the folders the user gave.
@Suite("Replay against another version")
struct ReplayAgainstVersionTests {
    @Test func twoVersionsOfABotAreToldApartByTheirFolders() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-versions-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let next = dir.appendingPathComponent("bots/support-next")   // its rule packs at ../../rules, as in the repository
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("bots"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: repoRoot.appendingPathComponent("bots/support"), to: next)
        try FileManager.default.copyItem(at: repoRoot.appendingPathComponent("rules"), to: dir.appendingPathComponent("rules"))
        let rules = next.appendingPathComponent("rules.yaml")
        try String(contentsOf: rules, encoding: .utf8)
            .replacingOccurrences(of: "Hi there! How can we assist you today?", with: "Hello! What can I do for you?")
            .write(to: rules, atomically: true, encoding: .utf8)
        let (status, text) = try runUsher(["replay", "bots/support", repoRoot.appendingPathComponent("bots/support/transcripts/takeover.jsonl").path,
                                           "--against", next.path], stdout: true, in: repoRoot)
        #expect(status == 0, "\(text)")
        #expect(text.contains("Differences: bots/support → \(next.path)"), "\(text)")
        #expect(text.contains("bots/support: opening \"Hi there!") && text.contains("\(next.path): opening \"Hello!"), "\(text)")
    }
}

/// Passwords in a store URL never reach the output.
@Suite("Store URL secrets")
struct StoreURLSecretTests {
    /// A worker whose server is not there waits for it, and its log says so without the
    /// password; SIGTERM ends the wait with status 0.
    @Test func passwordsAreNotPrinted() throws {
        let (status, text) = try runUsher(["run", repoRoot.appendingPathComponent("bots/support").path, "--store",
                                           "postgresql://usher:hunter2@/chat?host=/nonexistent-usher-socket&password=swordfish&connect_timeout=2"],
                                          stopWhenItSays: "event=store-unreachable")
        #expect(status == 0, "stopped while waiting for the server: \(text)")
        #expect(text.contains("event=store-unreachable store=\"postgresql://usher:***@/chat?host=/nonexistent-usher-socket&password=***"),
                "\(text)")
        #expect(!text.contains("hunter2") && !text.contains("swordfish"), "\(text)")
    }

    /// The other places a secret can stand: an '@' left unencoded in the password, a client
    /// key's passphrase (`sslpassword`), a key in capitals, a keyword string instead of a URL
    /// (refused, and quoted), a SQLite URL whose error names the option. A server not there
    /// (no socket) exits 69, "unavailable".
    @Test(arguments: [
        ("postgresql://usher:hunt@er2@/chat?host=/nonexistent-usher-socket&connect_timeout=2", "hunt", 69,
         "cannot open postgresql://usher:***@/chat?host=/nonexistent-usher-socket"),
        ("postgresql://usher@/chat?host=/nonexistent-usher-socket&sslpassword=swordfish&connect_timeout=2", "swordfish", 69,
         "cannot open postgresql://usher@/chat?host=/nonexistent-usher-socket&sslpassword=***&connect_timeout=2"),
        ("postgresql://usher@/chat?host=/nonexistent-usher-socket&PASSWORD=swordfish", "swordfish", 1, "&PASSWORD=***"),
        ("host=/nonexistent-usher-socket dbname=chat password='cat fish' user=usher", "fish", 64,
         "unknown store 'host=/nonexistent-usher-socket dbname=chat password=*** user=usher'"),
        ("sqlite:/nonexistent-usher-dir/x.db?password=swordfish", "swordfish", 1, "password=***"),
    ])
    func noOtherSecretIsPrinted(url: String, secret: String, status: Int32, shown: String) throws {
        let (exit, text) = try runUsher(["inbox", "--store", url])
        #expect(exit == status, "\(text)")
        #expect(text.contains(shown), "\(text)")
        #expect(!text.contains(secret), "\(text)")
    }
}
