import Foundation
import Synchronization
import Testing
import UsherDiagnostics
import UsherEngine
import UsherPostgresTestServer
import UsherSQLMapping
import UsherStore
import UsherStoreTestKit
import UsherTestSupport
@testable import UsherPostgres

/// What the PostgreSQL adapter does beyond the conformance suite: text PostgreSQL refuses,
/// transactions that commit out of sequence order, values a helpdesk's column cannot hold,
/// mapping files that do not match the database, connection loss, a least-privileged role.
@Suite("PostgreSQL store", .serialized)
struct PostgresStoreTests {
    static let bot = ConformanceSuite.bot

    func customer(_ store: PostgresStore, _ conversation: String, _ text: String, id: String = UUID().uuidString) async throws -> StoredMessage {
        try await Self.customer(store, conversation, text, id: id)
    }

    static func customer(_ store: PostgresStore, _ conversation: String, _ text: String, id: String = UUID().uuidString) async throws -> StoredMessage {
        try await store.append(NewMessage(id: id, conversationID: conversation, from: .customer, senderID: "u1", senderName: "Mei", text: text))
    }

    func reply(_ store: PostgresStore, _ m: StoredMessage, _ text: String) async throws -> CommitResult {
        let old = try await store.state(bot: Self.bot.id, conversation: m.conversationID)
        return try await store.commit(ConformanceSuite.sampleCommit(m, after: old, reply: text))
    }

    /// A batch whose commits say what they read, and find it so, is written in one round trip;
    /// one that finds otherwise — a state changed, a message done, an agent who wrote — is rolled
    /// back and checked first, with each commit's own result, and the session stays usable.
    @Test func aBatchAsReadGoesInOneRoundTripElseItIsCheckedFirst() async throws {
        let store = try await TestDB.store()
        let a1 = try await customer(store, "a", "one"), b1 = try await customer(store, "b", "one")
        let a2 = try await customer(store, "a", "two")
        let first = ConformanceSuite.sampleCommit(a1, after: nil, reply: "hi")
        let batch = [first, ConformanceSuite.sampleCommit(a2, after: first.state, reply: "again"),
                     ConformanceSuite.sampleCommit(b1, after: nil, reply: "hi", handoff: true)]
        #expect(try await store.commit(batch: batch) == [.committed, .committed, .committed])
        #expect(store.commitRoundTrips == (1, 0))
        #expect(try await store.inbox(bot: Self.bot.id).map(\.conversationID) == ["b"], "the handoff opened")
        // Continuing from the states as read (owner included): one round trip again.
        let b2 = try await customer(store, "b", "two"), a3 = try await customer(store, "a", "three")
        let sb = try await store.state(bot: Self.bot.id, conversation: "b"), sa = try await store.state(bot: Self.bot.id, conversation: "a")
        var back = ConformanceSuite.sampleCommit(b2, after: sb, reply: nil)
        back.state.owner = .bot   // the handoff ends
        #expect(try await store.commit(batch: [back, ConformanceSuite.sampleCommit(a3, after: sa, reply: "ok")]) == [.committed, .committed])
        #expect(store.commitRoundTrips == (2, 0))
        #expect(try await store.inbox(bot: Self.bot.id).isEmpty, "the handoff ended")
        // Stale: a's state moved on, b3 is done already (the same commit again), c's agent wrote.
        let a4 = try await customer(store, "a", "four"), c1 = try await customer(store, "c", "one")
        try await store.append(NewMessage(conversationID: "c", from: .agent, senderID: "ag", senderName: "Ana", text: "I'm here"))
        let stale = ConformanceSuite.sampleCommit(a4, after: sb, reply: "late")   // b's state: the wrong version
        let again = ConformanceSuite.sampleCommit(a3, after: sa, reply: "ok")
        let overtaken = ConformanceSuite.sampleCommit(c1, after: nil, reply: "hello?")
        #expect(try await store.commit(batch: [stale, again, overtaken]) == [.conflict, .duplicate, .silenced])
        #expect(store.commitRoundTrips == (2, 1))
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["one", "I'm here"], "no reply over the agent")
        // The session is usable, and a commit from the right state goes in one round trip.
        let now = try await store.state(bot: Self.bot.id, conversation: "a")
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(a4, after: now, reply: "four")]) == [.committed])
        #expect(store.commitRoundTrips == (3, 1))
        // A commit that does not say which owner it read is checked first.
        let a5 = try await customer(store, "a", "five")
        var unsaid = ConformanceSuite.sampleCommit(a5, after: try await store.state(bot: Self.bot.id, conversation: "a"), reply: nil)
        unsaid.expectedOwner = nil
        #expect(try await store.commit(batch: [unsaid]) == [.committed])
        #expect(store.commitRoundTrips == (3, 2))
        try await store.close()
    }

    /// A decision can leave a state at version 0 (the bot's own message); the next commit, which
    /// read that state, expects version 0 of a state that exists — and goes in one round trip
    /// instead of inserting the state again (a unique violation, retried for ever).
    @Test func aStateAtVersionZeroIsExpectedAsExisting() async throws {
        let store = try await TestDB.store()
        let m1 = try await customer(store, "z", "one"), m2 = try await customer(store, "z", "two")
        var first = ConformanceSuite.sampleCommit(m1, after: nil, reply: nil)
        first.state.version = 0
        #expect(try await store.commit(batch: [first]) == [.committed])
        let second = ConformanceSuite.sampleCommit(m2, after: first.state, reply: "ok")
        #expect(second.expectedVersion == 0 && second.expectedOwner == .bot)
        #expect(try await store.commit(batch: [second]) == [.committed])
        #expect(store.commitRoundTrips == (2, 0))
        try await store.close()
    }

    /// What another worker wrote between a batch's read and its commit, seen by the commit in one
    /// round trip as it writes: a done mark (its key), a state moved on (the version the update
    /// looks for). Either way the transaction writes nothing, the batch is checked first, and each
    /// commit gets its own result.
    @Test func whatAnotherWorkerWroteMeanwhileSendsTheBatchToTheCheck() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let db = try PGConnection(url)
        let d1 = try await customer(store, "d", "one"), e1 = try await customer(store, "e", "one")
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(d1, after: nil, reply: "hi"),
                                              ConformanceSuite.sampleCommit(e1, after: nil, reply: "hi")]) == [.committed, .committed])
        let d2 = try await customer(store, "d", "two"), e2 = try await customer(store, "e", "two")
        let sd = try await store.state(bot: Self.bot.id, conversation: "d"), se = try await store.state(bot: Self.bot.id, conversation: "e")
        // d2 marked done by another worker (its state untouched: a quarantine does that).
        try db.execute("INSERT INTO usher.processed (bot, message_id, seq, conversation_id, quarantined) VALUES ($1, $2, $3, 'd', 'test')",
                       [Self.bot.id, d2.id, String(d2.seq)])
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(d2, after: sd, reply: "two"),
                                              ConformanceSuite.sampleCommit(e2, after: se, reply: "two")]) == [.duplicate, .committed])
        #expect(store.commitRoundTrips == (1, 1))
        #expect(try await store.transcript(conversation: "d").map(\.text) == ["one", "hi", "two"], "no reply to the message done")
        // e's state moved on under another worker's commit (here, by hand): the update finds
        // another version, and the check a conflict.
        let e3 = try await customer(store, "e", "three")
        let before = try await store.state(bot: Self.bot.id, conversation: "e")
        try db.execute("UPDATE usher.bot_state SET version = version + 1 WHERE conversation_id = 'e'")
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(e3, after: before, reply: "three")]) == [.conflict])
        #expect(store.commitRoundTrips == (1, 2))
        #expect(try await store.transcript(conversation: "e").map(\.text) == ["one", "hi", "two", "two", "three"])
        _ = db
        try await store.close()
    }

    /// An agent's message inserted straight into the messages table (as a helpdesk's backend
    /// may: the conversation row only key-share locked, by the foreign key) and not committed yet
    /// when a reply in its conversation commits: the commit waits for it, sees it, and writes
    /// no reply over the agent.
    @Test func aCommitWaitsForAnAgentsInsertInFlight() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let f1 = try await customer(store, "f", "one")
        let agent = try PGConnection(url)
        try agent.script("BEGIN")
        try agent.execute("INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('ag', 'f', 'agent', 'mine')")
        let commit = Task { try await store.commit(batch: [ConformanceSuite.sampleCommit(f1, after: nil, reply: "bot")]) }
        try await Task.sleep(for: .milliseconds(500))
        try agent.script("COMMIT")
        #expect(try await commit.value == [.silenced])
        #expect(try await store.transcript(conversation: "f").map(\.text) == ["one", "mine"], "no reply over the agent")
        try await store.close()
    }

    /// A store opened on a database whose schema and NOTIFY trigger are already as this build
    /// makes them runs no DDL: it opens while a helpdesk's insert is in flight (CREATE TRIGGER
    /// would wait for it, and hold up the inserts behind it), and a role that may only read and
    /// write Usher's tables opens it too. A changed trigger (another mapping, another build) is
    /// installed again.
    @Test func anUpToDateSchemaOpensWithoutDDL() async throws {
        let url = try await TestDB.server.createDatabase()
        try await PostgresStore(url: url).close()
        let writer = try PGConnection(url)
        try writer.script("BEGIN")
        try writer.execute("INSERT INTO conversations (id) VALUES ('w')")
        try writer.execute("INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('w1', 'w', 'customer', 'hi')")
        let finished = Locked(false)
        let opened = Task {
            try await PostgresStore(url: url).close()
            finished.withLock { $0 = true }
        }
        // DDL would wait for the insert, which commits only after this wait: it would time out.
        try await eventually("the store opens while the insert is in flight") { finished.withLock { $0 } }
        try writer.script("COMMIT")
        try await opened.value
        // A role with rights on Usher's tables and the messages, and none to create anything.
        let database = PostgresTestServer.database(of: url)
        let role = "teller_" + database
        _ = try await TestDB.server.psql("""
            CREATE ROLE \(role) LOGIN;
            GRANT USAGE ON SCHEMA usher TO \(role);
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA usher TO \(role);
            GRANT SELECT, INSERT, UPDATE ON conversations, messages TO \(role);
            """, database: database)
        let teller = try await PostgresStore(url: url.replacingOccurrences(of: "user=\(await TestDB.server.user)", with: "user=\(role)"))
        _ = try await customer(teller, "t", "from a role that creates nothing")
        try await teller.close()
        // Another trigger than the installed one (an older build's, say) is replaced.
        try writer.script("CREATE OR REPLACE FUNCTION usher.notify_inbound() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN RETURN NULL; END $f$")
        try await PostgresStore(url: url).close()
        #expect(try writer.execute("SELECT prosrc FROM pg_proc WHERE proname = 'notify_inbound'").text(0, 0)?.contains("pg_notify") == true)
    }

    /// libpq's notices go where `PGNotices` routes them (`usher run`: its log), not raw on stderr.
    @Test func noticesGoWhereTheyAreRouted() async throws {
        let url = try await TestDB.server.createDatabase()
        let seen = Locked<[String]>([])
        PGNotices.route { m in seen.withLock { $0.append(m) } }
        defer { PGNotices.route(nil) }
        let db = try PGConnection(url)
        try db.script("DO $$ BEGIN RAISE WARNING 'usher test notice'; END $$")
        #expect(seen.withLock { $0 }.contains("WARNING:  usher test notice"), "\(seen.withLock { $0 })")
    }

    /// Two bots answering in the same two conversations at once, their batches in opposite
    /// orders, each row write slowed down: the commits lock the shared rows in one order and
    /// wait for each other, never deadlock (which would cost a second and a retry each time).
    @Test func twoBotsSharingConversationsDoNotDeadlock() async throws {
        let url = try await TestDB.server.createDatabase()
        let one = try await PostgresStore(url: url), two = try await PostgresStore(url: url)
        let db = try PGConnection(url)
        let p1 = try await customer(one, "p", "one"), q1 = try await customer(one, "q", "one")
        // Enough conversations that the updates go through the key, row by row in the order sent.
        try db.script("""
            INSERT INTO conversations (id) SELECT 'x' || g FROM generate_series(1, 20000) AS g;
            ANALYZE conversations;
            CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.2); RETURN NEW; END $$;
            CREATE TRIGGER slow BEFORE UPDATE ON conversations FOR EACH ROW EXECUTE FUNCTION slow();
            """)
        let other = BotIdentity(id: "other", name: "Other", senderID: "bot:other")
        async let a = one.commit(batch: [ConformanceSuite.sampleCommit(p1, after: nil, reply: "a"),
                                         ConformanceSuite.sampleCommit(q1, after: nil, reply: "a")])
        async let b = two.commit(batch: [ConformanceSuite.sampleCommit(q1, after: nil, reply: "b", bot: other),
                                         ConformanceSuite.sampleCommit(p1, after: nil, reply: "b", bot: other)])
        #expect(try await a == [.committed, .committed])
        #expect(try await b == [.committed, .committed])
        try await Task.sleep(for: .milliseconds(1_500))   // the statistics are flushed within a second
        #expect(try db.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()").int(0, 0) == 0)
        #expect(one.commitRoundTrips == (1, 0) && two.commitRoundTrips == (1, 0))
        try await one.close()
        try await two.close()
    }

    /// The one-round-trip guard keeps each bot's order: a message of the batch done for one bot
    /// is still undone for another.
    @Test func aBatchOfTwoBotsKeepsEachBotsOrder() async throws {
        let store = try await TestDB.store()
        let m1 = try await customer(store, "t", "one"), m2 = try await customer(store, "t", "two")
        let other = BotIdentity(id: "other", name: "Other", senderID: "bot:other")
        let batch = [ConformanceSuite.sampleCommit(m1, after: nil, reply: "a"),
                     ConformanceSuite.sampleCommit(m2, after: nil, reply: "b", bot: other)]
        #expect(try await store.commit(batch: batch) == [.committed, .outOfOrder])
        #expect(store.commitRoundTrips == (0, 1))
        try await store.close()
    }

    /// A pipeline whose implicit transaction fails as it commits (a deferred constraint here; a
    /// serialization failure would too) throws the server's error, not a lost connection, and
    /// leaves the connection usable — both with the thread waiting and without.
    @Test func anErrorAtThePipelinesCommitIsTheServersError() async throws {
        let url = try await TestDB.server.createDatabase()
        let db = try PGConnection(url)
        try db.script("CREATE TABLE d (x int, CONSTRAINT d_x UNIQUE (x) DEFERRABLE INITIALLY DEFERRED)")
        let twice: [(sql: String, params: [String?])] = [("INSERT INTO d VALUES ($1::int)", ["1"]), ("INSERT INTO d VALUES ($1::int)", ["1"])]
        #expect { try db.pipeline(twice) } throws: { ($0 as? StoreError)?.code == "pg-23505" }
        #expect(db.isOK)
        let thread = ThreadExecutor(name: "usher-test-pipeline", spin: .zero)
        defer { thread.stop() }
        let (code, ok) = await Task(executorPreference: thread) { () async -> (String?, Bool) in
            guard let db = try? PGConnection(url) else { return ("no connection", false) }
            do { try await db.pipeline(twice, on: thread); return (nil, db.isOK) } catch { return ((error as? StoreError)?.code, db.isOK) }
        }.value
        #expect(code == "pg-23505" && ok)
        #expect(try db.execute("SELECT count(*) FROM d").int64(0, 0) == 0)
    }

    /// Statements new to a connection are prepared in the pipeline that first runs them (one
    /// round trip): those prepared before a failing one stay prepared, under their names, and
    /// those after it are prepared again by the next pipeline — the connection keeps working.
    @Test func aPipelinePreparesItsNewStatementsOnTheWay() async throws {
        let url = try await TestDB.server.createDatabase()
        let db = try PGConnection(url)
        let one: (sql: String, params: [String?]) = ("SELECT $1::int + 1", ["1"])
        let two: (sql: String, params: [String?]) = ("SELECT $1::int + 2", ["1"])
        let broken: (sql: String, params: [String?]) = ("SELEC $1::int", ["1"])
        let r = try db.pipeline([one, two, one])
        #expect(r.map { $0.int64(0, 0) } == [2, 3, 2])
        func names() throws -> [String] {
            let r = try db.execute("SELECT name FROM pg_prepared_statements ORDER BY name")
            return (0..<r.rows).map { r.string($0, 0) }
        }
        #expect(try names() == ["usher_0", "usher_1"], "each statement prepared once")
        // The new one before the error is prepared; the one after it is not, and comes next time.
        let three: (sql: String, params: [String?]) = ("SELECT $1::int + 3", ["1"])
        let four: (sql: String, params: [String?]) = ("SELECT $1::int + 4", ["1"])
        #expect { try db.pipeline([three, broken, four]) } throws: { ($0 as? StoreError)?.code == "pg-42601" }
        #expect(db.isOK)
        #expect(try names() == ["usher_0", "usher_1", "usher_2"])
        #expect(try db.pipeline([four, three, one]).map { $0.int64(0, 0) } == [5, 4, 2])
        #expect(try names() == ["usher_0", "usher_1", "usher_2", "usher_3"])
        // Only preparing: what is new, in one round trip; the rest as it was.
        try db.prepare(all: [one.sql, "SELECT $1::int + 5"])
        #expect(try names().count == 5)
        #expect(try db.execute("SELECT $1::int + 5", ["1"], prepare: true).int64(0, 0) == 6)
        #expect(try names().count == 5)
    }

    /// A server left running by a test run killed from outside (its `owner` gone) is stopped and
    /// its directory removed when the next run starts one; a live run's server is left alone.
    @Test func aKilledRunsServerIsSweptAway() async throws {
        let live = try await TestDB.server
        let orphan = try PostgresTestServer()
        try orphan.psql("SELECT 1")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        try String(child.processIdentifier).write(toFile: orphan.directory + "/owner", atomically: true, encoding: .utf8)
        let output = "/tmp/usher-pg-out-\(child.processIdentifier)-1"   // a killed run's command output
        try "".write(toFile: output, atomically: true, encoding: .utf8)
        PostgresTestServer.sweepOrphans(bin: try PostgresTestServer.binDirectory(), runAs: getuid() == 0 ? "postgres" : nil)
        #expect(!FileManager.default.fileExists(atPath: orphan.directory))
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(throws: (any Error).self) { try orphan.psql("SELECT 1") }   // stopped
        #expect(try live.psql("SELECT 1").trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        #expect(FileManager.default.fileExists(atPath: live.directory + "/owner"))
    }

    /// More commits at once than commit sessions, from tasks on other threads: each waits for a
    /// free session on the store's reading thread (`PGSessionPool`), none is lost or mixed up,
    /// and the store closes cleanly after.
    @Test(.timeLimit(.minutes(1))) func moreCommitsAtOnceThanSessionsEachWaitForOne() async throws {
        var options = PostgresStore.Options()
        options.commitSessions = 1
        let store = try await TestDB.store(options)
        var messages: [StoredMessage] = []
        for c in 0..<12 { messages.append(try await customer(store, "pool\(c)", "hi \(c)")) }
        let results = try await withThrowingTaskGroup(of: (Int, CommitResult).self) { group in
            for (i, m) in messages.enumerated() {
                group.addTask { (i, try await store.commit(ConformanceSuite.sampleCommit(m, after: nil, reply: "re \(i)"))) }
            }
            return try await group.reduce(into: [Int: CommitResult]()) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 12 && results.values.allSatisfy { $0 == .committed })
        for (i, m) in messages.enumerated() {
            #expect(try await store.transcript(conversation: m.conversationID).map(\.text) == ["hi \(i)", "re \(i)"])
        }
        try await store.close()
        await #expect(throws: StoreError.self) { try await store.commit(ConformanceSuite.sampleCommit(messages[0], after: nil, reply: "late")) }
    }

    /// PostgreSQL's text cannot hold U+0000: the message is stored with U+FFFD instead, decided,
    /// and a reply quoting it is written the same way.
    @Test func nulBytesAreStoredAndDecided() async throws {
        let store = try await TestDB.store()
        let m = try await customer(store, "nul", "order\u{0}42")
        #expect(m.text == "order\u{FFFD}42")
        let pending = try await store.pending(bot: Self.bot.id, after: 0, limit: 10)
        #expect(pending.map(\.id) == [m.id])
        #expect(try await reply(store, m, "about order\u{0}42") == .committed)
        let t = try await store.transcript(conversation: "nul")
        #expect(t.map(\.text) == ["order\u{FFFD}42", "about order\u{FFFD}42"])
        try await store.close()
    }

    /// A SQL_ASCII database stores any bytes: invalid UTF-8 written by a backend is read with
    /// U+FFFD in place of the bad bytes, decided, and does not hold back the next conversation.
    @Test func invalidUTF8IsDecided() async throws {
        let server = try await TestDB.server
        let url = try server.createDatabase(encoding: "SQL_ASCII")
        let store = try await PostgresStore(url: url)
        let database = PostgresTestServer.database(of: url)
        try server.psql("""
            INSERT INTO conversations (id) VALUES ('bad');
            INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('m-bad', 'bad', 'customer', E'caf\\\\xe9 \\\\xff!');
            """.replacingOccurrences(of: "\\\\", with: "\\"), database: database)
        let next = try await customer(store, "good", "hello")
        let pending = try await store.pending(bot: Self.bot.id, after: 0, limit: 10)
        #expect(pending.map(\.id) == ["m-bad", next.id])
        #expect(pending.first?.text == "caf\u{FFFD} \u{FFFD}!")
        for m in pending { #expect(try await reply(store, m, "ok") == .committed) }
        #expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).isEmpty)
        try await store.close()
    }

    /// A transaction that took a sequence number and has not committed yet: the cursor stays
    /// below it, and the message is found once it commits — not skipped for good.
    /// A worker's read does not claim to cover a number an open transaction holds: the next read
    /// starting after it still finds that message once it commits.
    @Test func aReadStopsBelowATransactionInFlight() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let first = try await customer(store, "a", "first")
        let slow = try PGConnection(url)
        try slow.script("INSERT INTO conversations (id) VALUES ('z'); BEGIN")
        try slow.execute("INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('late', 'z', 'customer', 'late')")
        let later = try await customer(store, "b", "after the slow one")
        let until = Date().addingTimeInterval(30)
        let read = try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: "w", until: until,
                                                skipping: [:], holds: { _ in false })
        #expect(read.messages.map(\.id) == [first.id, later.id])
        #expect(read.readThrough == first.seq, "the read covers up to the hole, not past it (\(read.readThrough))")
        try slow.script("COMMIT")
        let next = try await store.claimPending(bot: Self.bot.id, after: read.readThrough, limit: 10, worker: "w", until: until,
                                                skipping: [first.conversationID: first.seq, later.conversationID: later.seq], holds: { _ in false })
        #expect(next.messages.map(\.id) == ["late"])
        try await store.close()
    }

    /// A read says the first message it passed over because another worker held its
    /// conversation (`Intake.passedOver`) — not a message done, one of another share, or one of
    /// the batches in flight — so that the worker looks below only when there is something to
    /// find there.
    @Test func aReadSaysWhatItPassedOver() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        // The other worker's claims always read (and lease): none taken from a NOTIFY.
        var options = PostgresStore.Options()
        options.takeNotified = false
        let other = try await PostgresStore(url: url, options: options)
        let until = Date().addingTimeInterval(30)
        let held = try await customer(store, "x", "held elsewhere")
        let done = try await customer(store, "d", "answered")
        #expect(try await reply(store, done, "ok") == .committed)
        let free = try await customer(store, "y", "free")
        _ = try await other.claimPending(bot: Self.bot.id, after: held.seq - 1, limit: 1, worker: "other", until: until,
                                         skipping: [:], holds: { _ in false })
        let read = try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: "w", until: until,
                                                skipping: [:], holds: { _ in false })
        #expect(read.messages.map(\.id) == [free.id])
        #expect(read.readThrough >= free.seq)
        #expect(read.passedOver == held.seq, "the held message is the first passed over (\(String(describing: read.passedOver)))")
        // Past it, nothing is passed over; nor by a read that finds nothing.
        let later = try await customer(store, "y", "later")
        let next = try await store.claimPending(bot: Self.bot.id, after: read.readThrough, limit: 10, worker: "w", until: until,
                                                skipping: [:], holds: { _ in false })
        #expect(next.messages.map(\.id) == [later.id])
        #expect(next.passedOver == nil)
        let none = try await store.claimPending(bot: Self.bot.id, after: later.seq, limit: 10, worker: "w", until: until,
                                                skipping: [:], holds: { _ in false })
        #expect(none.messages.isEmpty && none.passedOver == nil)
        // Once let go, it is read, and nothing is passed over; the batch in flight ("y", read
        // through `later`) is left out without counting as passed over.
        try await other.release(bot: Self.bot.id, worker: "other")
        let again = try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: "w", until: until,
                                                 skipping: ["y": later.seq], holds: { _ in false })
        #expect(again.messages.map(\.id) == [held.id])
        #expect(again.passedOver == nil)
        // Two shares: another worker's conversation of the other share is not this one's to
        // look for; one of this share is.
        let slot = try PGConnection(url)
        func share(_ conversation: String) throws -> Int {
            try slot.execute("SELECT \(PGSQL.shareSlot("$1::text", count: "2"))", [conversation]).int(0, 0)
        }
        var names: [Int: [String]] = [:]
        for i in 0..<40 { names[try share("s\(i)"), default: []].append("s\(i)") }
        let mine = names[0]!, theirs = names[1]!
        let start = try await store.latestSeq()
        let otherShare = try await customer(store, theirs[0], "the other share's")
        let sameShare = try await customer(store, mine[0], "this share's, held")
        _ = try await other.claimPending(bot: Self.bot.id, after: start, limit: 10, worker: "other", until: until,
                                         skipping: [:], holds: { _ in false })
        let open = try await customer(store, mine[1], "this share's, free")
        let shared = try await store.claimPending(bot: Self.bot.id, after: start, limit: 10, worker: "w", until: until,
                                                  skipping: [:], share: Share(index: 0, count: 2), holds: { _ in false })
        #expect(shared.messages.map(\.id) == [open.id])
        #expect(shared.passedOver == sameShare.seq, "not \(otherShare.seq), of the other share")
        try await store.close()
        try await other.close()
    }

    /// The cursor's walk starts at the lowest point the live workers of the bot's group report
    /// (`SharedStore.progress`) — only when each reported one and their shares split the
    /// conversations between them; else it walks from the cursor as before.
    @Test func theCursorMovesOnTheWorkersWordWhenTheirSharesCoverEverything() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let bot = Self.bot.id, group = Share.group(of: bot)
        var messages: [StoredMessage] = []
        for i in 0..<10 { messages.append(try await customer(store, "c\(i)", "m\(i)")) }
        let until = Date().addingTimeInterval(60)
        for w in ["w1", "w2"] { _ = try await store.members(group: group, worker: w, until: until) }
        // Nothing is done: walked from the cursor, the cursor stays.
        try await store.advanceCursor(bot: bot)
        #expect(try await store.cursor(bot: bot) == 0)
        // One worker's word is not enough: w2 has not said where it stands.
        try await store.progress(bot: bot, worker: "w1", share: Share(index: 0, count: 2), safe: messages[6].seq)
        try await store.advanceCursor(bot: bot)
        #expect(try await store.cursor(bot: bot) == 0)
        // Nor two workers both in share 0 of 2, nor shares of three among two workers.
        try await store.progress(bot: bot, worker: "w2", share: Share(index: 0, count: 2), safe: messages[4].seq)
        try await store.advanceCursor(bot: bot)
        #expect(try await store.cursor(bot: bot) == 0)
        try await store.progress(bot: bot, worker: "w2", share: Share(index: 2, count: 3), safe: messages[4].seq)
        try await store.advanceCursor(bot: bot)
        #expect(try await store.cursor(bot: bot) == 0)
        // Nor one that does not know where it stands.
        try await store.progress(bot: bot, worker: "w2", share: Share(index: 1, count: 2), safe: nil)
        try await store.advanceCursor(bot: bot)
        #expect(try await store.cursor(bot: bot) == 0)
        // Both shares covered: the walk starts at the lower word (message 4), and goes on from
        // there over what is done (5, answered) to below the first message not done (6).
        try await store.progress(bot: bot, worker: "w2", share: Share(index: 1, count: 2), safe: messages[4].seq)
        #expect(try await reply(store, messages[5], "ok") == .committed)
        try await store.advanceCursor(bot: bot)
        #expect(try await store.cursor(bot: bot) == messages[6].seq - 1)
        // A third worker joins: until it says where it stands, the walk starts at the cursor again.
        _ = try await store.members(group: group, worker: "w3", until: until)
        for w in ["w1", "w2"] {
            try await store.progress(bot: bot, worker: w, share: Share(index: w == "w1" ? 0 : 1, count: 3), safe: messages[9].seq)
        }
        try await store.advanceCursor(bot: bot)
        #expect(try await store.cursor(bot: bot) == messages[6].seq - 1)
        try await store.close()
    }

    /// A database of an earlier schema (3: before the workers said where they stand, the
    /// inbound index and the quick replies) is migrated when a store opens it, and the words
    /// then go in.
    @Test func aSchemaThreeDatabaseMigratesToSix() async throws {
        let url = try await TestDB.server.createDatabase()
        let first = try await PostgresStore(url: url)
        try await first.close()
        let db = try PGConnection(url)
        try db.script("""
            ALTER TABLE usher.workers DROP COLUMN share_count, DROP COLUMN share_index, DROP COLUMN safe;
            DROP INDEX messages_inbound;
            ALTER TABLE messages DROP COLUMN quick_replies;
            DELETE FROM usher.schema_version WHERE version >= 4
            """)
        let store = try await PostgresStore(url: url)
        #expect(try db.execute("SELECT max(version) FROM usher.schema_version").int(0, 0) == 6)
        #expect(try db.execute("SELECT count(*) FROM pg_attribute WHERE attrelid = 'messages'::regclass AND attname = 'quick_replies'").int(0, 0) == 1)
        #expect(try db.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_inbound'").int(0, 0) == 1)
        let group = Share.group(of: Self.bot.id)
        _ = try await store.members(group: group, worker: "w1", until: Date().addingTimeInterval(60))
        try await store.progress(bot: Self.bot.id, worker: "w1", share: .all, safe: 7)
        #expect(try db.execute("SELECT safe FROM usher.workers WHERE worker = 'w1'").int64(0, 0) == 7)
        try await store.close()
    }

    /// The reads and the cursor's walk go through the inbound messages by seq alone
    /// (`messages_inbound`): the plans PostgreSQL makes for them, planned once as the store's
    /// sessions plan them, use the index — which they stop doing, silently, should the queries'
    /// test for an inbound message and the index's predicate ever read differently.
    @Test func theReadsAndTheCursorWalkOnlyInboundMessages() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let db = try PGConnection(url)
        // A database in service, as large as the benchmark's (the plans depend on it): each
        // customer message answered with two replies, most of them done, older done marks and
        // states besides.
        try db.script("""
            INSERT INTO conversations (id) SELECT 'c' || g FROM generate_series(1, 10001) AS g;
            INSERT INTO messages (id, conversation_id, sender_type, content)
            SELECT 'm' || g, 'c' || (g / 6 + 1), CASE WHEN g % 3 = 0 THEN 'customer' ELSE 'bot' END, 'text'
            FROM generate_series(1, 60000) AS g ORDER BY g;
            INSERT INTO usher.processed (bot, message_id, seq, conversation_id)
            SELECT '\(Self.bot.id)', id, seq, conversation_id FROM messages WHERE sender_type = 'customer' AND seq <= 59000;
            INSERT INTO usher.processed (bot, message_id, seq, conversation_id)
            SELECT '\(Self.bot.id)', 'old' || g, g, 'old' || (g / 4) FROM generate_series(1, 60000) AS g;
            INSERT INTO usher.bot_state (bot, conversation_id, version, owner, state)
            SELECT '\(Self.bot.id)', 'old' || g, 1, 'bot', '{}' FROM generate_series(1, 15000) AS g;
            ANALYZE conversations, messages, usher.processed, usher.bot_state;
            SET plan_cache_mode = force_generic_plan; SET jit = off
            """)
        func plan(_ sql: String, _ params: [String]) throws -> String {
            try db.script("DEALLOCATE ALL; PREPARE q AS \(sql)")
            let r = try db.execute("EXPLAIN EXECUTE q(\(params.map(PGText.literal).joined(separator: ", ")))")
            return (0..<r.rows).map { r.string($0, 0) }.joined(separator: "\n")
        }
        let read = try plan(store.sql.claimPending, ["100", Self.bot.id, "512", "w1", "2000000000", "0", "{}", "1", "0", "{}"])
        #expect(read.contains("messages_inbound"), "\(read)")
        let walk = try plan(store.sql.cursorTarget, [Self.bot.id, Share.group(of: Self.bot.id)])
        #expect(walk.contains("messages_inbound"), "\(walk)")
        // And each message's done mark is probed through its key, never by a scan of every
        // mark (a hash of them all, built for one message: 15-27 ms a read at 85,000 marks).
        // The commit's checks too: each through the key of the batch's own messages; and the
        // checked update of the states through theirs.
        let check = try plan(store.sql.commitStates, Array(repeating: "{}", count: 11))
        #expect(!check.contains("Seq Scan on bot_state"), "\(check)")
        let undone = try plan(store.sql.undoneBetween, ["{}", "{}", "{}"])
        for (name, p) in [("read", read), ("walk", walk), ("check", check), ("undone", undone)] {
            #expect(!p.contains("Seq Scan on processed"), "\(name): \(p)")
        }
        try await store.close()
    }

    @Test func theCursorWaitsForATransactionInFlight() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        _ = try await customer(store, "a", "first")
        let slow = try PGConnection(url)
        // Its own conversation: the open transaction holds that row's key-share lock, which a
        // commit in the conversation would (rightly) wait for.
        try slow.script("INSERT INTO conversations (id) VALUES ('z'); BEGIN")
        try slow.execute("INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('late', 'z', 'customer', 'late')")
        let later = try await customer(store, "b", "after the slow one")
        for m in try await store.pending(bot: Self.bot.id, after: 0, limit: 10) {
            #expect(try await reply(store, m, "ok") == .committed)
        }
        try await store.advanceCursor(bot: Self.bot.id)
        let cursor = try await store.cursor(bot: Self.bot.id)
        #expect(cursor < later.seq - 1, "the cursor stops before the number the open transaction holds (cursor \(cursor))")
        try slow.script("COMMIT")
        let pending = try await store.pending(bot: Self.bot.id, after: cursor, limit: 10)
        #expect(pending.map(\.id) == ["late"])
        // A hole that never fills (a rolled-back insert) stops holding the cursor after the timeout.
        var options = PostgresStore.Options()
        options.gapTimeout = .zero
        let quick = try await PostgresStore(url: url, options: options)
        try slow.script("BEGIN; INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('gone', 'a', 'customer', 'x'); ROLLBACK")
        _ = try await quick.commit(ConformanceSuite.sampleCommit(pending[0], after: try await quick.state(bot: Self.bot.id, conversation: "z"), reply: "ok"))
        _ = try await customer(quick, "c", "last")
        for m in try await quick.pending(bot: Self.bot.id, after: 0, limit: 10) { _ = try await reply(quick, m, "ok") }
        try await quick.advanceCursor(bot: Self.bot.id)
        #expect(try await quick.cursor(bot: Self.bot.id) == (try await quick.latestSeq()))
        try await store.close()
        try await quick.close()
    }

    /// The hole right below the oldest message not done: the cursor stops below the hole, not
    /// just below that message (the hole has no row after it below the target to show it).
    @Test func theCursorStopsBelowAHoleJustBeforeAnUndoneMessage() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let first = try await customer(store, "a", "first")
        #expect(try await reply(store, first, "ok") == .committed)
        let slow = try PGConnection(url)
        try slow.script("INSERT INTO conversations (id) VALUES ('z'); BEGIN")
        try slow.execute("INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('late', 'z', 'customer', 'late')")
        let later = try await customer(store, "b", "after the slow one, not answered yet")
        try await store.advanceCursor(bot: Self.bot.id)
        let cursor = try await store.cursor(bot: Self.bot.id)
        #expect(cursor < later.seq - 1, "the cursor stops before the number the open transaction holds (cursor \(cursor))")
        try slow.script("COMMIT")
        #expect(try await store.pending(bot: Self.bot.id, after: cursor, limit: 10).map(\.id) == ["late", later.id])
        try await store.close()
    }

    /// A hole a rolled-back insert left is passed once every transaction that was running when
    /// it was seen has ended — not after `gapTimeout` — while one an open transaction holds is
    /// not, however often the cursor looks.
    @Test func theCursorPassesARolledBackHoleSoon() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let first = try await customer(store, "a", "first")
        _ = try await reply(store, first, "ok")
        let slow = try PGConnection(url)
        try slow.script("INSERT INTO conversations (id) VALUES ('z')")
        try slow.script("BEGIN; INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('gone', 'z', 'customer', 'x'); ROLLBACK")
        let later = try await customer(store, "b", "after the rolled-back one")
        _ = try await reply(store, later, "ok")
        func advance() async throws -> Int64 {
            // First sight; a settle time (250 ms) later the horizon is taken; then the check.
            for pause in [300, 50, 0] {
                try await store.advanceCursor(bot: Self.bot.id)
                try await Task.sleep(for: .milliseconds(pause))
            }
            return try await store.cursor(bot: Self.bot.id)
        }
        // The horizon is the whole server's: transactions of other tests running on it when the
        // hole was seen hold it back a little longer (seconds, not `gapTimeout`'s 30).
        var passed = try await advance()
        for _ in 0..<10 where passed < later.seq { passed = try await advance() }
        #expect(passed >= later.seq, "past the rolled-back hole (cursor \(passed), message after it \(later.seq))")
        let open = try PGConnection(url)
        try open.script("BEGIN")
        try open.execute("INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('late', 'z', 'customer', 'late')")
        let last = try await customer(store, "c", "after the open one")
        _ = try await reply(store, last, "ok")
        let cursor = try await advance()
        #expect(cursor < last.seq - 1, "not past the open transaction's number (cursor \(cursor))")
        try open.script("COMMIT")
        #expect(try await store.pending(bot: Self.bot.id, after: cursor, limit: 10).map(\.id) == ["late"])
        try await store.close()
    }

    /// An append the database refuses fails alone: the session it ran on is not left inside an
    /// aborted transaction (the pipelined append's COMMIT is skipped after the error).
    @Test func aRefusedAppendLeavesTheSessionUsable() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let database = PostgresTestServer.database(of: url)
        try await TestDB.server.psql("ALTER TABLE messages ADD CONSTRAINT no_boom CHECK (content <> 'boom')", database: database)
        await #expect(throws: StoreError.self) { try await store.append(NewMessage(conversationID: "a", from: .customer, text: "boom")) }
        let next = try await customer(store, "a", "fine")
        #expect(try await store.cursor(bot: Self.bot.id) == 0)
        #expect(try await store.transcript(conversation: "a").map(\.id) == [next.id])
        try await store.close()
    }

    /// A new database, and what lists the `application_name` of every connection to it (but the
    /// one asking), in order.
    static func databaseWatched() async throws -> (url: String, connections: () throws -> [String]) {
        let server = try await TestDB.server
        let url = try server.createDatabase()
        let database = PostgresTestServer.database(of: url)
        return (url, {
            try server.psql("SELECT application_name FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid() ORDER BY 1",
                            database: database).split(separator: "\n").map(String.init)
        })
    }

    /// Each connection names itself in `pg_stat_activity` (an operator sees which is the reader,
    /// which commits), unless the URL names the application itself.
    @Test func connectionsNameThemselves() async throws {
        let (url, connections) = try await Self.databaseWatched()
        func names() throws -> [String] { try connections().filter { $0.hasPrefix("usher") || $0 == "helpdesk-bot" } }
        let store = try await PostgresStore(url: url)
        let m = try await customer(store, "a", "hello")
        _ = try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: "w", until: Date().addingTimeInterval(30),
                                         skipping: [:], share: .all, holds: { _ in false })
        #expect(try await reply(store, m, "hi") == .committed)
        // The listener connects on its own thread.
        let all = ["usher.postgres", "usher.postgres.commit0", "usher.postgres.listen", "usher.postgres.reader"]
        try await eventually("the store's connections, named", detail: "\((try? names()) ?? [])") { try names() == all }
        try await store.close()
        try await eventually("the backends end") { try names().isEmpty }
        let named = try await PostgresStore(url: url + (url.contains("?") ? "&" : "?") + "application_name=helpdesk-bot")
        _ = try await named.latestSeq()
        #expect(try names().contains("helpdesk-bot"))
        #expect(try !names().contains("usher.postgres.reader"))
        try await named.close()
    }

    /// A LISTEN connection that goes deaf without breaking (here its backend stopped with
    /// SIGSTOP; a transaction-pooling proxy does the same) is found by its probes: the store
    /// polls — a message written meanwhile is found within the poll interval — until the probes
    /// come back, and then it listens again. Probes themselves wake nobody.
    @Test(.timeLimit(.minutes(1))) func aDeafListenerFallsBackToPollingUntilItHearsAgain() async throws {
        let (url, _) = try await Self.databaseWatched()
        let server = try await TestDB.server
        let database = PostgresTestServer.database(of: url)
        var options = PostgresStore.Options()
        // Deaf after two probes unheard: 400 ms apart, so that a probe a loaded machine delays by
        // a few hundred milliseconds is still heard in time.
        options.listenProbeInterval = .milliseconds(400)
        let store = try await PostgresStore(url: url, options: options)
        let feeder = try await PostgresStore(url: url + (url.contains("?") ? "&" : "?") + "application_name=feeder")
        try await eventually("listening") { store.changeSignal != nil }
        try await Task.sleep(for: .milliseconds(1_300))   // probes go and come back
        let signal = try #require(store.changeSignal, "not listening while its probes come back")
        let generation = signal.generation
        try await Task.sleep(for: .milliseconds(900))
        #expect(signal.generation == generation, "a probe woke the waiters")
        // The LISTEN connection's backend stops: the connection stays up, and hears nothing.
        let pid = try #require(Int32(server.psql("SELECT pid FROM pg_stat_activity WHERE datname = '\(database)' "
                                                 + "AND application_name = 'usher.postgres.listen'", database: database)
                                        .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, SIGSTOP) == 0)
        defer { kill(pid, SIGCONT) }
        try await eventually("no longer counted as listening while deaf") { store.changeSignal == nil }
        let before = try await store.latestSeq()
        let written = ContinuousClock.now
        _ = try await customer(feeder, "d", "anyone there?")
        try await store.waitForChanges(after: before, timeout: .seconds(40))
        #expect(ContinuousClock.now - written < .seconds(20), "the message was not found by polling")
        // The backend goes on: the probes come back, and the store listens again.
        #expect(kill(pid, SIGCONT) == 0)
        try await eventually("listening again once its probes came back") { store.changeSignal != nil }
        try await feeder.close()
        try await store.close()
    }

    /// A store dropped without `close()` (a caller that forgot, a test that failed half-way)
    /// closes every connection — the LISTEN one too — and ends its threads.
    @Test func aStoreDroppedWithoutClosingLetsGoOfItsConnections() async throws {
        let (url, connections) = try await Self.databaseWatched()
        var store: PostgresStore? = try await PostgresStore(url: url)
        let m = try await customer(store!, "a", "hello")
        #expect(try await reply(store!, m, "hi") == .committed)
        let all = ["usher.postgres", "usher.postgres.commit0", "usher.postgres.listen"]   // the listener on its own thread
        try await eventually("the store's connections", detail: "\((try? connections()) ?? [])") { try connections() == all }
        store = nil
        try await eventually("no connection left open by a store dropped without close()", detail: "\((try? connections()) ?? [])") {
            try connections().isEmpty
        }
    }

    /// Workers say they are alive until a time; one that stops saying so drops out of the list
    /// (and the others split its share), as does one that leaves; groups are apart.
    @Test func membersComeAndGo() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let group = "usher:workers:support"
        let later = Date().addingTimeInterval(30)
        #expect(try await store.members(group: group, worker: "b", until: later) == ["b"])
        #expect(try await store.members(group: group, worker: "a", until: later) == ["a", "b"])
        _ = try await store.members(group: group, worker: "c", until: Date().addingTimeInterval(0.3))
        #expect(try await store.members(group: group, worker: "a", until: later) == ["a", "b", "c"])
        #expect(try await store.members(group: "usher:workers:other", worker: "z", until: later) == ["z"])
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await store.members(group: group, worker: "a", until: later) == ["a", "b"], "c went silent")
        #expect(try await store.members(group: group, worker: "b", until: .distantPast) == ["a"], "b leaves")
        #expect(try await store.members(group: group, worker: "a", until: later) == ["a"], "b left")
        #expect(Share(of: "a", among: ["a", "b"]) == Share(index: 0, count: 2))
        try await store.close()
    }

    /// A reply the database refuses (too long for the helpdesk's column): that message is marked
    /// done with the reason — not retried forever — and the conversations behind it go on; the
    /// batch, then written one commit at a time, keeps its links (`BatchLinks`).
    @Test func aMessageTheDatabaseRefusesIsQuarantined() async throws {
        let url = try await TestDB.server.createDatabase()
        let store = try await PostgresStore(url: url)
        let database = PostgresTestServer.database(of: url)
        try await TestDB.server.psql("ALTER TABLE messages ALTER COLUMN content TYPE varchar(40)", database: database)
        let a = try await customer(store, "a", "hi")
        let b = try await customer(store, "b", "hi")
        let a2 = try await customer(store, "a", "again")
        let first = ConformanceSuite.sampleCommit(a, after: nil, reply: String(repeating: "long ", count: 20))
        let commits = [
            first,
            ConformanceSuite.sampleCommit(b, after: nil, reply: "short"),
            // Decided from the state of the quarantined one, which is not written (`BatchLinks`).
            ConformanceSuite.sampleCommit(a2, after: first.state, reply: "after the long one"),
        ]
        let results = try await store.commit(batch: commits)
        #expect(results == [.duplicate, .committed, .conflict])
        #expect(store.quarantinedCount == 1)
        #expect(try await TestDB.server.psql("SELECT quarantined FROM usher.processed WHERE message_id = '\(a.id)'", database: database)
                    .contains("22001"))
        #expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).map(\.id) == [a2.id])
        #expect(try await store.transcript(conversation: "b").map(\.text) == ["hi", "short"])
        // Decided again from what is stored (no state: the quarantine wrote none), it commits.
        #expect(try await reply(store, a2, "short again") == .committed)
        #expect(try await store.transcript(conversation: "a").map(\.text) == ["hi", "again", "short again"])
        // Written one by one after a refused value, a batch stays linked: another writer did c1
        // with its own decision, and c2, decided from this batch's c1, is not written though
        // the stored version is the one it expects.
        let c1 = try await customer(store, "c", "one"), c2 = try await customer(store, "c", "two")
        let d = try await customer(store, "d", "hi")
        var theirs = ConformanceSuite.sampleCommit(c1, after: nil, reply: "theirs")
        theirs.state.tags = ["theirs"]
        #expect(try await store.commit(theirs) == .committed)
        let mine = ConformanceSuite.sampleCommit(c1, after: nil, reply: "mine")
        let linked = try await store.commit(batch: [
            mine, ConformanceSuite.sampleCommit(c2, after: mine.state, reply: "mine too"),
            ConformanceSuite.sampleCommit(d, after: nil, reply: String(repeating: "long ", count: 20)),
        ])
        #expect(linked == [.duplicate, .conflict, .duplicate])
        #expect(try await store.transcript(conversation: "c").filter { $0.from == .bot }.map(\.text) == ["theirs"])
        try await store.close()
    }

    /// A reply dropped because an agent wrote first (`.silenced`) is not counted: the state
    /// written has the bot's replies, the loop guard's times and the rule's `once` and cooldown
    /// mark as they were before it — the mark of an earlier reply of the same rule kept as it was.
    @Test func aSilencedReplyIsNotCounted() async throws {
        let store = try await TestDB.store()
        let t0 = Date(timeIntervalSince1970: 1_796_000_000)
        func answered(_ m: StoredMessage, after old: ConversationState?, at t: Date) -> Commit {
            var c = ConformanceSuite.sampleCommit(m, after: old, reply: "hi")
            c.state.botReplies += 1
            c.state.recentReplies.append(t)
            c.state.recordFire(of: "r", at: t)
            return c
        }
        let first = try await customer(store, "s", "hello")
        #expect(try await store.commit(answered(first, after: nil, at: t0)) == .committed)
        let said = try #require(try await store.state(bot: Self.bot.id, conversation: "s"))
        let second = try await customer(store, "s", "are you there")
        _ = try await store.append(NewMessage(conversationID: "s", from: .agent, senderID: "a1", senderName: "Ana", text: "Ana here"))
        #expect(try await store.commit(answered(second, after: said, at: t0.addingTimeInterval(60))) == .silenced)
        let after = try #require(try await store.state(bot: Self.bot.id, conversation: "s"))
        #expect(after.botReplies == 1 && after.recentReplies == [t0] && after.customerMessages == 2, "\(after)")
        #expect(after.marks == said.marks, "\(after.marks)")
        try await store.close()
    }

    /// A worker that stops saying it is alive (killed, or failed: its row in the group expired)
    /// holds up no conversation: its leases are free at once, not 30 s after it took them. A
    /// lease of a worker that never said it is alive lasts its 30 s.
    @Test func aGoneWorkersLeasesAreFree() async throws {
        let url = try await TestDB.server.createDatabase()
        var options = PostgresStore.Options()
        options.takeNotified = false
        let store = try await PostgresStore(url: url, options: options)
        _ = try await customer(store, "g", "hello")
        _ = try await customer(store, "h", "hello")
        let until = Date().addingTimeInterval(30)
        func claim(_ worker: String) async throws -> [String] {
            try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: worker, until: until, skipping: [:],
                                         share: .all, holds: { _ in false }).messages.map(\.conversationID)
        }
        _ = try await store.members(group: Share.group(of: Self.bot.id), worker: "a", until: Date().addingTimeInterval(3))
        #expect(try await claim("a") == ["g", "h"])
        #expect(try await store.claim(bot: "other", conversations: ["x"], worker: "silent", until: until) == ["x"])
        #expect(try await claim("b") == [], "a's leases hold while a is alive")
        // a's last word was 3 s ago: its row has expired.
        _ = try await TestDB.server.psql("UPDATE usher.workers SET until = clock_timestamp() - interval '1 s' WHERE worker = 'a'",
                                   database: PostgresTestServer.database(of: url))
        #expect(try await claim("b") == ["g", "h"])
        #expect(try await store.claim(bot: Self.bot.id, conversations: ["g"], worker: "c", until: until) == [], "b holds g now")
        #expect(try await store.claim(bot: "other", conversations: ["x"], worker: "d", until: until) == [], "no row: the lease lasts")
        try await store.close()
    }

    /// A mapping naming a column the table does not have: the store refuses to start and says
    /// where in the mapping file, with the columns the table has; a `seq` that is not a whole
    /// number is named there too (the reads would fail at every try instead).
    @Test func aMappingThatDoesNotMatchTheDatabase() async throws {
        let url = try await TestDB.server.createDatabase()
        _ = try await PostgresStore(url: url)   // the native tables
        let text = """
        mapping: 1
        conversations:
          table: conversations
          columns:
            id: id
            channel: chanel
        messages:
          table: messages
          columns:
            seq: id
            conversation_id: conversation_id
            sender_type: sender_type
            content: body
            created_at: created_at
        """
        let (mapping, diagnostics) = SQLMapping.parse(path: "helpdesk.yaml", text: text)
        #expect(diagnostics.isEmpty)
        do {
            _ = try await PostgresStore(url: url, mapping: try #require(mapping))
            Issue.record("a mismatching mapping was accepted")
        } catch let e as PostgresStore.MappingMismatch {
            #expect(e.diagnostics.map(\.headline) == [
                "helpdesk.yaml:6:14: error: [missing-column] table 'conversations' has no column 'chanel'; did you mean 'channel'?",
                "helpdesk.yaml:13:14: error: [missing-column] table 'messages' has no column 'body'; it has: content, "
                    + "conversation_id, created_at, id, idempotency_key, kind, quick_replies, rule_id, sender_id, sender_name, sender_type, seq",
                "helpdesk.yaml:10:10: error: [seq-not-integer] column 'id' of 'messages' is text; "
                    + "Usher keeps the order it reads new messages in there: map an integer column (an identity or bigserial column)",
            ])
        }
    }

    /// The server goes away and comes back: calls fail with a transient error while it is down
    /// (the worker retries them with backoff), then work again on a new connection.
    @Test func reconnectsAfterARestart() async throws {
        let server = try PostgresTestServer()
        defer { try? server.stop(mode: "immediate") }
        let store = try await PostgresStore(url: try await server.createDatabase())
        let m = try await customer(store, "r", "before")
        try server.stop(mode: "immediate")
        do {
            _ = try await store.latestSeq()
            Issue.record("a call succeeded with the server down")
        } catch let e as StoreError {
            #expect(e.isTransient, "\(e)")
        }
        try server.start()
        // Each of the store's connections finds out on its next call, which fails transiently
        // once; the worker retries such calls, and so does this test.
        #expect(try await Self.retried { try await store.latestSeq() } == m.seq)
        #expect(try await Self.retried { try await reply(store, m, "after") } == .committed)
        try await store.close()
    }

    /// `body`, tried again (up to three times) while it fails with a transient error, as the
    /// worker retries.
    static func retried<T>(_ body: () async throws -> T) async throws -> T {
        for _ in 0..<3 {
            do { return try await body() } catch let e as StoreError where e.isTransient { continue }
        }
        return try await body()
    }

    /// A server that closes idle sessions (`idle_session_timeout`) costs a reconnect, nothing
    /// more: each connection it closed fails its next call transiently, once, and the LISTEN
    /// connection comes back by itself.
    @Test func aServerThatClosesIdleSessionsCostsAReconnect() async throws {
        let server = try await TestDB.server
        let url = try server.createDatabase()
        let database = PostgresTestServer.database(of: url)
        try server.psql("ALTER DATABASE \(database) SET idle_session_timeout = '300ms'", database: database)
        let store = try await PostgresStore(url: url)
        let feeder = try await PostgresStore(url: url)
        let first = try await Self.retried { try await customer(feeder, "i", "one") }
        _ = try await Self.retried { try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: "w", until: Date().addingTimeInterval(30),
                                                                 skipping: [:], share: .all, holds: { _ in false }) }
        #expect(try await Self.retried { try await reply(store, first, "hi") } == .committed)
        try await Task.sleep(for: .milliseconds(800))   // every connection idle past the timeout
        let second = try await Self.retried { try await customer(feeder, "i", "two") }
        #expect(try await Self.retried { try await reply(store, second, "again") } == .committed)
        #expect(try await store.transcript(conversation: "i").map(\.text) == ["one", "hi", "two", "again"])
        // The LISTEN connection, closed too, comes back by itself (and each time wakes the
        // worker to read from its cursor: nothing written meanwhile is missed).
        try await eventually("the LISTEN connection comes back") { store.changeSignal != nil }
        try await feeder.close()
        try await store.close()
    }

    /// A URL that does not say how long to wait gets a connect timeout and TCP keepalives
    /// (`PGConnInfo`); what the URL or libpq's environment says, or a service file may say,
    /// stays as it is.
    @Test func aURLGetsTimeoutsItDoesNotSet() async throws {
        let none: [String: String] = [:]
        let plain = PGConnInfo.withDefaults("postgres://u@db.example/chat", environment: none)
        #expect(plain == "postgres://u@db.example/chat?connect_timeout=10&keepalives_idle=30&keepalives_interval=10"
                + "&keepalives_count=3&tcp_user_timeout=60000")
        let own = PGConnInfo.withDefaults("postgresql://u@db.example/chat?sslmode=require&connect_timeout=3&keepalives_idle=5",
                                          environment: none)
        let ownSettings = try #require(PGConnInfo.options(own))
        #expect(ownSettings["connect_timeout"] == "3" && ownSettings["keepalives_idle"] == "5" && ownSettings["sslmode"] == "require")
        #expect(ownSettings["keepalives_count"] == "3" && ownSettings["tcp_user_timeout"] == "60000")
        #expect(own.components(separatedBy: "connect_timeout").count == 2, "not said twice: \(own)")
        // The environment: PGCONNECT_TIMEOUT is libpq's, and wins over Usher's default.
        let fromEnvironment = try #require(PGConnInfo.options(PGConnInfo.withDefaults("postgres://u@h/d", environment: ["PGCONNECT_TIMEOUT": "4"])))
        #expect(fromEnvironment["connect_timeout"] == nil && fromEnvironment["keepalives_idle"] == "30")
        // Keepalives turned off stay off; a key=value string gets them as pairs.
        let off = try #require(PGConnInfo.options(PGConnInfo.withDefaults("host=h dbname=d keepalives=0", environment: none)))
        #expect(off["keepalives_idle"] == nil && off["keepalives"] == "0" && off["connect_timeout"] == "10")
        // A string whose last value ends in a backslash keeps that value, and gets them too.
        let escaped = "host=h password=abc\\"
        let keptValue = try #require(PGConnInfo.options(PGConnInfo.withDefaults(escaped, environment: none)))
        #expect(keptValue["password"] == PGConnInfo.options(escaped)?["password"] && keptValue["connect_timeout"] == "10", "\(keptValue)")
        // A service (its file may set them), or a URL libpq cannot read: unchanged.
        #expect(PGConnInfo.withDefaults("postgres:///d?service=chat", environment: none) == "postgres:///d?service=chat")
        #expect(PGConnInfo.withDefaults("postgres:///d", environment: ["PGSERVICE": "chat"]) == "postgres:///d")
        #expect(PGConnInfo.withDefaults("postgres:///d?nonsense=1", environment: none) == "postgres:///d?nonsense=1")
        // A real connection is made with them.
        let url = try await TestDB.server.createDatabase()
        let settings = try PGConnection(PGConnInfo.withDefaults(url, environment: none)).settings
        #expect(settings["connect_timeout"] == "10" && settings["keepalives_idle"] == "30" && settings["keepalives_interval"] == "10"
                && settings["keepalives_count"] == "3" && settings["tcp_user_timeout"] == "60000", "\(settings)")
    }

    /// A server that takes the connection and never answers (a host gone mid-handshake, a
    /// proxy with nothing behind it): with a URL that sets no timeout, connecting gives up after
    /// Usher's 10 s with a transient error (the worker retries it) instead of waiting for ever.
    @Test(.timeLimit(.minutes(1))) func connectingToAServerThatNeverAnswersTimesOut() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        // Should connecting wait for ever, the connection is reset after 30 s: the test fails
        // instead of hanging.
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { silent.close() }
        let started = ContinuousClock.now
        do {
            _ = try await PostgresStore(url: "postgresql://u@127.0.0.1:\(silent.port)/chat")
            Issue.record("connected to a server that never answered")
        } catch let e as StoreError {
            #expect(e.code == "pg-connect" && e.isTransient && e.message.contains("timeout"), "\(e)")
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(9) && waited < .seconds(20), "\(waited)")
    }

    /// A new database with the role `usher_worker` and its schema `usher`, then `grants` run as
    /// the server's superuser; the server, the database's name, its URL, and the URL as the role.
    func leastPrivileged(_ grants: String) async throws -> (PostgresTestServer, String, String, String) {
        let server = try await TestDB.server
        let url = try await server.createDatabase()
        let database = PostgresTestServer.database(of: url)
        try server.psql("""
            DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'usher_worker') THEN CREATE ROLE usher_worker LOGIN; END IF; END $$;
            CREATE SCHEMA usher AUTHORIZATION usher_worker;
            \(grants)
            """, database: database)
        return (server, database, url, url.replacingOccurrences(of: "user=\(server.user)", with: "user=usher_worker"))
    }

    /// The least-privileged role of docs/store-postgres.md: its own schema, CREATE on public only
    /// for the native tables on the first start, nothing else.
    @Test func runsAsALeastPrivilegedRole() async throws {
        let (server, database, _, asWorker) = try await leastPrivileged("GRANT CREATE ON SCHEMA public TO usher_worker;")
        let store = try await PostgresStore(url: asWorker)
        let m = try await customer(store, "p", "hello")
        #expect(try await reply(store, m, "hi") == .committed)
        try await store.close()
        try server.psql("REVOKE CREATE ON SCHEMA public FROM usher_worker", database: database)
        let again = try await PostgresStore(url: asWorker)
        #expect(try await again.transcript(conversation: "p").count == 2)
        try await again.close()
        // It created messages, so it owns them and built their index.
        #expect(try server.psql("SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_inbound'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    /// When the backend owns `messages`, the role the docs grant cannot build the index on it:
    /// the migration leaves it to the owner (docs/store-postgres.md) and the worker runs without.
    @Test func aRoleThatDoesNotOwnTheMessagesLeavesTheirIndexToTheOwner() async throws {
        let (_, _, url, asWorker) = try await leastPrivileged("""
            \(PGSchema.native)
            GRANT USAGE ON SCHEMA public TO usher_worker;
            GRANT SELECT, INSERT ON messages TO usher_worker;
            GRANT SELECT, UPDATE (owner, assigned_to_agent, customer_message_count, tags, metadata,
                                  customer_id, updated_at) ON conversations TO usher_worker;
            GRANT TRIGGER ON messages TO usher_worker;
            """)
        let store = try await PostgresStore(url: asWorker)
        let backend = try PGConnection(url), backendStore = try await PostgresStore(url: url)   // the backend writes the customer's message
        let m = try await customer(backendStore, "p", "hello")
        try await backendStore.close()
        #expect(try await reply(store, m, "hi") == .committed)
        #expect(try backend.execute("SELECT max(version) FROM usher.schema_version").int(0, 0) == 6)
        #expect(try backend.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_inbound'").int(0, 0) == 0)
        // Nor add the quick replies' column: its replies are written without them until the
        // owner adds it (docs/store-postgres.md), and the next start writes them.
        let quick = "SELECT count(*) FROM pg_attribute WHERE attrelid = 'messages'::regclass AND attname = 'quick_replies'"
        #expect(try backend.execute(quick).int(0, 0) == 0)
        // The owner builds it as the docs say, without holding up inserts.
        try backend.script(PGSchema.inboundIndex(.native, concurrently: true))
        #expect(try backend.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_inbound'").int(0, 0) == 1)
        try await store.close()
        // The owner adds the quick replies' column as the docs say; the worker's next start writes them.
        try backend.script("ALTER TABLE messages ADD COLUMN quick_replies jsonb")
        let owner = try await PostgresStore(url: url)
        let m2 = try await customer(owner, "q", "help")
        try await owner.close()
        let restarted = try await PostgresStore(url: asWorker)
        let offered = [QuickReply(title: "Track my order"), QuickReply(title: "Returns", url: "https://shop.example/returns")]
        #expect(try await restarted.commit(ConformanceSuite.sampleCommit(m2, after: nil, reply: "hi", quickReplies: offered)) == .committed)
        #expect(try await restarted.transcript(conversation: "q").map(\.quickReplies) == [[], offered])
        try await restarted.close()
        // `usher send` and `usher chat` as the worker's role, with the two grants the docs add
        // for them: a new conversation, then a message that names its channel and locale.
        try backend.script("GRANT INSERT, UPDATE (channel, locale) ON conversations TO usher_worker")
        let sender = try await PostgresStore(url: asWorker)
        _ = try await sender.append(NewMessage(conversationID: "s", from: .customer, text: "first"))
        _ = try await sender.append(NewMessage(conversationID: "s", from: .customer, text: "again", channel: "web", locale: "en"))
        #expect(try backend.execute("SELECT channel || ' ' || locale FROM conversations WHERE id = 's'").text(0, 0) == "web en")
        try await sender.close()
    }

    /// Each NOTIFY names its message's seq, and `notified(since:)` reports the newest, with the
    /// newest seq when the store began to listen (what is above it is notified; what is at or
    /// below it may be a backlog that was not) — and nil when a wake-up since the given
    /// generation did not say which message it was for (a NOTIFY without a number: a trigger
    /// of an older Usher), so that the worker reads.
    @Test func notificationsNameTheirMessages() async throws {
        let url = try await TestDB.server.createDatabase()
        let writer = try await PostgresStore(url: url)
        let backlog = try await customer(writer, "b", "before the store listened")
        let store = try await PostgresStore(url: url)
        func notified(after generation: UInt64) async -> UInt64 {
            await store.changeSignal?.wait(since: generation, timeout: .seconds(5))
            return store.changeSignal?.generation ?? 0
        }
        try await eventually("listening") { store.changeSignal != nil }
        let start = try #require(store.changeSignal?.generation)
        #expect(store.notified(since: start) == Notified(complete: backlog.seq, newest: 0))
        #expect(store.notified(since: start)?.covered(by: backlog.seq) == true)
        let m = try await customer(writer, "n", "hello")
        let g1 = await notified(after: start)
        #expect(g1 > start)
        #expect(store.notified(since: start) == Notified(complete: backlog.seq, newest: m.seq))
        #expect(store.notified(since: start)?.covered(by: backlog.seq) == false)
        // The bot's own reply is not an inbound message: no NOTIFY.
        #expect(try await reply(writer, m, "hi") == .committed)
        let m2 = try await customer(writer, "n", "again")
        let g2 = await notified(after: g1)
        #expect(store.notified(since: g1)?.newest == m2.seq)
        #expect(store.notified(since: start)?.newest == m2.seq)
        // A NOTIFY without a seq: nil for a read that began before it, known again after it.
        let database = PostgresTestServer.database(of: url)
        try await TestDB.server.psql("NOTIFY \(store.notifyChannel!)", database: database)
        let g3 = await notified(after: g2)
        #expect(g3 > g2)
        #expect(store.notified(since: g2) == nil)
        #expect(store.notified(since: g3)?.newest == m2.seq)
        try await store.close()
        try await writer.close()
    }

    /// A held conversation's next message is taken from its NOTIFY, as a read would have
    /// returned it and with the state the store's last commit left, without a read; a
    /// conversation not held, a message too long for a NOTIFY, and a state changed behind the
    /// store's back (the commit finds a conflict) go back to reading.
    @Test func aHeldConversationsNextMessageIsTakenFromItsNotification() async throws {
        let f = try await NotifyFixture()
        let writer = f.writer, store = f.store
        let bot = Self.bot.id
        let until = Date().addingTimeInterval(60)
        // The first claim reads (the store does not know its bot yet); the message is answered.
        let m1 = try await f.notified("t", "one")
        let first = try await f.claim(holding: [])
        #expect(first.messages.map(\.id) == [m1.id] && store.takenFromNotifications == 0)
        #expect(try await f.commit(first, reply: "r1") == .committed)
        // The next one comes from its NOTIFY: the same message a read returns, the state as stored.
        let m2 = try await f.notified("t", "two\n\"quoted\" \\ é")
        let floorBeforeTake = f.floor()
        let taken = try await f.claim(holding: ["t"])
        #expect(store.takenFromNotifications == 1)
        #expect(taken.messages == [m2], "\(taken.messages) against \(m2)")
        #expect(taken.readThrough == floorBeforeTake, "a claim without a read covers nothing")
        let stored = try await store.state(bot: bot, conversation: "t")
        #expect(taken.states?["t"] == stored && stored?.version == 1)
        #expect(try await f.commit(taken, reply: "r2") == .committed)
        // Updated in the transaction that inserted it: the update's NOTIFY (the seq alone) comes
        // after the insert's, and the message is read as it was committed.
        let database = f.database
        let beforeEdit = try #require(store.changeSignal?.generation)
        try await TestDB.server.psql("""
            BEGIN;
            INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('edited', 't', 'customer', 'draft');
            UPDATE messages SET content = 'as sent' WHERE id = 'edited';
            COMMIT;
            """, database: database)
        await store.changeSignal?.wait(since: beforeEdit, timeout: .seconds(5))
        try await Task.sleep(for: .milliseconds(100))   // both NOTIFYs of the transaction
        let edited = try await f.claim(holding: ["t"])
        #expect(edited.messages.map(\.text) == ["as sent"] && store.takenFromNotifications == 1)
        #expect(try await f.commit(edited, reply: "r2b") == .committed)
        // Not held: read.
        let m3 = try await f.notified("t", "three")
        let notHeld = try await f.claim(holding: [])
        #expect(notHeld.messages.map(\.id) == [m3.id] && store.takenFromNotifications == 1)
        #expect(try await f.commit(notHeld, reply: "r3") == .committed)
        // Too long for a NOTIFY (its payload is the seq alone): read.
        let long = try await f.notified("t", String(repeating: "x", count: 9_000))
        let read = try await f.claim(holding: ["t"])
        #expect(read.messages.map(\.id) == [long.id] && store.takenFromNotifications == 1)
        #expect(try await f.commit(read, reply: "r4") == .committed)
        // Another writer moves the state on (and a read passes its message, done, on its way to
        // another conversation's): the next note
        // is taken with the state the store knows, the commit conflicts, and the store reads the
        // conversation again.
        let floorBefore = f.floor()
        let m5 = try await f.notified("t", "five")
        let behind = try #require(try await writer.state(bot: bot, conversation: "t"))
        #expect(try await writer.commit(ConformanceSuite.sampleCommit(m5, after: behind, reply: "elsewhere")) == .committed)
        let u = try await f.notified("u", String(repeating: "y", count: 9_000))
        #expect(try await f.claim(holding: []).messages.map(\.id) == [u.id] && f.floor() >= u.seq && f.floor() > floorBefore)
        let m6 = try await f.notified("t", "six")
        let stale = try await f.claim(holding: ["t"])
        #expect(stale.messages.map(\.id) == [m6.id] && store.takenFromNotifications == 2)
        #expect(try await f.commit(stale, reply: "r6") == .conflict)
        let again = try await f.claim(holding: ["t"])
        #expect(again.messages.map(\.id) == [m6.id] && store.takenFromNotifications == 2)
        #expect(try await f.commit(again, reply: "r6") == .committed)
        let replies = try await writer.transcript(conversation: "t").filter { $0.from == .bot }.map(\.text)
        #expect(replies == ["r1", "r2", "r2b", "r3", "r4", "elsewhere", "r6"])
        // A new conversation's first message, for a worker alone in its share: taken, no state.
        let v1 = try await f.notified("v", "new here")
        let new = try await f.claim(holding: [])
        #expect(new.messages.map(\.id) == [v1.id] && new.states?["v"] == nil && store.takenFromNotifications == 3)
        #expect(try await f.commit(new, reply: "hello v") == .committed)
        // With other workers sharing the bot, a new conversation's first message is read (its
        // lease is taken with it).
        let w1 = try await f.notified("w", "new too")
        _ = try await f.claim(holding: [], share: Share(index: 0, count: 2))
        #expect(store.takenFromNotifications == 3)
        _ = try await f.claim(holding: [], share: Share(index: 1, count: 2))
        #expect(store.takenFromNotifications == 3)
        let leased = try await writer.claim(bot: bot, conversations: ["w"], worker: "other", until: until)
        #expect(leased.isEmpty, "\(w1.conversationID) is leased by the read")
        try await f.close()
    }

    /// More notified messages than the store keeps: they are dropped, and until a read covers
    /// them the store still says there is something to read (else the worker would skip reads
    /// and leave them for the rescans).
    @Test func notesDroppedPastTheLimitAreStillRead() async throws {
        var options = PostgresStore.Options()
        options.maxNotes = 3
        let f = try await NotifyFixture(options: options)
        let writer = f.writer, store = f.store
        _ = try await customer(writer, "a", "zero")
        try await Task.sleep(for: .milliseconds(200))
        let first = try await f.claim(holding: [])   // the store learns its bot
        #expect(first.messages.count == 1)
        var last: StoredMessage?
        for i in 1...4 { last = try await customer(writer, "b\(i)", "m\(i)") }
        let newest = try #require(last).seq
        try await eventually("the newest message notified") {
            guard let generation = store.changeSignal?.generation else { return false }
            return (store.notified(since: generation)?.newest ?? 0) >= newest
        }
        let generation = try #require(store.changeSignal?.generation)
        #expect(store.notified(since: generation)?.newest == newest)
        #expect(store.notified(since: generation)?.covered(by: first.readThrough) == false, "the dropped notes are still to be read")
        let read = try await f.claim(holding: [])   // from first.readThrough
        #expect(read.messages.map(\.text) == ["m1", "m2", "m3", "m4"] && read.readThrough >= newest)
        #expect(store.notified(since: generation)?.covered(by: read.readThrough) == true)
        try await f.close()
    }

    /// The LISTEN connection drops while the store could take its conversation's next message:
    /// one written before it listens again has no NOTIFY. The store reads it — the wake-up of
    /// the new connection says nothing, and takes wait until a read has covered what the new
    /// LISTEN started after — and once one has, the next message is taken again.
    @Test func aMessageWrittenWhileTheListenerReconnectsIsRead() async throws {
        let f = try await NotifyFixture()
        let writer = f.writer, store = f.store, database = f.database
        func claim() async throws -> Intake { try await f.claim(holding: ["t"]) }
        func notified(_ text: String) async throws -> StoredMessage { try await f.notified("t", text) }
        let m1 = try await notified("one")
        let first = try await claim()   // the store learns its bot
        #expect(first.messages.map(\.id) == [m1.id] && store.takenFromNotifications == 0)
        #expect(try await f.commit(first, reply: "r1") == .committed)
        let m2 = try await notified("two")
        let taken = try await claim()
        #expect(taken.messages.map(\.id) == [m2.id] && store.takenFromNotifications == 1)
        #expect(try await f.commit(taken, reply: "r2") == .committed)
        // The listening backend ends (waited for: it can deliver no NOTIFY after), and a message
        // is written at once, in the same psql session: before the listener connects again, 50 ms
        // of backoff later (were it later, its NOTIFY would come on the new connection: the
        // expectations below hold either way).
        let before = try #require(store.changeSignal?.generation)
        let ended = try await TestDB.server.psql("""
            SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
            WHERE application_name = 'usher.postgres.listen' AND datname = current_database();
            INSERT INTO messages (id, conversation_id, sender_type, content) VALUES ('m3', 't', 'customer', 'three');
            SELECT max(seq) FROM messages;
            """, database: database)
        // The store's listener (the writer's too, when it is connected: both stores listen).
        #expect(ended.hasPrefix("t"), "\(ended)")
        await store.changeSignal?.wait(since: before, timeout: .seconds(5))
        try await eventually("woken by the new LISTEN connection") { store.changeSignal.map { $0.generation > before } ?? false }
        #expect(store.notified(since: before) == nil, "the new connection's wake-up does not say what came meanwhile")
        let read = try await claim()
        #expect(read.messages.map(\.id) == ["m3"] && store.takenFromNotifications == 1, "\(read.messages.map(\.text))")
        #expect(try await f.commit(read, reply: "r3") == .committed)
        // That read started below the new LISTEN's start, as a backlog's would: its commit's
        // state is not kept, and the next message is read too. The one after is taken.
        for (text, reply) in [("four", "r4"), ("five", "r5")] {
            let m = try await notified(text)
            let taken = store.takenFromNotifications
            let intake = try await claim()
            #expect(intake.messages.map(\.id) == [m.id])
            if text == "five" { #expect(store.takenFromNotifications == taken + 1, "taken again") }
            #expect(try await f.commit(intake, reply: reply) == .committed)
        }
        let replies = try await writer.transcript(conversation: "t").filter { $0.from == .bot }.map(\.text)
        #expect(replies == ["r1", "r2", "r3", "r4", "r5"])
        try await f.close()
    }

    /// A store that two bots claim through takes nothing from its notes: each bot has its own
    /// done marks, and a note taken for one would be missing for the other. Both bots get every
    /// message from a read.
    @Test func aStoreServingTwoBotsReadsEveryMessage() async throws {
        let f = try await NotifyFixture()
        let writer = f.writer, store = f.store
        let other = BotIdentity(id: "other", name: "Other", senderID: "bot:other")
        func answer(_ bot: BotIdentity, expecting m: StoredMessage) async throws {
            let intake = try await f.claim(bot, holding: ["t"])
            #expect(intake.messages.map(\.id) == [m.id], "\(bot.id): \(intake.messages.map(\.text))")
            #expect(try await f.commit(intake, reply: "\(bot.id): \(m.text)", bot: bot) == .committed)
        }
        for text in ["one", "two", "three"] {
            let m = try await f.notified("t", text)
            try await answer(Self.bot, expecting: m)
            try await answer(other, expecting: m)
        }
        #expect(store.takenFromNotifications == 0)
        let replies = try await writer.transcript(conversation: "t").filter { $0.from == .bot }.map(\.text)
        #expect(replies == ["\(Self.bot.id): one", "other: one", "\(Self.bot.id): two", "other: two", "\(Self.bot.id): three", "other: three"])
        try await f.close()
    }

    /// `intake: poll`: no trigger is installed, and a waiting worker still sees a new message
    /// within the poll interval.
    @Test func pollingIntake() async throws {
        let url = try await TestDB.server.createDatabase()
        var mapping = SQLMapping.native
        mapping.intake = .poll
        mapping.pollInterval = .milliseconds(50)
        let store = try await PostgresStore(url: url, mapping: mapping)
        let database = PostgresTestServer.database(of: url)
        #expect(try await TestDB.server.psql("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal", database: database)
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        let latest = try await store.latestSeq()
        let writer = try await PostgresStore(url: url, mapping: mapping)
        let started = ContinuousClock.now
        async let waited: Void = store.waitForChanges(after: latest, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        _ = try await customer(writer, "p", "hello")
        try await waited
        // Far below the timeout: a loaded machine delays the poll, not by half a minute.
        #expect(ContinuousClock.now - started < .seconds(30), "woken by polling, not by the timeout")
        try await store.close()
        try await writer.close()
    }
}

@Suite("PostgreSQL NOTIFY payloads")
struct PGNoteTests {
    /// The trigger's payload: the message as a JSON array of `messageColumns`, or its seq alone.
    @Test func aPayloadIsAMessageOrASeq() throws {
        let payload = #"[42, "m1", "c1", "message", "customer", "u1", null, "a \"b\"\n\u00e9", 1796086226.713182, null, "web", null, 1]"#
        let note = try #require(PGListener.Note(payload: payload))
        #expect(note.seq == 42 && note.first)
        let m = try #require(note.message)
        #expect(m.id == "m1" && m.conversationID == "c1" && m.kind == .message && m.from == .customer)
        #expect(m.senderID == "u1" && m.senderName == nil && m.text == "a \"b\"\né" && m.ruleID == nil)
        #expect(m.channel == "web" && m.locale == nil && m.at == Date(timeIntervalSince1970: 1796086226.713182))
        #expect(PGListener.Note(payload: "42")?.seq == 42 && PGListener.Note(payload: "42")?.message == nil)
        // Twelve values: an older trigger's payload (no first-message flag) is not taken.
        let older = #"[42, "m1", "c1", "message", "customer", null, null, "hi", 1796086226.7, null, null, null]"#
        for bad in ["", "x", "[1, 2]", #"[1, "a"]"#, "[1", older] { #expect(PGListener.Note(payload: bad) == nil, "\(bad)") }
    }
}

@Suite("PostgreSQL array literals")
struct PGTextArrayTests {
    @Test func quotesEscapesNULsAndNulls() {
        #expect(PGText.array([String]()) == "{}")
        #expect(PGText.array(["a", "b c"]) == #"{"a","b c"}"#)
        #expect(PGText.array([#"say "hi" \ bye"#]) == #"{"say \"hi\" \\ bye"}"#)
        #expect(PGText.array(["a\u{0}b", "é🙂"]) == "{\"a\u{FFFD}b\",\"é🙂\"}")
        #expect(PGText.array(optional: ["x", nil, "NULL"]) == #"{"x",NULL,"NULL"}"#)
        // One field of each element, read in place: the same literal as from the field's values.
        let pairs: [(String, String?)] = [("a", "x"), (#"q"u"#, nil), ("n\u{0}l", "NULL")]
        #expect(PGText.array(pairs) { $0.0 } == PGText.array(pairs.map(\.0)))
        #expect(PGText.array(pairs) { $0.1 } == PGText.array(optional: pairs.map(\.1)))
        #expect(PGText.array([(String, String?)]()) { $0.0 } == "{}")
    }
}

/// Two stores on a fresh database, for the tests of messages taken from their NOTIFY: `writer`
/// appends as a backend would; `store` claims as a worker does — each bot's next claim from
/// where its last one covered (`floor`), 10 messages at most, under worker "w".
final class NotifyFixture {
    let url: String
    let writer: PostgresStore
    let store: PostgresStore
    private var floors: [String: Int64] = [:]
    private let until = Date().addingTimeInterval(60)

    init(options: PostgresStore.Options = .init()) async throws {
        url = try await TestDB.server.createDatabase()
        writer = try await PostgresStore(url: url)
        store = try await PostgresStore(url: url, options: options)
        try await eventually("listening") { [store] in store.changeSignal != nil }
    }

    var database: String { PostgresTestServer.database(of: url) }

    /// Where `bot`'s next claim starts.
    func floor(_ bot: BotIdentity = PostgresStoreTests.bot) -> Int64 { floors[bot.id] ?? 0 }

    /// A claim holding the conversations `held`.
    func claim(_ bot: BotIdentity = PostgresStoreTests.bot, holding held: Set<String>, share: Share = .all) async throws -> Intake {
        let intake = try await store.claimPending(bot: bot.id, after: floor(bot), limit: 10, worker: "w", until: until, skipping: [:],
                                                  share: share, holds: { held.contains($0) })
        floors[bot.id] = max(floor(bot), intake.readThrough)
        return intake
    }

    /// Appends a customer message and waits until the store has its NOTIFY.
    func notified(_ conversation: String, _ text: String) async throws -> StoredMessage {
        let generation = try #require(store.changeSignal?.generation)
        let m = try await PostgresStoreTests.customer(writer, conversation, text)
        await store.changeSignal?.wait(since: generation, timeout: .seconds(5))
        return m
    }

    /// Commits the intake's first message from the state it came with, replying `reply`.
    func commit(_ intake: Intake, reply: String, bot: BotIdentity = PostgresStoreTests.bot) async throws -> CommitResult {
        let m = try #require(intake.messages.first)
        return try await store.commit(ConformanceSuite.sampleCommit(m, after: intake.states?[m.conversationID], reply: reply, bot: bot))
    }

    func close() async throws {
        try await store.close()
        try await writer.close()
    }
}

/// A TCP port on 127.0.0.1 whose connections the kernel completes and nothing ever answers.
final class SilentListener: Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = s >= 0 && withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(s, p, length) == 0 && listen(s, 8) == 0 && getsockname(s, p, &length) == 0
            }
        }
        guard bound else { throw StoreError("test", "no listening socket (errno \(errno))") }
        fd = s
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    private let open = Mutex(true)

    /// Closes the socket (once): the connections it kept waiting are reset.
    func close() {
        if open.withLock({ o in defer { o = false }; return o }) { _ = Glibc.close(fd) }
    }
}
