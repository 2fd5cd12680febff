import Foundation
import Testing
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
    }

    @Test(arguments: ["postgres://x", "sqlite:", "sqlite:x.db?synchronous=sometimes", "sqlite:x.db?cache=big"])
    func badURLs(_ url: String) {
        #expect { try SQLiteStore.parse(url: url) } throws: { ($0 as? StoreError)?.code == "bad-url" }
    }
}
