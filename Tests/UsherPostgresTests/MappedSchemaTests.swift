import Foundation
import Testing
import UsherDiagnostics
import UsherEngine
import UsherPostgresTestServer
import UsherSQLMapping
import UsherStore
import UsherStoreTestKit
@testable import UsherPostgres

/// An application's own tables as real apps have them (docs/mapping.md): integer and uuid ids,
/// enum and integer values, `timestamp without time zone`, NOT NULL columns. What the store
/// reads and writes there, and what it refuses at start, at the line of the mapping file.
@Suite("PostgreSQL store: an application's own tables", .serialized)
struct MappedSchemaTests {
    static let bot = ConformanceSuite.bot

    /// A fresh database holding `ddl`, its name, and a function running SQL there as the server's
    /// superuser (the application).
    static func database(_ ddl: String) async throws -> (url: String, sql: @Sendable (String) throws -> String) {
        let server = try await TestDB.server
        let url = try server.createDatabase()
        let name = PostgresTestServer.database(of: url)
        try server.psql(ddl, database: name)
        return (url, { try server.psql($0, database: name).trimmingCharacters(in: .whitespacesAndNewlines) })
    }

    static func mapping(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> SQLMapping {
        let (mapping, diagnostics) = SQLMapping.parse(path: "app.yaml", text: text)
        #expect(diagnostics.isEmpty, "\(diagnostics.map(\.headline))", sourceLocation: sourceLocation)
        return try #require(mapping, sourceLocation: sourceLocation)
    }

    /// The problems a store finds when it opens on `mapping`, as headlines (none: it opened).
    static func problems(_ url: String, _ mapping: SQLMapping) async throws -> [String] {
        do {
            let store = try await PostgresStore(url: url, mapping: mapping)
            try await store.close()
            return []
        } catch let e as PostgresStore.MappingMismatch {
            return e.diagnostics.map(\.headline)
        }
    }

    static let typedDDL = """
        CREATE TYPE author_kind AS ENUM ('customer', 'staff', 'robot', 'notice');
        CREATE TABLE tickets (
            id         serial PRIMARY KEY,
            subject    text NOT NULL DEFAULT ''
        );
        CREATE TABLE posts (
            id         bigserial PRIMARY KEY,
            ticket_id  integer NOT NULL REFERENCES tickets (id),
            author     author_kind NOT NULL,
            author_ref text,
            body       text NOT NULL,
            posted_at  timestamp(6) without time zone NOT NULL
        );
        """

    static let typedMapping = """
        mapping: 1
        intake: poll
        conversations:
          table: tickets
          columns: {id: id}
        messages:
          table: posts
          columns: {seq: id, conversation_id: ticket_id, sender_type: author, sender_id: author_ref, content: body, created_at: posted_at}
          sender_values: {customer: customer, agent: staff, bot: robot, system: notice}
        """

    /// Integer ids, an enum of authors and a `timestamp without time zone` holding UTC, in a
    /// database whose sessions run in another time zone: a customer's post is read with its
    /// time, and the reply goes in with the integer id, the enum value and the time in UTC.
    @Test func valuesAreCastToTheColumnsTypes() async throws {
        let (url, sql) = try await Self.database(Self.typedDDL)
        _ = try sql("ALTER DATABASE \(PostgresTestServer.database(of: url)) SET timezone = 'Asia/Shanghai'")
        let store = try await PostgresStore(url: url, mapping: try Self.mapping(Self.typedMapping))
        _ = try sql("""
            INSERT INTO tickets (subject) VALUES ('refund');
            INSERT INTO posts (ticket_id, author, author_ref, body, posted_at) VALUES (1, 'customer', 'c-7', 'hello', '2026-11-30 02:00:00');
            """)
        let read = try await store.pending(bot: Self.bot.id, after: 0, limit: 10)
        let m = try #require(read.first)
        #expect(read.count == 1 && m.conversationID == "1" && m.from == .customer && m.senderID == "c-7")
        #expect(m.at == ISO8601DateFormatter().date(from: "2026-11-30T02:00:00Z"), "\(m.at)")
        var commit = ConformanceSuite.sampleCommit(m, after: nil, reply: "hi")
        commit.outgoing[0].at = ISO8601DateFormatter().date(from: "2026-11-30T02:00:05Z")!
        #expect(try await store.commit(commit) == .committed)
        #expect(try sql("SELECT ticket_id || ' ' || author || ' ' || author_ref || ' ' || body || ' ' || posted_at FROM posts WHERE id = 2")
                == "1 robot bot:conf hi 2026-11-30 02:00:05")
        #expect(try await store.transcript(conversation: "1").map(\.text) == ["hello", "hi"])
        try await store.close()
    }

    /// A column the mapping names for quick replies gets each reply's as JSON — NULL for a
    /// message without any, `[]` where the column takes no NULL — and the transcript reads them
    /// back; one that cannot hold JSON is refused at its line.
    @Test func quickRepliesGoWhereTheMappingSays() async throws {
        for (ddl, none) in [("buttons jsonb", "NULL"), ("buttons text NOT NULL", "[]")] {
            let (url, sql) = try await Self.database(Self.typedDDL + "ALTER TABLE posts ADD COLUMN \(ddl);")
            let mapping = try Self.mapping(Self.typedMapping.replacingOccurrences(of: "created_at: posted_at}", with: "created_at: posted_at, quick_replies: buttons}"))
            let store = try await PostgresStore(url: url, mapping: mapping)
            _ = try sql("""
                INSERT INTO tickets (subject) VALUES ('refund');
                INSERT INTO posts (ticket_id, author, body, posted_at, buttons) VALUES (1, 'customer', 'help', now(), \(none == "NULL" ? "NULL" : "'[]'"));
                """)
            let m = try #require(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).first)
            let offered = [QuickReply(title: "Track my order"), QuickReply(title: "Returns", url: "https://shop.example/returns")]
            #expect(try await store.commit(ConformanceSuite.sampleCommit(m, after: nil, reply: "hi", handoff: true, quickReplies: offered)) == .committed)
            #expect(try await store.transcript(conversation: "1").map(\.quickReplies) == [[], offered, []], "\(ddl)")
            #expect(try sql("SELECT coalesce(buttons::text, 'NULL') FROM posts WHERE body = 'Connecting you to an agent.'") == none, "\(ddl)")
            try await store.close()
        }
        let (url, _) = try await Self.database(Self.typedDDL + "ALTER TABLE posts ADD COLUMN buttons integer;")
        let mapping = try Self.mapping(Self.typedMapping.replacingOccurrences(of: "created_at: posted_at}", with: "created_at: posted_at, quick_replies: buttons}"))
        let problems = try await Self.problems(url, mapping)
        #expect(problems == [
            "app.yaml:8:147: error: [wrong-column-type] column 'buttons' of 'posts' is integer; Usher keeps a reply's quick replies as a JSON array there: map a json, jsonb or text column",
        ])
    }

    /// Types that cannot hold what Usher keeps there, and values their columns cannot hold or
    /// give back otherwise, are refused when the store opens — every one, at its line.
    @Test func wrongTypesAndValuesAreRefusedAtStart() async throws {
        let (url, _) = try await Self.database(Self.typedDDL + """
            ALTER TABLE posts ADD COLUMN kind integer NOT NULL DEFAULT 0, ADD COLUMN author_no integer, ADD COLUMN body_no integer,
                ADD COLUMN sent timestamp;
            ALTER TABLE tickets ADD COLUMN uid uuid;
            """)
        let mapping = try Self.mapping("""
            mapping: 1
            intake: poll
            conversations:
              table: tickets
              columns: {id: uid}
            messages:
              table: posts
              columns:
                seq: id
                conversation_id: ticket_id
                kind: kind
                sender_type: author
                sender_id: author_no
                content: body_no
                created_at: sent
              sender_values: {customer: Contact, agent: staff, bot: robot, system: notice}
              kind_values: {message: '00', close: '1'}
              time: epoch
            """)
        let problems = try await Self.problems(url, mapping)
        #expect(problems == [
            "app.yaml:13:16: error: [wrong-column-type] column 'author_no' of 'posts' is integer; Usher keeps the bot's sender id "
                + "(text, from bot.yaml) there: map a text or varchar column, or give the replies the application's own value there "
                + "in 'messages.write' (like 'author_no: 1')",
            "app.yaml:14:14: error: [wrong-column-type] column 'body_no' of 'posts' is integer; Usher keeps the message's text there: "
                + "map a text or varchar column",
            "app.yaml:15:17: error: [wrong-column-type] column 'sent' of 'posts' is timestamp without time zone; Usher keeps when the "
                + "message was written there: map an integer column for 'time: epoch', or give the replies the application's own value "
                + "there in 'messages.write' (like 'sent: now()')",
            "app.yaml:10:22: error: [wrong-column-type] column 'ticket_id' of 'posts' is integer and 'uid' of 'tickets' is uuid: "
                + "a message names its conversation by the conversation's id, so the two must compare (both text, both numbers, or the same type)",
            "app.yaml:16:29: error: [invalid-value] 'Contact' is not a value of column 'author' of 'posts' (an enum (author_kind)): "
                + "invalid input value for enum author_kind: \"Contact\"",
            "app.yaml:17:26: error: [invalid-value] '00' reads back from column 'kind' of 'posts' (integer) as '0': "
                + "write '0', the way the column gives it back",
            "app.yaml:6:1: error: [missing-value] Usher's replies would leave the columns 'body', 'posted_at' of 'posts' empty, and they "
                + "are NOT NULL without a default; give each a value in 'messages.write': a constant, now(), null, conversation.COLUMN "
                + "or message.COLUMN (like 'body: conversation.body')",
        ], "\(problems)")
    }

    /// A Rails-style messages table: NOT NULL columns the application fills from the
    /// conversation (`account_id`), a type flag, a timestamp pair, a bigint sender.
    static let railsDDL = """
        CREATE TABLE conversations (
            id         serial PRIMARY KEY,
            account_id integer NOT NULL,
            inbox_id   integer NOT NULL,
            status     integer NOT NULL DEFAULT 0,
            assignee_id integer,
            updated_at timestamp NOT NULL DEFAULT '2026-01-01'
        );
        CREATE TABLE messages (
            id              serial PRIMARY KEY,
            content         text,
            account_id      integer NOT NULL,
            inbox_id        integer NOT NULL,
            conversation_id integer NOT NULL,
            message_type    integer NOT NULL,
            created_at      timestamp NOT NULL,
            updated_at      timestamp NOT NULL,
            private         boolean NOT NULL DEFAULT false,
            content_type    integer NOT NULL DEFAULT 0,
            sender_type     character varying,
            sender_id       bigint,
            source_id       character varying,
            words           tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(content, ''))) STORED
        );
        INSERT INTO conversations (account_id, inbox_id) VALUES (3, 5);
        """

    static func railsMapping(write: String) -> String {
        """
        mapping: 1
        intake: poll
        conversations:
          table: conversations
          columns: {id: id}
        messages:
          table: messages
          columns: {seq: id, conversation_id: conversation_id, sender_type: sender_type, sender_id: sender_id, content: content, created_at: created_at}
          sender_values: {customer: Contact, agent: User, bot: AgentBot, system: AgentBot}
        \(write)
        """
    }

    /// The values a mapping gives the columns it does not map: from the conversation's row,
    /// from the inbound message's, constants, the column's default, now() and NULL — and one in
    /// a mapped column instead of Usher's (the application's id for the bot in `sender_id`).
    @Test func writtenValuesFillTheColumnsTheApplicationNeeds() async throws {
        let (url, sql) = try await Self.database(Self.railsDDL)
        let store = try await PostgresStore(url: url, mapping: try Self.mapping(Self.railsMapping(write: """
              write:
                account_id: conversation.account_id
                inbox_id: message.inbox_id
                message_type: 1
                private: false
                content_type: default
                sender_id: 7
                updated_at: now()
                source_id: null
            """)))
        _ = try sql("""
            INSERT INTO messages (content, account_id, inbox_id, conversation_id, message_type, created_at, updated_at, sender_type, sender_id)
            VALUES ('hello', 3, 9, 1, 0, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', 'Contact', 42);
            """)
        let m = try #require(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).first)
        #expect(m.senderID == "42" && m.from == .customer)
        #expect(try await store.commit(ConformanceSuite.sampleCommit(m, after: nil, reply: "hi", handoff: true)) == .committed)
        #expect(try sql("""
            SELECT string_agg(concat_ws(' ', content, account_id, inbox_id, conversation_id, message_type, private, content_type, sender_type,
                                        sender_id, coalesce(source_id, 'NULL'), updated_at > created_at - interval '1 minute'), ' | ' ORDER BY id)
            FROM messages WHERE id > 1
            """) == "hi 3 9 1 1 f 0 AgentBot 7 NULL t | Connecting you to an agent. 3 9 1 1 f 0 AgentBot 7 NULL t")
        try await store.close()
    }

    /// A mapping that leaves NOT NULL columns empty, or gives values their columns cannot take,
    /// is refused when the store opens, each at its line — not at the first reply.
    @Test func writtenValuesAreCheckedAtStart() async throws {
        let (url, _) = try await Self.database(Self.railsDDL)
        let missing = try Self.mapping(Self.railsMapping(write: ""))
        let empty = try await Self.problems(url, missing)
        #expect(empty == [
            "app.yaml:8:93: error: [wrong-column-type] column 'sender_id' of 'messages' is bigint; Usher keeps the bot's sender id "
                + "(text, from bot.yaml) there: map a text or varchar column, or give the replies the application's own value there "
                + "in 'messages.write' (like 'sender_id: 1')",
            "app.yaml:6:1: error: [missing-value] Usher's replies would leave the columns 'account_id', 'inbox_id', 'message_type', "
                + "'updated_at' of 'messages' empty, and they are NOT NULL without a default; give each a value in 'messages.write': "
                + "a constant, now(), null, conversation.COLUMN or message.COLUMN (like 'account_id: conversation.account_id')",
        ], "\(empty)")
        let wrong = try Self.mapping(Self.railsMapping(write: """
              write:
                account_id: conversation.acount_id
                inbox_id: message.created_at
                message_type: outgoing
                private: null
                words: x
                updated_at: now()
                source: x
            """))
        let problems = try await Self.problems(url, wrong)
        #expect(problems == [
            "app.yaml:8:93: error: [wrong-column-type] column 'sender_id' of 'messages' is bigint; Usher keeps the bot's sender id "
                + "(text, from bot.yaml) there: map a text or varchar column, or give the replies the application's own value there "
                + "in 'messages.write' (like 'sender_id: 1')",
            "app.yaml:11:17: error: [missing-column] 'conversation.acount_id': table 'conversations' has no column 'acount_id'; did you mean 'account_id'?",
            "app.yaml:12:15: error: [invalid-value] 'message.created_at' is timestamp without time zone and column 'inbox_id' of "
                + "'messages' is integer: cannot cast type timestamp without time zone to integer",
            "app.yaml:13:19: error: [invalid-value] 'outgoing' is not a value of column 'message_type' of 'messages' (integer): "
                + "invalid input syntax for type integer: \"outgoing\"",
            "app.yaml:14:14: error: [invalid-value] column 'private' of 'messages' is NOT NULL: it cannot take null; write a value",
            "app.yaml:15:12: error: [invalid-value] column 'words' of 'messages' is an identity or generated column: the database fills it; remove it from 'messages.write'",
            "app.yaml:17:13: error: [missing-column] table 'messages' has no column 'source'",
        ], "\(problems)")
    }

    /// The Rails schema with its ownership: pending (2) and resolved (1) are the bot's, open (0)
    /// waits for a person until one is assigned, snoozed (3) is a person's. A handoff opens it.
    static let ownedMapping = """
        mapping: 1
        intake: poll
        conversations:
          table: conversations
          columns: {id: id, updated_at: updated_at}
          ownership:
            agent: "status = 3 OR (status = 0 AND assignee_id IS NOT NULL)"
            waiting: status = 0 AND "assignee_id" IS NULL
            handoff: {status: 0}
        messages:
          table: messages
          columns: {seq: id, conversation_id: conversation_id, sender_type: sender_type, content: content, created_at: created_at}
          sender_values: {customer: Contact, agent: User, bot: AgentBot, system: AgentBot}
          write: {account_id: conversation.account_id, inbox_id: conversation.inbox_id, message_type: 1, updated_at: now()}
        """

    /// A customer's message in conversation `c`, as the application writes it.
    static func customerMessage(_ sql: (String) throws -> String, _ c: Int, _ text: String) throws {
        _ = try sql("""
            INSERT INTO messages (content, account_id, inbox_id, conversation_id, message_type, created_at, updated_at, sender_type, sender_id)
            VALUES ('\(text)', 3, 5, \(c), 0, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', 'Contact', 42)
            """)
    }

    /// Who owns a conversation is the application's: a conversation a person has is presented
    /// as the agent's (Usher has no state for it yet), one that waits for a person Usher did not
    /// hand over too; Usher writes nothing there. A handoff writes the handoff values, once; a
    /// commit that changes nothing in the row leaves its `updated_at` alone.
    @Test func ownershipIsReadFromTheApplicationsColumns() async throws {
        let (url, sql) = try await Self.database(Self.railsDDL + """
            UPDATE conversations SET status = 2;
            INSERT INTO conversations (account_id, inbox_id, status, assignee_id) VALUES (3, 5, 0, 8), (3, 5, 0, NULL);
            """)
        let store = try await PostgresStore(url: url, mapping: try Self.mapping(Self.ownedMapping))
        for c in 1...3 { try Self.customerMessage(sql, c, "hello \(c)") }
        let intake = try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: "w", until: Date().addingTimeInterval(30),
                                                  skipping: [:], share: .all, holds: { _ in false })
        #expect(intake.messages.map(\.conversationID) == ["1", "2", "3"])
        let states = try #require(intake.states)
        #expect(states["1"] == nil, "pending: the bot's, and new")
        #expect(states["2"]?.owner == .agent && states["2"]?.version == 0, "open and assigned: a person's")
        #expect(states["3"]?.owner == .agent, "waiting for a person, not handed over by Usher")
        #expect(try await store.states(bot: Self.bot.id, conversations: ["1", "2", "3"]).mapValues(\.owner) == ["2": .agent, "3": .agent])

        let before = try sql("SELECT string_agg(id || ':' || status || ':' || updated_at, ' ' ORDER BY id) FROM conversations")
        // The person's conversations: decided, nothing written there — and no reply, whatever
        // was decided (an engine whose session idled out starts one with the bot).
        #expect(try await store.commit(ConformanceSuite.sampleCommit(intake.messages[1], after: states["2"], reply: nil)) == .committed)
        #expect(try await store.commit(ConformanceSuite.sampleCommit(intake.messages[2], after: states["3"], reply: "hi")) == .silenced)
        // The bot's: a reply, then a handoff on the next message.
        #expect(try await store.commit(ConformanceSuite.sampleCommit(intake.messages[0], after: nil, reply: "hi")) == .committed)
        #expect(try sql("SELECT string_agg(id || ':' || status || ':' || updated_at, ' ' ORDER BY id) FROM conversations") == before,
                "nothing of a conversation changed, nor its updated_at")
        #expect(try sql("SELECT string_agg(content, ',') FROM messages WHERE sender_type = 'AgentBot'") == "hi" , "one reply: the bot's conversation's")
        try Self.customerMessage(sql, 1, "a person please")
        let next = try #require(try await store.pending(bot: Self.bot.id, after: intake.readThrough, limit: 10).first)
        let state = try await store.state(bot: Self.bot.id, conversation: "1")
        #expect(try await store.commit(ConformanceSuite.sampleCommit(next, after: state, reply: nil, handoff: true)) == .committed)
        #expect(try sql("SELECT status || ' ' || (updated_at > '2026-01-01') FROM conversations WHERE id = 1") == "0 true")
        #expect(try await store.state(bot: Self.bot.id, conversation: "1")?.owner == .waiting, "handed off by Usher: waiting")
        #expect(try await store.inbox(bot: Self.bot.id).map(\.conversationID) == ["1"])

        // A person is assigned: the agent's. Resolved, then pending again: given back — the
        // session ends as at a close, the version stays the stored one.
        _ = try sql("UPDATE conversations SET assignee_id = 8 WHERE id = 1")
        #expect(try await store.state(bot: Self.bot.id, conversation: "1")?.owner == .agent)
        _ = try sql("UPDATE conversations SET status = 1 WHERE id = 1")
        let back = try #require(try await store.state(bot: Self.bot.id, conversation: "1"))
        #expect(back.owner == .bot && back.sessionStartedAt == nil && back.version == 2, "\(back)")
        try await store.close()
    }

    /// A person takes the conversation between the bot's read and its commit: the reply is
    /// not written (`.silenced`) and neither is anything of the row — in one round trip or two.
    @Test func aPersonTakingTheConversationMeanwhileSilencesTheReply() async throws {
        let (url, sql) = try await Self.database(Self.railsDDL + "UPDATE conversations SET status = 2;")
        let store = try await PostgresStore(url: url, mapping: try Self.mapping(Self.ownedMapping))
        try Self.customerMessage(sql, 1, "hello")
        let m = try #require(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).first)
        let read = try await store.state(bot: Self.bot.id, conversation: "1")
        #expect(read == nil)
        _ = try sql("UPDATE conversations SET status = 0, assignee_id = 8 WHERE id = 1")
        #expect(try await store.commit(ConformanceSuite.sampleCommit(m, after: read, reply: "hi", handoff: true)) == .silenced)
        #expect(try sql("SELECT count(*) FROM messages WHERE sender_type = 'AgentBot'") == "0")
        #expect(try sql("SELECT status || ' ' || assignee_id || ' ' || updated_at FROM conversations") == "0 8 2026-01-01 00:00:00")
        try await store.close()
    }

    /// Conditions the database cannot use, and handoff values the row cannot take, are refused
    /// when the store opens: at the character the database names.
    @Test func ownershipIsCheckedAtStart() async throws {
        let (url, _) = try await Self.database(Self.railsDDL)
        let broken = Self.ownedMapping
            .replacingOccurrences(of: "(status = 0 AND assignee_id IS NOT NULL)", with: "(status = 0 AND asignee_id IS NOT NULL)")
            .replacingOccurrences(of: #"waiting: status = 0 AND "assignee_id" IS NULL"#, with: "waiting: status + 1")
            .replacingOccurrences(of: "handoff: {status: 0}", with: "handoff: {status: open, team: 2}")
        let problems = try await Self.problems(url, try Self.mapping(broken))
        #expect(problems == [
            "app.yaml:9:23: error: [invalid-value] 'open' is not a value of column 'status' of 'conversations' (integer): "
                + "invalid input syntax for type integer: \"open\"",
            "app.yaml:9:35: error: [missing-column] table 'conversations' has no column 'team'",
            "app.yaml:7:43: error: [invalid-condition] 'conversations.ownership.agent' does not work on 'conversations': "
                + "column \"asignee_id\" does not exist",
            "app.yaml:8:14: error: [invalid-condition] 'conversations.ownership.waiting' does not work on 'conversations': "
                + "argument of WHERE must be type boolean, not type integer",
        ], "\(problems)")
    }

    /// The row filter (`where`): a private note is neither read nor a takeover — a reply to the
    /// message before it is written — and an activity row (no sender, `message_type` 2) is not
    /// read; an agent's public message is. With `intake: trigger` the trigger tests it too.
    @Test func aRowFilterKeepsNotesAndActivityOut() async throws {
        let (url, sql) = try await Self.database(Self.railsDDL)
        let mapping = try Self.mapping(Self.railsMapping(write: """
              where: private = false AND message_type IN (0, 1)
              write: {account_id: conversation.account_id, inbox_id: conversation.inbox_id, message_type: 1, updated_at: now(), sender_id: 1}
            """).replacingOccurrences(of: "intake: poll", with: "intake: trigger"))
        let store = try await PostgresStore(url: url, mapping: mapping)
        func row(_ sender: String, _ type: Int, _ text: String, private p: Bool = false) throws {
            _ = try sql("""
                INSERT INTO messages (content, account_id, inbox_id, conversation_id, message_type, private, created_at, updated_at, sender_type)
                VALUES ('\(text)', 3, 5, 1, \(type), \(p), now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', \(sender))
                """)
        }
        try row("'Contact'", 0, "hello")
        try row("'User'", 1, "looks like a refund", private: true)
        try row("NULL", 2, "Conversation was marked resolved")
        let read = try await store.pending(bot: Self.bot.id, after: 0, limit: 10)
        #expect(read.map(\.text) == ["hello"])
        #expect(try await store.commit(ConformanceSuite.sampleCommit(read[0], after: nil, reply: "hi")) == .committed,
                "a private note after the message is no agent's reply")
        try row("'User'", 1, "Ana here")
        #expect(try await store.pending(bot: Self.bot.id, after: read[0].seq, limit: 10).map { "\($0.from):\($0.text)" } == ["agent:Ana here"])
        #expect(try sql("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'usher_notify_inbound'").contains("private = false"))
        try await store.close()
    }

    /// A database with history: a bot's first start reads nothing written before the store
    /// opened (`now`), and keeps that position across restarts — a later `--from` is reported
    /// and changes nothing; `beginning` reads the history; a time reads from the first
    /// message written at or after it.
    @Test func aFirstStartOnADatabaseWithHistoryAnswersNothingOld() async throws {
        let (url, sql) = try await Self.database(Self.typedDDL)
        let mapping = try Self.mapping(Self.typedMapping)
        _ = try sql("""
            INSERT INTO tickets (subject) VALUES ('old'), ('older');
            INSERT INTO posts (ticket_id, author, body, posted_at) VALUES
                (2, 'customer', 'a month ago', '2026-11-01 10:00:00'), (2, 'robot', 'hi', '2026-11-01 10:00:01'),
                (1, 'customer', 'yesterday', '2026-12-04 10:00:00');
            """)
        let store = try await PostgresStore(url: url, mapping: mapping)
        _ = try sql("INSERT INTO posts (ticket_id, author, body, posted_at) VALUES (1, 'customer', 'now', '2026-12-05 10:00:00')")
        #expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).map(\.text) == ["now"])
        #expect(try await store.cursor(bot: Self.bot.id) == 3)
        let intake = try await store.claimPending(bot: Self.bot.id, after: 0, limit: 10, worker: "w", until: Date().addingTimeInterval(30),
                                                  skipping: [:], share: .all, holds: { _ in false })
        #expect(intake.messages.map(\.text) == ["now"])
        try await store.close()

        // Started again with --from beginning: the bot has its position; the change is reported.
        let warned = Locked<[String]>([])
        var again = PostgresStore.Options()
        again.start = .beginning
        again.warn = { event, fields in warned.withLock { $0.append(event + " " + fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")) } }
        let restarted = try await PostgresStore(url: url, mapping: mapping, options: again)
        #expect(try await restarted.pending(bot: Self.bot.id, after: 0, limit: 10).map(\.text) == ["now"])
        #expect(warned.withLock { $0 } == ["start-ignored bot=conf from=beginning cursor=3 note=the bot has a position in this store already and goes on from it"])
        // Another bot, from the beginning: the history too.
        #expect(try await restarted.pending(bot: "other", after: 0, limit: 10).map(\.text) == ["a month ago", "yesterday", "now"])
        try await restarted.close()

        var fromTime = PostgresStore.Options()
        fromTime.start = StartPosition("2026-12-04")
        let third = try await PostgresStore(url: url, mapping: mapping, options: fromTime)
        #expect(try await third.pending(bot: "third", after: 0, limit: 10).map(\.text) == ["yesterday", "now"])
        try await third.close()
    }

    /// `--from` on Usher's own schema: refused — everything there was written for Usher, and a
    /// start after some of it would leave those messages unanswered.
    @Test func fromIsRefusedForUshersOwnSchema() async throws {
        let url = try await TestDB.server.createDatabase()
        do {
            _ = try await PostgresStore.adapter.open(StoreRequest(url: url, worker: true, start: .beginning))
            Issue.record("--from was taken for the native schema")
        } catch let e as StoreError {
            #expect(e.code == "from" && e.message.hasPrefix("--from beginning applies to an application's own tables (--mapping FILE)"))
        }
    }
}
