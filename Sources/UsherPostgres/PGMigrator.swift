import UsherStore

/// Brings Usher's schema up to date under an advisory lock, so that workers starting together
/// migrate once, and (for `intake: trigger`) installs the NOTIFY trigger.
enum PGMigrator {
    /// The advisory lock key: "usher" in ASCII.
    static let lockKey = "504067548530"

    static func migrate(_ db: PGConnection, _ layout: PGLayout) throws {
        let u = layout.usher
        try db.script("SELECT pg_advisory_lock(\(lockKey))")
        defer { if db.isOK { try? db.script("SELECT pg_advisory_unlock(\(lockKey))") } }
        // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema is
        // there: a least-privilege role owns a schema made for it and has no such right.
        if try db.execute("SELECT to_regnamespace($1) IS NULL", [u]).bool(0, 0) {
            try db.script("CREATE SCHEMA \(u)")
        }
        try db.script("""
            CREATE TABLE IF NOT EXISTS \(u).schema_version (
                version     integer PRIMARY KEY,
                description text NOT NULL,
                applied_at  timestamptz NOT NULL DEFAULT now()
            );
            """)
        let current = try db.execute("SELECT coalesce(max(version), 0) FROM \(u).schema_version").int(0, 0)
        let migrations = PGSchema.migrations(layout)
        if current > migrations.count {
            throw StoreError("pg-schema", "the database's Usher schema is version \(current), newer than this build "
                             + "knows (\(migrations.count)); upgrade usher")
        }
        for (i, m) in migrations.enumerated() where i + 1 > current {
            try PGSession.transaction(db) {
                if i == 0, layout.isNative, try db.execute("SELECT to_regclass('messages') IS NULL").bool(0, 0) {
                    try db.script(PGSchema.native)
                }
                if !m.sql.isEmpty { try db.script(m.sql) }
                try db.execute("INSERT INTO \(u).schema_version (version, description) VALUES ($1::int4, $2)",
                               [String(i + 1), m.description])
            }
        }
        if layout.trigger { try db.script(PGSchema.trigger(layout)) }
    }

}
