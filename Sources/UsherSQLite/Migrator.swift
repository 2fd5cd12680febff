import Foundation
import UsherStore

/// Brings a database to `SQLiteSchema.latestVersion` — every missing migration in one write
/// transaction, so a crash leaves the old version or the new one — and refuses a database from a
/// newer build. The `schema_version` table has one row per applied migration.
enum Migrator {
    /// Runs on the connection's thread, at open. Returns the versions applied (empty: nothing to do).
    static func migrate(_ db: SQLiteConnection, now: Date,
                        migrations: [(description: String, sql: String)] = SQLiteSchema.migrations) throws -> [Int] {
        // A read first, so that opening an up-to-date database takes no write lock at all.
        var current = try version(db)
        let latest = migrations.count
        if current > latest { throw StoreError.schemaTooNew(path: db.path, found: current, supported: latest) }
        if current == latest { return [] }

        // Foreign keys off while tables are rebuilt (SQLite's documented procedure for schema
        // changes: dropping a parent table would otherwise check or cascade into its children).
        // The pragma is a no-op inside a transaction, so it goes around it.
        let foreignKeys = try db.integer("PRAGMA foreign_keys")
        if foreignKeys != 0 { try db.execute("PRAGMA foreign_keys = OFF") }
        defer { if foreignKeys != 0 { try? db.execute("PRAGMA foreign_keys = ON") } }

        var applied: [Int] = []
        try db.run(.begin)
        do {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS schema_version (
                    version     INTEGER PRIMARY KEY,
                    applied_at  REAL NOT NULL,
                    description TEXT NOT NULL
                )
                """)
            // Another process may have migrated between the read and the write lock.
            current = Int(try db.integer("SELECT coalesce(max(version), 0) FROM schema_version"))
            if current > latest { throw StoreError.schemaTooNew(path: db.path, found: current, supported: latest) }
            while current < latest {
                let (description, sql) = migrations[current]
                current += 1
                try db.execute(sql)
                let s = try db.statement(sql: "INSERT INTO schema_version (version, applied_at, description) VALUES (?1, ?2, ?3)")
                s.bind(1, current)
                s.bind(2, now)
                s.bind(3, description)
                defer { s.reset() }
                _ = try s.step()
                applied.append(current)
            }
            try db.run(.commit)
        } catch {
            db.rollbackQuietly()
            throw error
        }
        return applied
    }

    /// The schema version of the database (0 for a new file).
    static func version(_ db: SQLiteConnection) throws(StoreError) -> Int {
        let exists = try db.integer(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
        if exists == 0 { return 0 }
        return Int(try db.integer("SELECT coalesce(max(version), 0) FROM schema_version"))
    }
}
