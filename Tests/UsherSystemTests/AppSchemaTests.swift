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
}
