import Foundation
import Testing
import UsherEngine
import UsherStore
@testable import UsherSQLite

@Suite("SQLite store: schema and migrations")
struct MigrationTests {
    /// SQLite's schema cookie: bumped by every DDL statement.
    static func schemaCookie(_ path: String) throws -> Int64 {
        let db = try SQLiteConnection(path: path)
        defer { db.close() }
        return try db.integer("PRAGMA schema_version")
    }

    @Test func aNewFileGetsEveryMigration() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        #expect(store.statistics.migrationsApplied == Array(1...SQLiteSchema.latestVersion))
        #expect(try await store.schemaVersion() == SQLiteSchema.latestVersion)
        let mode = try await store.perform { db in try db.text("PRAGMA journal_mode") }
        #expect(mode == "wal")
        let fk = try await store.perform { db in try db.integer("PRAGMA foreign_keys") }
        #expect(fk == 1)
        try await store.close()
    }

    @Test func reopeningAnUpToDateFileChangesNothing() async throws {
        let dir = TempDir()
        let path = dir.path()
        let first = try await SQLiteStore(path: path)
        try await first.append(Fixture.customer("c", "hello"))
        try await first.close()
        let cookie = try Self.schemaCookie(path)

        let again = try await SQLiteStore(path: path)
        #expect(again.statistics.migrationsApplied.isEmpty, "no migration runs on an up-to-date file")
        #expect(try Self.schemaCookie(path) == cookie, "no DDL ran: the schema cookie is unchanged")
        let rows = try await again.perform { db in try db.integer("SELECT count(*) FROM schema_version") }
        #expect(rows == Int64(SQLiteSchema.latestVersion))
        #expect(try await again.transcript(conversation: "c").map(\.text) == ["hello"])
        try await again.close()
    }

    @Test func aFileFromANewerBuildIsRefused() async throws {
        let dir = TempDir()
        let path = dir.path()
        try await SQLiteStore(path: path).close()
        let db = try SQLiteConnection(path: path)
        try db.execute("INSERT INTO schema_version (version, applied_at, description) VALUES (\(SQLiteSchema.latestVersion + 1), 0, 'from the future')")
        db.close()

        await #expect {
            try await SQLiteStore(path: path)
        } throws: { error in
            guard let e = error as? StoreError else { return false }
            return e.code == "schema-too-new" && !e.isTransient
                && e.message.contains("schema version \(SQLiteSchema.latestVersion + 1)")
                && e.message.contains("up to \(SQLiteSchema.latestVersion)") && e.message.contains(path)
        }
    }

    @Test func laterMigrationsApplyInOrderAndKeepTheData() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path)
        try await store.append(Fixture.customer("c", "kept"))
        try await store.close()

        let db = try SQLiteConnection(path: path)
        defer { db.close() }
        let next = SQLiteSchema.migrations + [
            ("conversations get a priority", "ALTER TABLE conversations ADD COLUMN priority INTEGER NOT NULL DEFAULT 0"),
            ("and an index on it", "CREATE INDEX conversations_priority ON conversations (priority)"),
        ]
        let applied = try Migrator.migrate(db, now: Date(), migrations: next)
        #expect(applied == [SQLiteSchema.latestVersion + 1, SQLiteSchema.latestVersion + 2])
        #expect(try Migrator.version(db) == SQLiteSchema.latestVersion + 2)
        #expect(try db.integer("SELECT priority FROM conversations WHERE id = 'c'") == 0)
        #expect(try db.text("SELECT content FROM messages") == "kept")
        #expect(try Migrator.migrate(db, now: Date(), migrations: next).isEmpty, "a second run is a no-op")
    }

    /// A file written at schema version 1 — done marks in `processed`, AUTOINCREMENT sequence
    /// numbers — opens at version 2 with everything in it, and the marks became watermarks.
    @Test func version1MigratesToVersion2KeepingTheData() async throws {
        let dir = TempDir()
        let path = dir.path()
        do {
            let db = try SQLiteConnection(path: path)
            defer { db.close() }
            #expect(try Migrator.migrate(db, now: Date(), migrations: Array(SQLiteSchema.migrations.prefix(1))) == [1])
            var state = ConversationState(conversationID: "c")
            state.version = 2
            state.customerMessages = 2
            let json = StateJSON.encode(state).replacingOccurrences(of: "'", with: "''")
            try db.execute("""
                INSERT INTO conversations (id, customer_id, channel, locale, owner, customer_message_count, created_at, updated_at)
                VALUES ('c', 'u-c', 'web', 'en', 'bot', 2, 10, 20), ('d', NULL, NULL, NULL, 'bot', 0, 30, 30);
                INSERT INTO messages (id, conversation_id, sender_type, sender_id, content, created_at)
                VALUES ('m1', 'c', 'customer', 'u-c', 'one', 10), ('m2', 'c', 'customer', 'u-c', 'two', 11);
                INSERT INTO messages (id, conversation_id, sender_type, sender_id, sender_name, content, created_at, rule_id,
                                      idempotency_key)
                VALUES ('b:m1:0', 'c', 'bot', 'bot:b', 'Bot', 'reply one', 12, 'r', 'b:m1:0'),
                       ('b:m2:0', 'c', 'bot', 'bot:b', 'Bot', 'reply two', 13, 'r', 'b:m2:0');
                INSERT INTO messages (id, conversation_id, sender_type, content, created_at) VALUES ('m3', 'c', 'customer', 'three', 14);
                INSERT INTO messages (id, conversation_id, sender_type, content, created_at) VALUES ('n1', 'd', 'customer', 'new', 30);
                -- m1 and m2 done; the watermark written by an older build lags behind the marks.
                INSERT INTO bot_state (bot, conversation_id, version, owner, last_seq, state, rule_set_version, updated_at)
                VALUES ('b', 'c', 2, 'bot', 1, '\(json)', 'v1', 20);
                INSERT INTO processed (bot, message_id, seq, conversation_id, committed_at)
                VALUES ('b', 'm1', 1, 'c', 12), ('b', 'm2', 2, 'c', 13);
                INSERT INTO cursors (bot, seq) VALUES ('b', 2);
                INSERT INTO notifications (bot, idempotency_key, conversation_id, queue, reason, text, last_message, is_handoff,
                                           created_at)
                VALUES ('b', 'b:m2:1', 'c', 'general', 'threshold', 'waiting', 'two', 1, 13);
                INSERT INTO handoffs (bot, conversation_id, idempotency_key, message_id, queue, reason, waiting_since)
                VALUES ('b', 'c', 'b:m2:handoff', 'm2', 'general', 'threshold', 13);
                """)
        }

        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        #expect(store.statistics.migrationsApplied == Array(2...SQLiteSchema.latestVersion))
        #expect(try await store.schemaVersion() == SQLiteSchema.latestVersion)
        let t = try await store.transcript(conversation: "c")
        #expect(t.map(\.seq) == [1, 2, 3, 4, 5] && t.map(\.id) == ["m1", "m2", "b:m1:0", "b:m2:0", "m3"])
        #expect(t[2].ruleID == "r" && t[2].senderID == "bot:b" && t[2].at == Date(timeIntervalSince1970: 12))
        #expect(try await store.conversation("c")?.customerID == "u-c")
        #expect(try await store.state(bot: "b", conversation: "c")?.version == 2)
        let watermark = try await store.perform { db in
            try db.integer("SELECT last_seq FROM bot_state WHERE bot = 'b' AND conversation_id = 'c'")
        }
        #expect(watermark == 2, "the done marks folded into the watermark")
        #expect(try await store.pending(bot: "b", after: 0, limit: 10).map(\.id) == ["m3", "n1"], "done stays done")
        #expect(try await store.pending(bot: "other", after: 0, limit: 10).map(\.id) == ["m1", "m2", "m3", "n1"])
        #expect(try await store.cursor(bot: "b") == 2)
        #expect(try await store.inbox(bot: "b").map(\.conversationID) == ["c"])
        #expect(try await store.notifications(after: 0, limit: 10).map(\.notification.idempotencyKey) == ["b:m2:1"])
        let (tables, check, foreignKeys) = try await store.perform { db in
            (try db.integer("SELECT count(*) FROM sqlite_master WHERE name IN ('processed', 'conversations_v2', 'messages_v2', 'bot_state_v2')"),
             try db.text("PRAGMA integrity_check"), try db.integer("PRAGMA foreign_keys"))
        }
        #expect(tables == 0 && check == "ok" && foreignKeys == 1)

        // It goes on from there: the next message takes the next sequence number, commits run.
        let m4 = try await store.append(Fixture.customer("c", "four"))
        #expect(m4.seq == 7)
        let m3 = try #require(t.last)
        #expect(try await Fixture.decideAndCommit(store, m4) == .outOfOrder, "m3 first")
        #expect(try await Fixture.decideAndCommit(store, m3) == .committed)
        #expect(try await Fixture.decideAndCommit(store, m3) == .duplicate)
        #expect(try await Fixture.decideAndCommit(store, m4) == .committed)
        try await store.advanceCursor(bot: "b")
        #expect(try await store.cursor(bot: "b") == 5, "just below n1, the oldest message not done")
    }

    /// A file of schema version 2 opens at the latest version: its replies read with no quick replies, and
    /// a reply committed after the migration keeps its own.
    @Test func version2GainsQuickRepliesKeepingTheReplies() async throws {
        let dir = TempDir()
        let path = dir.path()
        do {
            let db = try SQLiteConnection(path: path)
            defer { db.close() }
            #expect(try Migrator.migrate(db, now: Date(), migrations: Array(SQLiteSchema.migrations.prefix(2))) == [1, 2])
            try db.execute("""
                INSERT INTO conversations (id, created_at, updated_at) VALUES ('c', 10, 10);
                INSERT INTO messages (id, conversation_id, sender_type, content, created_at) VALUES ('m1', 'c', 'customer', 'one', 10);
                INSERT INTO messages (id, conversation_id, sender_type, sender_id, content, created_at, rule_id, idempotency_key)
                VALUES ('b:m1:0', 'c', 'bot', 'bot:b', 'reply one', 11, 'r', 'b:m1:0');
                """)
        }
        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        #expect(store.statistics.migrationsApplied == Array(3...SQLiteSchema.latestVersion))
        let m2 = try await store.append(Fixture.customer("d", "two"))
        let offered = [QuickReply(title: "Track my order"), QuickReply(title: "Returns", url: "https://shop.example/returns")]
        var state = ConversationState(conversationID: "d")
        state.version = 1
        let decision = Decision(outcome: .fired(["r"]), effects: [.reply(text: "reply two", rule: "r", quickReplies: offered)],
                                state: state, ruleSetVersion: "v1")
        let bot = BotIdentity(id: "b", name: "Bot", senderID: "bot:b")
        #expect(try await store.commit(Commit(bot: bot, inbound: m2, expectedVersion: 0, decision: decision, at: m2.at)) == .committed)
        let old = try await store.transcript(conversation: "c")
        #expect(old.map(\.text) == ["one", "reply one"] && old.allSatisfy(\.quickReplies.isEmpty))
        let t = try await store.transcript(conversation: "d")
        #expect(t.map(\.text) == ["two", "reply two"])
        #expect(t.map(\.quickReplies) == [[], offered])
        let stored = try await store.perform { db in try db.text("SELECT quick_replies FROM messages WHERE id = 'b:\(m2.id):0'") }
        #expect(stored == #"[{"title":"Track my order"},{"title":"Returns","url":"https://shop.example/returns"}]"#)
    }

    /// A message's idempotency key is its id: unique because the id is, without an index of its own.
    @Test func anIdempotencyKeyIsTheMessageID() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        try await store.append(Fixture.customer("c", "hi"))
        await #expect(throws: StoreError.self) {
            try await store.perform { db in
                try db.execute("""
                    INSERT INTO messages (id, conversation_id, sender_type, content, created_at, idempotency_key)
                    VALUES ('x', 'c', 'bot', 'no', 0, 'y')
                    """)
            }
        }
        let indexes = try await store.perform { db in
            try db.integer("SELECT count(*) FROM pragma_index_list('messages') WHERE \"unique\"")
        }
        #expect(indexes == 1, "one unique index: the id's")
    }

    @Test func aFailingMigrationLeavesTheOldVersion() async throws {
        let dir = TempDir()
        let path = dir.path()
        try await SQLiteStore(path: path).close()
        let db = try SQLiteConnection(path: path)
        defer { db.close() }
        let broken = SQLiteSchema.migrations + [
            ("fine", "CREATE TABLE extra (x INTEGER)"),
            ("broken", "ALTER TABLE no_such_table ADD COLUMN y INTEGER"),
        ]
        #expect(throws: StoreError.self) { try Migrator.migrate(db, now: Date(), migrations: broken) }
        #expect(try Migrator.version(db) == SQLiteSchema.latestVersion, "all or nothing")
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'extra'") == 0)
    }

    @Test(arguments: [
        ("sqlite:usher.db", "usher.db"),
        ("sqlite:/var/lib/usher/usher.db", "/var/lib/usher/usher.db"),
        ("sqlite:///var/lib/usher.db", "/var/lib/usher.db"),
        ("sqlite://rel/usher.db", "rel/usher.db"),
        ("sqlite:my%20db.db", "my db.db"),
    ])
    func urls(_ url: String, _ path: String) throws {
        #expect(try SQLiteStore.parse(url: url).path == path)
    }

    @Test func urlOptions() throws {
        let (path, options) = try SQLiteStore.parse(url: "sqlite:x.db?synchronous=full&busy_timeout_ms=250")
        #expect(path == "x.db")
        #expect(options.synchronous == .full)
        #expect(options.busyTimeout == .milliseconds(250))
        #expect(options.checkpointPages == 4_000)
        #expect(try SQLiteStore.parse(url: "sqlite:x.db?checkpoint_pages=0").options.checkpointPages == 0)
    }

    @Test(arguments: ["postgres://x", "sqlite:", "sqlite:x.db?synchronous=sometimes", "sqlite:x.db?cache=big",
                      "sqlite:x.db?checkpoint_pages=-1"])
    func badURLs(_ url: String) {
        #expect { try SQLiteStore.parse(url: url) } throws: { ($0 as? StoreError)?.code == "bad-url" }
    }
}
