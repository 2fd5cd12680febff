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
                + "(text, from bot.yaml) there: map a text or varchar column",
            "app.yaml:14:14: error: [wrong-column-type] column 'body_no' of 'posts' is integer; Usher keeps the message's text there: "
                + "map a text or varchar column",
            "app.yaml:15:17: error: [wrong-column-type] column 'sent' of 'posts' is timestamp without time zone; Usher keeps when the "
                + "message was written there: map an integer column for 'time: epoch'",
            "app.yaml:10:22: error: [wrong-column-type] column 'ticket_id' of 'posts' is integer and 'uid' of 'tickets' is uuid: "
                + "a message names its conversation by the conversation's id, so the two must compare (both text, both numbers, or the same type)",
            "app.yaml:16:29: error: [invalid-value] 'Contact' is not a value of column 'author' of 'posts' (an enum (author_kind)): "
                + "invalid input value for enum author_kind: \"Contact\"",
            "app.yaml:17:26: error: [invalid-value] '00' reads back from column 'kind' of 'posts' (integer) as '0': "
                + "write '0', the way the column gives it back",
        ], "\(problems)")
    }
}
