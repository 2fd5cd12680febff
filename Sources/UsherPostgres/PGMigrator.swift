import UsherJSON
import UsherSQLMapping
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
        // Likewise CREATE TABLE IF NOT EXISTS needs CREATE on the schema even when the table is
        // there: a role that only reads and writes Usher's tables opens the store too.
        if try db.execute("SELECT to_regclass($1) IS NULL", ["\(u).schema_version"]).bool(0, 0) {
            try db.script("""
                CREATE TABLE \(u).schema_version (
                    version     integer PRIMARY KEY,
                    description text NOT NULL,
                    applied_at  timestamptz NOT NULL DEFAULT now()
                );
                """)
        }
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
        if layout.trigger { try installTrigger(db, layout) }
    }

    /// Whether the native messages table has the quick replies column: migration 6 adds it
    /// only when Usher's role owns the table.
    static func hasQuickReplies(_ db: PGConnection, _ layout: PGLayout) throws -> Bool {
        guard let column = SQLMapping.native.messages.quickReplies else { return false }
        return try db.execute("""
            SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)
            """, [layout.messages, column]).bool(0, 0)
    }

    /// Installs the NOTIFY trigger (`PGSchema.trigger`) unless it is there already as this
    /// build and this mapping make it: its function tagged with a hash of the text, and every
    /// trigger in place. `CREATE TRIGGER` locks the messages table against inserts (SHARE ROW
    /// EXCLUSIVE): every worker's start would wait for the helpdesk's writes in flight and hold
    /// up the next; and it needs the function's ownership, which a second role opening the store
    /// (`usher send` as the backend's) does not have.
    static func installTrigger(_ db: PGConnection, _ layout: PGLayout) throws {
        let sql = PGSchema.trigger(layout)
        let function = "\(layout.usher).notify_inbound()"
        // The tag: this text's hash, and the functions' source as installed (a function
        // replaced since, by hand or by another build, keeps its comment).
        let tag = "usher trigger " + String(FNV1a.hash(sql), radix: 16) + " "
        let installed = """
            SELECT md5(string_agg(prosrc, '|' ORDER BY proname)) FROM pg_proc
            WHERE oid IN (to_regprocedure($1), to_regprocedure($2))
            """
        let functions = [function, "\(layout.usher).notify_inbound_changed()"]
        let found = try db.execute("""
            SELECT obj_description(to_regprocedure($1), 'pg_proc'), (\(installed)),
                   (SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass($3) AND NOT tgisinternal
                      AND tgname IN ('usher_notify_inbound', 'usher_notify_inbound_changed'))
            """, functions + [layout.messages])
        if let comment = found.text(0, 0), let source = found.text(0, 1), comment == tag + source,
           found.int(0, 2) == (layout.isNative ? 2 : 1) { return }
        try PGSession.transaction(db) {
            try db.script(sql)
            let source = try db.execute(installed, functions).text(0, 0) ?? ""
            try db.script("COMMENT ON FUNCTION \(function) IS \(PGText.literal(tag + source))")
        }
    }

}
