public import UsherStore
import UsherDiagnostics
import UsherSQLMapping

extension PostgresStore {
    /// `postgres://…` for the `usher` command's registry, with `--mapping FILE`.
    public static let adapter = StoreAdapter(
        schemes: ["postgres", "postgresql"], form: "postgres://USER@HOST/DB",
        help: """
        postgres://USER@HOST/DB — a libpq URL (sslmode=…, host=/socket/dir; the
        password from PGPASSWORD or ~/.pgpass rather than the URL; a 10 s
        connect_timeout and 30 s keepalives unless it sets them); any number of
        workers may share one database (docs/store-postgres.md)
        """,
        options: [StoreAdapter.Option("--mapping", "FILE", help: """
            with postgres: a mapping file naming a helpdesk's own tables, columns and
            values (docs/mapping.md); default: Usher's own schema
            """)],
        readsHistory: true
    ) { request in
        var mapping = SQLMapping.native
        if let path = request.options["--mapping"] {
            let (loaded, diagnostics) = SQLMapping.load(path: path)
            guard let loaded, !diagnostics.hasErrors else {
                throw StoreError("mapping", "the mapping file has errors (usher check \(path) shows them with the source line):\n"
                                 + diagnostics.filter { $0.severity == .error }.map(\.headline).joined(separator: "\n"))
            }
            mapping = loaded
        }
        if let warn = request.warn { PGNotices.route { warn("pg-notice", [("message", $0)]) } }
        // Usher's own schema holds only messages written for Usher: there is no history to
        // start after.
        if let start = request.start, request.options["--mapping"] == nil {
            throw StoreError("from", "--from \(start) applies to an application's own tables (--mapping FILE); Usher's own schema "
                             + "holds only the messages written for it, and it answers every one")
        }
        var options = PostgresStore.Options()
        options.start = request.start
        options.warn = request.warn
        do {
            return try await PostgresStore(url: request.url, mapping: mapping, options: options)
        } catch let error as MappingMismatch {
            throw StoreError("mapping", "the database does not match the mapping file:\n\(error)")
        } catch var error as StoreError where error.code == "pg-42501" || error.message.contains("permission denied") {
            error.message += "\nthe role lacks a right Usher needs here: docs/store-postgres.md, \"A least-privileged role\", "
                + "lists the grants (the first start creates Usher's schema and tables)"
            throw error
        }
    }
}
