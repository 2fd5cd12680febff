import Dispatch
import Foundation
import UsherDiagnostics
import UsherPostgres
import UsherSQLMapping
import UsherSQLite
import UsherStdio
import UsherStore

/// Store URLs (DESIGN.md §6): `sqlite:PATH` (the default, `sqlite:usher.db`), `stdio` or
/// `stdio:STATE.db`, `postgres://…` / `postgresql://…` (with `--mapping FILE` for a helpdesk's
/// own tables). Secrets come from the URL or the environment and are never printed.
enum StoreURL {
    static let `default` = "sqlite:usher.db"

    /// Opens the store a URL names; a usage error for a URL no adapter understands, a
    /// `StoreFailure` when the store cannot be opened.
    static func open(_ url: String, mapping mappingPath: String? = nil) throws(UsageError) -> any ChatStore {
        let postgres = url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")
        guard url.hasPrefix("sqlite:") || url == "stdio" || url.hasPrefix("stdio:") || postgres else {
            let scheme = url.split(separator: ":").first.map(String.init) ?? url
            throw UsageError("unknown store '\(redacted(url))'; use sqlite:PATH, postgres://… or stdio"
                + (scheme == "redis" ? " (redis is not supported yet)" : ""))
        }
        var mapping = SQLMapping.native
        if let mappingPath {
            guard postgres else { throw UsageError("--mapping applies to postgres:// stores only") }
            let (loaded, diagnostics) = SQLMapping.load(path: mappingPath)
            guard let loaded, !diagnostics.hasErrors else {
                throw UsageError.failure("the mapping file has errors (usher check \(mappingPath) shows them with the source line):\n"
                                 + diagnostics.filter { $0.severity == .error }.map(\.headline).joined(separator: "\n"))
            }
            mapping = loaded
        }
        let box = StoreBox()
        let done = DispatchSemaphore(value: 0)
        let chosen = mapping
        Task.detached {
            do {
                if postgres {
                    box.store = try await PostgresStore(url: url, mapping: chosen)
                } else {
                    box.store = url.hasPrefix("sqlite:") ? try await SQLiteStore.open(url: url) : try await StdioStore.open(url: url)
                }
            } catch let error as PostgresStore.MappingMismatch {
                box.error = "the database does not match the mapping file:\n\(error)"
            } catch {
                box.error = "\(error)"
            }
            done.signal()
        }
        done.wait()
        guard let store = box.store else {
            throw UsageError.failure("cannot open \(redacted(url)): \(box.error ?? "unknown error")")
        }
        return store
    }

    /// The URL without a password (in the user part or a `password=` parameter), for
    /// messages and logs.
    static func redacted(_ url: String) -> String {
        var out = url
        if let at = out.firstIndex(of: "@"), let scheme = out.range(of: "://"), scheme.upperBound < at,
           let colon = out[scheme.upperBound..<at].firstIndex(of: ":") {
            out = String(out[..<colon]) + ":***" + String(out[at...])
        }
        if let query = out.firstIndex(of: "?") {
            let parameters = out[out.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { p in
                p.lowercased().hasPrefix("password=") ? "password=***" : String(p)
            }
            out = String(out[...query]) + parameters.joined(separator: "&")
        }
        return out
    }
}

final class StoreBox: @unchecked Sendable {
    // @unchecked: written by one task before it signals the semaphore the reader waits on.
    var store: (any ChatStore)?
    var error: String?
}
