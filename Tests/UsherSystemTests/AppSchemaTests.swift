import Foundation
import Testing
import UsherPostgres
import UsherPostgresTestServer
import UsherSQLMapping
import UsherStore
import UsherTestSupport

/// Usher beside an application on the application's own PostgreSQL tables, as an operator runs
/// it: Chatwoot's real schema (Tests/Fixtures/chatwoot/schema.sql) through
/// examples/mapping/chatwoot.yaml as the role of examples/mapping/chatwoot-grants.sql, and a
/// second schema with uuid ids and text statuses. The worker is the real `usher run`; the
/// application's writes are SQL, as the application would make them. Asserted on the rows.
@Suite("Usher on an application's own tables", .serialized)
struct AppSchemaTests {
    static var server: PostgresTestServer { get async throws { try await PostgresTestServer.ready() } }

    /// A database with Chatwoot's tables, an account, an agent (users 1), Usher's agent bot
    /// (agent_bots 1), a website inbox and three contacts — and its history: a resolved
    /// conversation (1) whose customer was never answered, and one a person holds (2, open and
    /// assigned). Then the grants. The database, its URL, the URL as Usher's role, and SQL as
    /// Chatwoot (the tables' owner).
    static func chatwoot(grants extra: String = "") async throws -> (url: String, asUsher: String, sql: @Sendable (String) throws -> String) {
        let server = try await Self.server
        let url = try server.createDatabase(prefix: "chatwoot")
        let database = PostgresTestServer.database(of: url)
        let sql: @Sendable (String) throws -> String = { try server.psql($0, database: database).trimmingCharacters(in: .whitespacesAndNewlines) }
        _ = try sql(try String(contentsOf: repoRoot.appendingPathComponent("Tests/Fixtures/chatwoot/schema.sql"), encoding: .utf8))
        _ = try sql("""
            INSERT INTO accounts (name, created_at, updated_at) VALUES ('Acme', now(), now());
            INSERT INTO users (name, email, created_at, updated_at) VALUES ('Li', 'li@acme.test', now(), now());
            INSERT INTO agent_bots (name, account_id, created_at, updated_at) VALUES ('Usher', 1, now(), now());
            INSERT INTO inboxes (channel_id, account_id, name, channel_type, created_at, updated_at)
                VALUES (1, 1, 'Website', 'Channel::WebWidget', now(), now());
            INSERT INTO contacts (name, account_id, created_at, updated_at)
                VALUES ('Old', 1, now(), now()), ('Ravi', 1, now(), now()), ('Mei', 1, now(), now());
            INSERT INTO conversations (account_id, inbox_id, status, assignee_id, contact_id, created_at, updated_at)
                VALUES (1, 1, 1, NULL, 1, '2026-11-01 02:00', '2026-11-01 02:00'), (1, 1, 0, 1, 2, '2026-11-29 02:00', '2026-11-29 02:00');
            INSERT INTO messages (content, account_id, inbox_id, conversation_id, message_type, created_at, updated_at, sender_type, sender_id)
                VALUES ('is anyone there', 1, 1, 1, 0, '2026-11-01 02:00', '2026-11-01 02:00', 'Contact', 1),
                       ('my order?', 1, 1, 2, 0, '2026-11-29 02:00', '2026-11-29 02:00', 'Contact', 2);
            """)
        _ = try sql(try String(contentsOf: repoRoot.appendingPathComponent("examples/mapping/chatwoot-grants.sql"), encoding: .utf8) + extra)
        return (url, url.replacingOccurrences(of: "user=\(server.user)", with: "user=usher"), sql)
    }

    /// A message as Chatwoot writes it, at `at` (UTC): a customer's (incoming), an agent's reply
    /// (outgoing, from a user), an agent's private note.
    static func message(_ sql: (String) throws -> String, _ conversation: Int, _ from: String, _ text: String, at: String,
                        private isPrivate: Bool = false) throws {
        let (type, sender, id) = from == "Contact" ? (0, "Contact", conversation) : (1, "User", 1)
        _ = try sql("""
            INSERT INTO messages (content, account_id, inbox_id, conversation_id, message_type, private, created_at, updated_at, sender_type, sender_id)
            VALUES ('\(text.replacingOccurrences(of: "'", with: "''"))', 1, 1, \(conversation), \(type), \(isPrivate), '\(at)', '\(at)', '\(sender)', \(id))
            """)
    }

    /// The bot's messages in `conversation`, in order, as `content` (after `after`, an id).
    static func botMessages(_ sql: (String) throws -> String, _ conversation: Int, after: Int = 0) throws -> [String] {
        let rows = try sql("SELECT string_agg(content, '|' ORDER BY id) FROM messages WHERE conversation_id = \(conversation) "
                           + "AND sender_type = 'AgentBot' AND id > \(after)")
        return rows.isEmpty ? [] : rows.components(separatedBy: "|")
    }

    /// Waits until the worker has taken its position (`usher.cursors`): what Chatwoot writes
    /// from then on is new; what it wrote before is history.
    static func started(_ sql: @escaping @Sendable (String) throws -> String, _ worker: WorkerProcess) async throws {
        try await eventually("the worker has its position", detail: worker.log) {
            (try? sql("SELECT count(*) FROM usher.cursors WHERE bot = 'support'")) == "1"
        }
    }

    /// The seed's conversation on Chatwoot, with the support bot: three canned replies as
    /// outgoing AgentBot messages with every column Chatwoot needs; an agent's private note in
    /// between takes nothing over; the fourth message hands off by opening the conversation;
    /// while it waits the bot says so once; an agent assigned who replies silences it. The
    /// history (a month-old unanswered message) and a conversation a person held before Usher
    /// came are never answered, and their rows are not touched.
    @Test(arguments: ["poll", "trigger"]) func theSeedsConversationOnChatwoot(_ intake: String) async throws {
        let (url, asUsher, sql) = try await Self.chatwoot(grants: intake == "trigger" ? "GRANT TRIGGER ON messages TO usher;" : "")
        let scratch = try Scratch()
        defer { scratch.remove() }
        let mapping = scratch.dir.appendingPathComponent("chatwoot.yaml")
        try String(contentsOf: repoRoot.appendingPathComponent("examples/mapping/chatwoot.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "intake: poll ", with: "intake: \(intake) ")
            .write(to: mapping, atomically: true, encoding: .utf8)
        let bot = repoRoot.appendingPathComponent("bots/support").path
        let worker = try WorkerProcess(bot: bot, store: asUsher, extra: ["--mapping", mapping.path, "--worker-id", "w1"])
        try await Self.started(sql, worker)
        let untouched = try sql("SELECT string_agg(id || ':' || status || ':' || coalesce(assignee_id, 0) || ':' || updated_at, ' ' ORDER BY id) FROM conversations")

        _ = try sql("INSERT INTO conversations (account_id, inbox_id, status, contact_id, created_at, updated_at) VALUES (1, 1, 2, 3, now(), now())")
        // Monday 10:00 in Shanghai, the bot's time zone: within business hours.
        func customer(_ text: String, at: String) async throws {
            try Self.message(sql, 3, "Contact", text, at: "2026-11-30 \(at)")
        }
        let opening = ["Hi there! How can we assist you today?", "Thanks for reaching out—we're here to help.",
                       "One moment while we review your request..."]
        let handoff = "Thanks for your question! We're connecting you to a support agent now."
        try await customer("hello", at: "02:00:00")
        try await eventually("the first reply", detail: worker.log) { try Self.botMessages(sql, 3) == Array(opening.prefix(1)) }
        try Self.message(sql, 3, "User", "checking her order first", at: "2026-11-30 02:00:05", private: true)
        try await customer("are you there", at: "02:00:10")
        try await eventually("the second reply, the private note notwithstanding", detail: worker.log) {
            try Self.botMessages(sql, 3) == Array(opening.prefix(2))
        }
        try await customer("???", at: "02:00:20")
        try await eventually("the third reply", detail: worker.log) { try Self.botMessages(sql, 3) == opening }
        try await customer("still nothing", at: "02:00:30")
        try await eventually("the handoff notice", detail: worker.log) { try Self.botMessages(sql, 3) == opening + [handoff] }
        #expect(try sql("SELECT status || ' ' || coalesce(assignee_id, 0) FROM conversations WHERE id = 3") == "0 0", "handed off: open")
        try await customer("hello??", at: "02:03:00")
        try await eventually("the waiting reply", detail: worker.log) {
            try Self.botMessages(sql, 3) == opening + [handoff, "An agent will be with you shortly."]
        }
        // Every column of the bot's messages as Chatwoot's own agent bots write them.
        #expect(try sql("""
            SELECT DISTINCT concat_ws(' ', account_id, inbox_id, message_type, private, status, content_type, sender_type, sender_id,
                                      updated_at >= created_at - interval '1 minute')
            FROM messages WHERE sender_type = 'AgentBot'
            """) == "1 1 1 f 0 0 AgentBot 1 t")

        _ = try sql("UPDATE conversations SET assignee_id = 1 WHERE id = 3")
        try Self.message(sql, 3, "User", "Hi, I'm Li. How can I help?", at: "2026-11-30 02:04:00")
        try await customer("my parcel is late", at: "02:05:00")
        try Self.message(sql, 2, "Contact", "hello?", at: "2026-11-30 02:05:00")
        let (loaded, _) = SQLMapping.load(path: mapping.path)
        let reader = try await PostgresStore(url: url, mapping: try #require(loaded))
        try await drain(reader, bot: "support", timeout: .seconds(60))
        try await reader.close()
        #expect(try Self.botMessages(sql, 3) == opening + [handoff, "An agent will be with you shortly."], "silent once a person has it")
        #expect(try Self.botMessages(sql, 1) + Self.botMessages(sql, 2) == [], "the history and a person's conversation: never answered")
        #expect(try sql("SELECT string_agg(id || ':' || status || ':' || coalesce(assignee_id, 0) || ':' || updated_at, ' ' ORDER BY id) "
                        + "FROM conversations WHERE id < 3") == untouched)
        #expect(try sql("SELECT status || ' ' || assignee_id FROM conversations WHERE id = 3") == "0 1")
        let (status, _) = worker.terminate()
        #expect(status == 0, "\(worker.log)")
    }

    /// Two workers on Chatwoot's tables, one of them killed with SIGKILL at random moments (and
    /// started again under its id) while 60 customers write five messages each: every
    /// conversation gets exactly its three replies and one handoff notice, in order, and is
    /// opened for the agents — nothing lost, nothing doubled.
    @Test func killedAtRandomOnChatwoot() async throws {
        let (url, asUsher, sql) = try await Self.chatwoot()
        let scratch = try Scratch()
        defer { scratch.remove() }
        let mapping = repoRoot.appendingPathComponent("examples/mapping/chatwoot.yaml").path
        let conversations = 60, perConversation = 5
        _ = try sql("INSERT INTO conversations (account_id, inbox_id, status, contact_id, created_at, updated_at) "
                    + "SELECT 1, 1, 2, 3, now(), now() FROM generate_series(1, \(conversations))")
        func start(_ i: Int) throws -> WorkerProcess {
            try WorkerProcess(bot: scratch.bot, store: asUsher, extra: ["--mapping", mapping, "--worker-id", "w\(i)"])
        }
        var workers = try (0..<2).map(start)
        try await eventually("the workers have their position", detail: workers[0].log) {
            (try? sql("SELECT count(*) FROM usher.cursors WHERE bot = 'crash'")) == "1"
        }
        // Chatwoot's writes: each conversation's messages in order, the conversations interleaved.
        let fed = Flag()
        let feeder = Task.detached {
            defer { fed.set() }
            let db = try PGConnection(url)
            var next = [Int](repeating: 0, count: conversations)
            while let c = (0..<conversations).filter({ next[$0] < perConversation }).randomElement() {
                next[c] += 1
                _ = try db.execute("""
                    INSERT INTO messages (content, account_id, inbox_id, conversation_id, message_type, created_at, updated_at, sender_type, sender_id)
                    VALUES ($1, 1, 1, $2::int, 0, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', 'Contact', 3)
                    """, ["m\(next[c])", String(c + 3)])
                try await Task.sleep(for: .milliseconds(Int.random(in: 2...12)))
            }
        }
        var kills = 0
        while kills < 25 || !fed.isSet {
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...250)))
            workers[0].kill9()
            kills += 1
            workers[0] = try start(0)
            if kills > 200 { break }
        }
        try await feeder.value
        let (loaded, _) = SQLMapping.load(path: mapping)
        let reader = try await PostgresStore(url: url, mapping: try #require(loaded))
        try await drain(reader, bot: "crash", timeout: .seconds(120))
        try await reader.close()
        for w in workers {
            let (status, _) = w.terminate()
            #expect(status == 0)
        }
        #expect(kills >= 25)
        // Per conversation: its bot messages in order, and whether it is open.
        let rows = try sql("""
            SELECT c.id || ' ' || c.status || ' ' || coalesce((SELECT string_agg(m.content, '|' ORDER BY m.id) FROM messages AS m
                                                                 WHERE m.conversation_id = c.id AND m.sender_type = 'AgentBot'), '')
            FROM conversations AS c WHERE c.id > 2 ORDER BY c.id
            """).split(separator: "\n").map { $0.split(separator: " ", maxSplits: 2).map(String.init) }
        #expect(rows.count == conversations)
        let notices = Set(rows.compactMap { $0.last?.components(separatedBy: "|").dropFirst(3).first })
        #expect(notices.count == 1, "one handoff notice text: \(notices)")
        let expected = "one|two|three|" + (notices.first ?? "")
        let wrong = rows.filter { $0.count < 3 || $0[1] != "0" || $0[2] != expected }
        #expect(wrong.isEmpty, "conversations not answered exactly once each, in order, and opened: \(wrong.prefix(5))")
    }

    /// A Django app's tables: uuid ids, text statuses (`bot`, `queue`, `agent`, `closed`), an
    /// `internal` flag for notes, `timestamp with time zone`. The seed's conversation through
    /// its mapping: three replies and a handoff that queues the ticket, silence while a person
    /// has it, and after it is closed a new session with the bot; a ticket a person had before
    /// Usher came is never answered.
    @Test func uuidIdsAndTextStatuses() async throws {
        let server = try await Self.server
        let url = try server.createDatabase(prefix: "django")
        let database = PostgresTestServer.database(of: url)
        let sql: @Sendable (String) throws -> String = { try server.psql($0, database: database).trimmingCharacters(in: .whitespacesAndNewlines) }
        _ = try sql("""
            CREATE TABLE support_ticket (
                id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                subject        varchar(200) NOT NULL DEFAULT '',
                status         varchar(20) NOT NULL DEFAULT 'bot',
                assigned_to_id integer,
                created        timestamp with time zone NOT NULL DEFAULT now(),
                updated        timestamp with time zone NOT NULL DEFAULT now()
            );
            CREATE TABLE support_message (
                id        bigserial PRIMARY KEY,
                ticket_id uuid NOT NULL REFERENCES support_ticket (id) DEFERRABLE INITIALLY DEFERRED,
                author    varchar(20) NOT NULL,
                internal  boolean NOT NULL,
                body      text NOT NULL,
                created   timestamp with time zone NOT NULL
            );
            CREATE INDEX support_message_ticket_id ON support_message (ticket_id);
            INSERT INTO support_ticket (id, status, assigned_to_id)
                VALUES ('5b9e0a4c-0000-4000-8000-000000000001', 'bot', NULL), ('5b9e0a4c-0000-4000-8000-000000000002', 'agent', 4);
            """)
        let scratch = try Scratch()
        defer { scratch.remove() }
        let mapping = scratch.dir.appendingPathComponent("django.yaml")
        try """
            mapping: 1
            intake: poll
            poll_interval: 100ms
            conversations:
              table: support_ticket
              columns: {id: id, updated_at: updated}
              ownership:
                agent: status = 'agent'
                waiting: status = 'queue'
                handoff: {status: queue}
            messages:
              table: support_message
              columns: {seq: id, conversation_id: ticket_id, sender_type: author, content: body, created_at: created}
              sender_values: {customer: customer, agent: staff, bot: bot, system: bot}
              where: internal = false
              write: {internal: false}
            """.write(to: mapping, atomically: true, encoding: .utf8)
        let worker = try WorkerProcess(bot: scratch.bot, store: url, extra: ["--mapping", mapping.path])
        try await eventually("the worker has its position", detail: worker.log) {
            (try? sql("SELECT count(*) FROM usher.cursors WHERE bot = 'crash'")) == "1"
        }
        let ticket = "5b9e0a4c-0000-4000-8000-000000000001"
        func post(_ author: String, _ body: String, ticket t: String = ticket, note: Bool = false) throws {
            _ = try sql("INSERT INTO support_message (ticket_id, author, internal, body, created) VALUES ('\(t)', '\(author)', \(note), '\(body)', now())")
        }
        func bot() throws -> String {
            try sql("SELECT coalesce(string_agg(body, '|' ORDER BY id), '') FROM support_message WHERE author = 'bot' AND ticket_id = '\(ticket)'")
        }
        for (i, expected) in ["one", "one|two", "one|two|three"].enumerated() {
            try post("customer", "question \(i + 1)")
            try await eventually("reply \(i + 1)", detail: worker.log) { try bot() == expected }
        }
        try post("staff", "looks like a refund", note: true)
        try post("customer", "question 4")
        try await eventually("the handoff queues the ticket", detail: worker.log) {
            try sql("SELECT status FROM support_ticket WHERE id = '\(ticket)'") == "queue"
        }
        let handedOff = try bot()
        #expect(handedOff.hasPrefix("one|two|three|") && handedOff.components(separatedBy: "|").count == 4)
        _ = try sql("UPDATE support_ticket SET status = 'agent', assigned_to_id = 4 WHERE id = '\(ticket)'")
        try post("staff", "Ana here")
        try post("customer", "thanks Ana")
        try post("customer", "anyone?", ticket: "5b9e0a4c-0000-4000-8000-000000000002")
        let (loaded, _) = SQLMapping.load(path: mapping.path)
        let reader = try await PostgresStore(url: url, mapping: try #require(loaded))
        try await drain(reader, bot: "crash", timeout: .seconds(60))
        #expect(try bot() == handedOff, "silent while a person has it")
        #expect(try sql("SELECT count(*) FROM support_message WHERE author = 'bot' AND ticket_id = '5b9e0a4c-0000-4000-8000-000000000002'") == "0")
        // Closed: the bot's again, and the next message starts a session with it.
        _ = try sql("UPDATE support_ticket SET status = 'closed' WHERE id = '\(ticket)'")
        try post("customer", "one more thing")
        try await eventually("a new session with the bot", detail: worker.log) { try bot() == handedOff + "|one" }
        try await reader.close()
        let (status, _) = worker.terminate()
        #expect(status == 0, "\(worker.log)")
    }
}
