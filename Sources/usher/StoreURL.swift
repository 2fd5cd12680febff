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
    /// `existing`: a SQLite file must be there already (a command that only reads would
    /// otherwise create an empty store at a mistyped path, and report it empty).
    static func open(_ url: String, mapping mappingPath: String? = nil, existing: Bool = false) throws(UsageError) -> any ChatStore {
        let postgres = url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")
        guard url.hasPrefix("sqlite:") || url == "stdio" || url.hasPrefix("stdio:") || postgres else {
            let scheme = url.split(separator: ":").first.map(String.init) ?? url
            throw UsageError("unknown store '\(redacted(url))'; use sqlite:PATH, postgres://… or stdio"
                + (scheme == "redis" ? " (redis is not supported yet)" : ""))
        }
        if existing, url.hasPrefix("sqlite:"), let path = try? SQLiteStore.parse(url: url).path, path != ":memory:",
           !FileManager.default.fileExists(atPath: path) {
            throw UsageError.failure("no store at \(path): nothing has been written there yet; check the path "
                                     + "(usher run and usher send create it)")
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
            } catch let error as StoreError {
                box.error = "\(error)"
                box.unreachable = PGError.isUnreachable(error)
            } catch {
                box.error = "\(error)"
            }
            done.signal()
        }
        done.wait()
        guard let store = box.store else {
            // The store's own message may quote the URL (SQLite's, naming an unknown option).
            var why = (box.error ?? "unknown error").replacingOccurrences(of: url, with: redacted(url))
            if postgres, why.contains("pg-42501") || why.contains("permission denied") {
                why += "\nthe role lacks a right Usher needs here: docs/store-postgres.md, \"A least-privileged role\", "
                    + "lists the grants (the first start creates Usher's schema and tables)"
            }
            var failure = UsageError.failure("cannot open \(redacted(url)): \(why)")
            failure.serverNotUp = box.unreachable
            throw failure
        }
        return store
    }

    /// The URL without its secrets — the user part's password, `password=` and `sslpassword=`
    /// (in the query, or in text that is not a URL at all) — for messages and logs.
    static func redacted(_ url: String) -> String {
        var out = url
        // The password of the user info: after its first ':', up to the last '@' of the
        // authority (a password may hold an '@' that was not percent-encoded).
        if let scheme = out.range(of: "://") {
            let authorityEnd = out[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? out.endIndex
            if let at = out[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
               let colon = out[scheme.upperBound..<at].firstIndex(of: ":") {
                out = String(out[..<colon]) + ":***" + String(out[at...])
            }
        }
        // `password=` and `sslpassword=` (a client key's passphrase), in a URL's query or in
        // keyword=value text, the key kept as written: each at the start or after '?', '&' or a
        // space, its value up to the next '&' or space, or quoted as libpq quotes keyword values.
        let c = Array(out)
        var masked = ""
        var i = 0
        while i < c.count {
            if i == 0 || c[i - 1] == "?" || c[i - 1] == "&" || c[i - 1].isWhitespace, let valueStart = secretValue(c, at: i) {
                masked += String(c[i..<valueStart]) + "***"
                var j = valueStart
                if j < c.count, c[j] == "'" {
                    j += 1
                    while j < c.count, c[j] != "'" { j += c[j] == "\\" ? 2 : 1 }
                    j = min(j + 1, c.count)
                } else {
                    while j < c.count, c[j] != "&", !c[j].isWhitespace { j += 1 }
                }
                i = j
            } else {
                masked.append(c[i])
                i += 1
            }
        }
        return masked
    }

    /// Where the value starts when a secret's key (`password` or `sslpassword`, any case) and
    /// its '=' stand at `i`; else nil.
    private static func secretValue(_ c: [Character], at i: Int) -> Int? {
        for key in ["sslpassword", "password"] where c.count - i >= key.count
            && String(c[i..<i + key.count]).lowercased() == key {
            var j = i + key.count
            while j < c.count, c[j] == " " { j += 1 }
            guard j < c.count, c[j] == "=" else { return nil }
            j += 1
            while j < c.count, c[j] == " " { j += 1 }
            return j
        }
        return nil
    }
}

final class StoreBox: @unchecked Sendable {
    // @unchecked: written by one task before it signals the semaphore the reader waits on.
    var store: (any ChatStore)?
    var error: String?
    /// The open failed because the server is not up yet (`PGError.isUnreachable`).
    var unreachable = false
}
